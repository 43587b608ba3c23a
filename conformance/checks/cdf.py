"""cdf(value) against the oracle: values, shape (log_prob's) and dtype, wherever the parameters
are in their domains.

F is defined for every real value: 0 below the support, 1 above it, so a value outside the
support is held to those. There a NaN passes too (a non-validating framework's answer, as
log_prob's rule allows), and where some input is outside the support or a domain a ValueError
(a validating framework's) passes; elements whose parameters are outside their domains are not
judged.
"""

from __future__ import annotations

import numpy as np

from conformance.check_names import CheckName
from conformance.checks.base import Check, CheckResult, Reproducer, shown
from conformance.checks.subject import FrameworkError, Subject
from conformance.checks.summaries import compared
from conformance.compare import compare_arrays
from conformance.kinds import Kind
from conformance.operations import Operation
from conformance.reproducers.script import Script, array_literal
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
        answer = subject.expectations.cdf
        try:
            got = subject.cdf()
        except FrameworkError as exc:
            if isinstance(exc.exc, ValueError) and not exp.all_valid:
                return CheckResult(
                    True, metrics={"validation_error": str(exc).splitlines()[0][:500]}
                )
            raise
        if got.shape != exp.log_prob_shape:
            return self.fail(
                subject, Kind.SHAPE, f"cdf shape {got.shape}, expected {exp.log_prob_shape}"
            )
        if got.dtype != np.dtype(subject.dtype):
            return self.fail(
                subject, Kind.DTYPE, f"cdf dtype {got.dtype}, expected {subject.dtype}"
            )
        valid = exp.params_valid
        # Outside the support a non-validating framework may answer NaN, as log_prob's rule
        # allows; any number it gives is held to F = 0 or 1.
        unanswered = ~exp.in_support & np.isnan(got)
        judged = valid & ~unanswered
        result = compare_arrays(
            np.where(judged, answer.value, 0.0),
            np.where(judged, got, 0.0),
            answer.tolerance,
            subject.dtype,
        )
        metrics = {**result.metrics, "compared": int(np.count_nonzero(judged))}
        if np.any(unanswered & valid):
            metrics["nan_outside_support"] = int(np.count_nonzero(unanswered & valid))
        if result.ok:
            return CheckResult(True, metrics=metrics)
        arrays = {
            "expected": shown(answer.value),
            "actual": shown(got),
            "tolerance": shown(answer.tolerance),
        }
        return self.fail(subject, result.kind or Kind.VALUE, result.detail, metrics, arrays)

    def reproducer(self, subject: Subject) -> Reproducer:
        answer = subject.expectations.cdf
        valid = subject.expected.params_valid
        expected = np.where(valid, answer.value, 0.0)  # EXPECTED_CDF is 0 where not judged

        def constants(script: Script) -> list[str]:
            return [
                f"EXPECTED_CDF = {array_literal(expected)}  # float64 oracle (0 where not judged)",
                f"TOLERANCE_CDF = {array_literal(answer.tolerance)}",
                f"JUDGED = {array_literal(valid)}  # the parameters in their domains",
                f"OUTSIDE = {array_literal(~subject.expected.in_support)}  # NaN passes there",
            ]

        def body(script: Script) -> list[str]:
            return [
                *script.method("dist.cdf(value)", "cdf", takes_value=True),
                "if actual.shape == JUDGED.shape:  # not judged: an invalid parameter, NaN outside",
                "    judged = JUDGED & ~(OUTSIDE & np.isnan(actual))",
                "    actual = np.where(judged, actual, 0.0)",
                "    EXPECTED_CDF = np.where(judged, EXPECTED_CDF, 0.0)",
                *compared("cdf", "_CDF", (script.dtype,)),
            ]

        return Reproducer(subject, self.name, body, constants)
