"""cdf(value) against the oracle: values, shape (log_prob's) and dtype, where the value is in
the support and the parameters in their domains.

Outside them the framework is held to its declared validation as log_prob is: a validating
framework must raise ValueError; a non-validating one is not judged there (a cdf below or
above the support has no convention the frameworks share).
"""

from __future__ import annotations

import numpy as np

from conformance.check_names import CheckName
from conformance.checks.base import Check, CheckResult, shown
from conformance.checks.subject import FrameworkError, Subject
from conformance.compare import compare_arrays
from conformance.kinds import Kind
from conformance.operations import Operation
from conformance.summaries import CDF


class CdfCheck(Check):
    name = CheckName.CDF
    description = "cdf values vs the float64 oracle"
    operation = Operation.CDF
    methods = (CDF,)

    def evaluate(self, subject: Subject) -> CheckResult:
        exp = subject.expected
        if exp.log_prob.size == 0:
            return CheckResult(
                True, skip_reason=f"nothing to compare: cdf shape {exp.log_prob_shape}"
            )
        if subject.expects_validation_error:
            return self._expect_validation_error(subject)
        answer = subject.expectations.cdf
        got = subject.cdf()
        if got.shape != exp.log_prob_shape:
            return self.fail(
                subject, Kind.SHAPE, f"cdf shape {got.shape}, expected {exp.log_prob_shape}"
            )
        if got.dtype != np.dtype(subject.dtype):
            return self.fail(
                subject, Kind.DTYPE, f"cdf dtype {got.dtype}, expected {subject.dtype}"
            )
        valid = exp.valid
        result = compare_arrays(
            np.where(valid, answer.value, 0.0),
            np.where(valid, got, 0.0),
            answer.tolerance,
            subject.dtype,
        )
        metrics = {**result.metrics, "compared": int(np.count_nonzero(valid))}
        if result.ok:
            return CheckResult(True, metrics=metrics)
        arrays = {
            "expected": shown(answer.value),
            "actual": shown(got),
            "tolerance": shown(answer.tolerance),
        }
        return self.fail(subject, result.kind or Kind.VALUE, result.detail, metrics, arrays)

    def _expect_validation_error(self, subject: Subject) -> CheckResult:
        try:
            got = subject.cdf()
        except FrameworkError as exc:
            if isinstance(exc.exc, ValueError):
                return CheckResult(
                    True, metrics={"validation_error": str(exc).splitlines()[0][:500]}
                )
            return self.fail(subject, Kind.RAISES, f"expected a ValueError from validation; {exc}")
        invalid = int(np.count_nonzero(~subject.expected.valid))
        return self.fail(
            subject,
            Kind.NO_VALIDATION_ERROR,
            f"inputs are outside the support or domain at {invalid} element(s), and "
            f"{subject.adapter.name} declares it raises ValueError for them, but cdf returned "
            f"{got.ravel()[:4].tolist()}… instead of raising ValueError",
        )
