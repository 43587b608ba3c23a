"""log_prob values, elementwise, against the float64 oracle with a dtype-aware tolerance.

Where the oracle marks elements invalid (value outside the support, or a parameter outside its
domain), the framework is held to its declared behaviour: a validating framework must raise a
ValueError; a non-validating one must return -inf or NaN there, and match everywhere else.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from conformance.check_names import CheckName
from conformance.checks.base import Check, CheckResult, Reproducer, shown
from conformance.checks.subject import FrameworkError, Subject
from conformance.compare import compare_arrays, tolerance
from conformance.kinds import Kind

if TYPE_CHECKING:
    from conformance.reproducers.script import Script


class LogProbCheck(Check):
    name = CheckName.LOG_PROB
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
                Kind.SHAPE,
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
                    Kind.SUPPORT,
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
        return self.fail(subject, result.kind or Kind.VALUE, result.detail, metrics, arrays)

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
            return self.fail(subject, Kind.RAISES, f"expected a ValueError from validation; {exc}")
        return self.fail(
            subject,
            Kind.NO_VALIDATION_ERROR,
            f"inputs are outside the support or domain at {len(invalid)} element(s) (first {where}), "
            f"and {subject.adapter.name} declares it raises ValueError for them, but log_prob returned "
            f"{np.asarray(lp).ravel()[:4].tolist()}… instead of raising ValueError",
        )

    def reproducer(self, subject: Subject) -> Reproducer:
        return Reproducer(subject, self.name, _script_body)


def _script_body(script: Script) -> list[str]:
    """log_prob against ``EXPECTED`` within ``TOLERANCE``, and the support rule outside
    ``VALID``, as :meth:`LogProbCheck.evaluate` judges them."""
    d = script.dialect
    return [
        *(script.compiled_log_prob() if script.compiled else [f"dist = {script.call}"]),
        f"actual = {d.to_numpy(script.log_prob_expr())}.astype(np.float64)",
        "print('log_prob shape', actual.shape, 'expected', EXPECTED.shape)",
        "if actual.shape != EXPECTED.shape:",
        "    report(True, 'log_prob shape mismatch')",
        "finite = np.isfinite(EXPECTED)",
        "err = np.where(finite, np.abs(actual - EXPECTED), np.where(actual == EXPECTED, 0.0, np.inf))",
        "err = np.where(np.isnan(err), np.inf, err)",
        "outside = (~VALID) & np.isfinite(actual)",
        "if outside.any():",
        "    print('outside the support or domain, finite log_prob at', np.argwhere(outside)[:5].tolist())",
        "report(bool(outside.any()), 'finite log_prob outside the support or domain')",
        "err = np.where(VALID, err, 0.0)  # outside the support: only the support rule applies",
        "ratio = err_over_tol(err, TOLERANCE, finite)",
        "worst = np.unravel_index(int(np.argmax(ratio)), ratio.shape)",
        "print('max abs err', float(err.max()), 'worst index', tuple(int(i) for i in worst))",
        "print('expected', float(EXPECTED[worst]), 'actual', float(actual[worst]), 'tolerance', float(TOLERANCE[worst]))",
        "report(bool(ratio.max() > 1), f'{int((ratio > 1).sum())} of {ratio.size} elements outside tolerance')",
    ]
