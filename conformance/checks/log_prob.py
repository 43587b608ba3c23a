"""log_prob values, elementwise, against the float64 oracle with a dtype-aware tolerance.

Where the oracle marks elements invalid (value outside the support, or a parameter outside its
domain), the framework is held to its declared behaviour: a validating framework must raise a
ValueError; a non-validating one must return -inf or NaN there, and match everywhere else.
"""

from __future__ import annotations

import numpy as np

from conformance.checks.base import Check, CheckResult, shown
from conformance.checks.subject import FrameworkError, Subject
from conformance.compare import compare_arrays, tolerance


class LogProbCheck(Check):
    name = "log_prob"
    description = "log_prob values vs the float64 oracle"

    def evaluate(self, subject: Subject) -> CheckResult:
        exp = subject.expected
        if exp.log_prob.size == 0:
            return CheckResult(
                True, skip_reason=f"nothing to compare: log_prob shape {exp.log_prob_shape}"
            )
        if subject.expects_validation_error:
            return self._expect_validation_error(subject)
        lp = subject.numpy(subject.log_prob(subject.build()))
        if lp.shape != exp.log_prob_shape:
            return self.fail(
                subject,
                "shape",
                f"log_prob shape {lp.shape}, expected {exp.log_prob_shape}; values not compared",
            )
        metrics: dict = {}
        valid = exp.valid
        if not exp.all_valid:
            answered = np.isnan(lp) | (lp == -np.inf)
            wrong = ~valid & ~answered
            metrics["invalid_elements"] = int(np.count_nonzero(~valid))
            if np.any(wrong):
                idx = tuple(int(i) for i in np.argwhere(wrong)[0])
                return self.fail(
                    subject,
                    "support",
                    f"{int(np.count_nonzero(wrong))} element(s) outside the support or domain got a "
                    f"finite log_prob (declared behaviour without validation: -inf or nan); first at "
                    f"index {idx}: {lp[idx]!r}",
                    metrics,
                )
        tol = subject.declared_tolerance(
            tolerance(subject.dtype, exp.log_prob, exp.sensitivity), exp.log_prob
        )
        if subject.binding.tolerance:
            metrics["declared_tolerance"] = dict(subject.binding.tolerance)
        expected = np.where(valid, exp.log_prob, 0.0)
        actual = np.where(valid, lp, 0.0)
        result = compare_arrays(expected, actual, tol, subject.dtype)
        metrics.update(result.metrics)
        if not exp.all_valid:
            metrics["compared"] = int(np.count_nonzero(valid))
        if result.ok:
            return CheckResult(True, metrics=metrics)
        arrays = {"expected": shown(exp.log_prob), "actual": shown(lp), "tolerance": shown(tol)}
        return self.fail(subject, result.kind or "value", result.detail, metrics, arrays)

    def _expect_validation_error(self, subject: Subject) -> CheckResult:
        invalid = np.argwhere(~subject.expected.valid)
        where = tuple(int(i) for i in invalid[0]) if invalid.size else ()
        try:
            lp = subject.numpy(subject.log_prob(subject.build()))
        except FrameworkError as exc:
            if isinstance(exc.exc, ValueError):
                return CheckResult(
                    True, metrics={"validation_error": str(exc).splitlines()[0][:500]}
                )
            return self.fail(subject, "raises", f"expected a ValueError from validation; {exc}")
        return self.fail(
            subject,
            "no_validation_error",
            f"inputs are outside the support or domain at {len(invalid)} element(s) (first {where}), "
            f"and {subject.adapter.name} declares it raises ValueError for them, but log_prob returned "
            f"{np.asarray(lp).ravel()[:4].tolist()}… instead of raising ValueError",
        )
