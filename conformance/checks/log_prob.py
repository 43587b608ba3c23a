"""log_prob values, elementwise, against the float64 oracle with a dtype-aware tolerance."""

from __future__ import annotations

from conformance.checks.base import Check, CheckResult
from conformance.compare import compare_arrays, tolerance
from conformance.subject import Subject


class LogProbCheck(Check):
    name = "log_prob"
    description = "log_prob values vs the float64 oracle"

    def evaluate(self, subject: Subject) -> CheckResult:
        exp = subject.expected
        if exp.log_prob.size == 0:
            return CheckResult(
                True, skip_reason=f"nothing to compare: log_prob shape {exp.log_prob_shape}"
            )
        lp = subject.numpy(subject.log_prob(subject.build()))
        if lp.shape != exp.log_prob_shape:
            return self.fail(
                subject,
                "shape",
                f"log_prob shape {lp.shape}, expected {exp.log_prob_shape}; values not compared",
            )
        tol = tolerance(subject.dtype, exp.log_prob, exp.sensitivity)
        result = compare_arrays(exp.log_prob, lp, tol)
        if result.ok:
            return CheckResult(True, metrics=result.metrics)
        return self.fail(subject, result.kind or "value", result.detail, result.metrics)
