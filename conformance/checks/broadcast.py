"""One item per broadcast variant: its shapes, log_prob values and gradient together.

A variant exists to exercise batch bookkeeping (see :mod:`conformance.variants`); splitting it
into three items would triple the item count of the largest part of the suite for no extra
information — the message and the metrics still say which part failed.
"""

from __future__ import annotations

from conformance.checks.base import Check, CheckResult
from conformance.checks.grad import GradCheck
from conformance.checks.log_prob import LogProbCheck
from conformance.checks.shapes import ShapesCheck
from conformance.operations import Operation
from conformance.subject import FrameworkError, Subject


class BroadcastCheck(Check):
    name = "broadcast"
    description = "a broadcast variant's shapes, log_prob and gradient vs the oracle"

    def __init__(self) -> None:
        self.parts: tuple[Check, ...] = (ShapesCheck(), LogProbCheck(), GradCheck(Operation.GRAD))

    @staticmethod
    def _listed(part: Check, subject: Subject) -> bool:
        """Whether the base case asks for this part: a case that leaves out its gradient checks
        (a value on the boundary, where log_prob is ±inf or has a kink) leaves them out of its
        variants too."""
        listed = subject.case.spec.checks
        if listed is None:
            return True
        names = {"grad", "grad_functional"} if part.name == "grad" else {part.name}
        return bool(names & set(listed))

    def evaluate(self, subject: Subject) -> CheckResult:
        metrics: dict = {"parts": {}}
        failures: list[CheckResult] = []
        skipped: list[str] = []
        for part in self.parts:
            if part.not_applicable(subject.case) or part.unsupported_by(subject.adapter):
                continue
            if not self._listed(part, subject):
                skipped.append(f"{part.name}: not among the case's checks")
                continue
            try:
                result = part.evaluate(subject)
            except FrameworkError as exc:
                result = part.fail(subject, exc.kind, str(exc))
            if result.skip_reason:
                skipped.append(f"{part.name}: {result.skip_reason}")
                continue
            metrics["parts"][part.name] = {
                "passed": result.passed,
                "kind": result.kind,
                **result.metrics,
            }
            if not result.passed:
                failures.append(result)
        if skipped:
            metrics["not_compared"] = skipped
        compared = [p for p in metrics["parts"].values()]
        if not compared:
            return CheckResult(True, skip_reason="; ".join(skipped) or "nothing to compare")
        metrics["max_err_over_tol"] = max(
            float(p.get("max_err_over_tol", 0.0) or 0.0) for p in compared
        )
        metrics["compared"] = sum(int(p.get("compared", 0) or 0) for p in compared)
        if not failures:
            return CheckResult(True, metrics=metrics)
        first = failures[0]
        message = "\n".join(f.message for f in failures)
        return CheckResult(False, first.kind, message, metrics, arrays=first.arrays)
