"""A check made of other checks' comparisons on one subject, reported as one item.

A broadcast variant and an eager evaluation each exist to exercise one thing (batch
bookkeeping; op-by-op evaluation) across shapes, log_prob and the gradient; splitting each into
three items would multiply the item count for no extra information — the message and the
metrics still say which part failed.
"""

from __future__ import annotations

from conformance.check_names import CheckName
from conformance.checks.base import Check, CheckResult
from conformance.checks.grad import GradCheck
from conformance.checks.log_prob import LogProbCheck
from conformance.checks.shapes import ShapesCheck
from conformance.checks.subject import FrameworkError, Subject
from conformance.operations import Operation


class CompositeCheck(Check):
    """Shapes, log_prob and the gradient (``jax.grad``/autograd) on one subject."""

    def __init__(self) -> None:
        self.parts: tuple[Check, ...] = (ShapesCheck(), LogProbCheck(), GradCheck(Operation.GRAD))

    @staticmethod
    def _listed(part: Check, subject: Subject) -> bool:
        """Whether the case asks for this part: a case that leaves out its gradient checks
        (a value on the boundary, where log_prob is ±inf or has a kink) leaves them out here."""
        listed = subject.case.spec.checks
        if listed is None:
            return True
        names = (
            {CheckName.GRAD, CheckName.GRAD_FUNCTIONAL}
            if part.name == CheckName.GRAD
            else {part.name}
        )
        return bool(names & set(listed))

    def evaluate(self, subject: Subject) -> CheckResult:
        return self.evaluate_parts(subject)

    def evaluate_parts(self, subject: Subject) -> CheckResult:
        metrics: dict = {"parts": {}}
        failures: list[CheckResult] = []
        skipped: list[str] = []
        # The gradient runs first: a compiled gradient computes log_prob on the way, and the
        # other parts then read it (see conformance.adapters.numpyro.compiled). Results are reported
        # in the parts' own order all the same.
        runnable = [
            p
            for p in self.parts
            if not p.not_applicable(subject.case) and not p.unsupported_by(subject.adapter)
        ]
        listed = [p for p in runnable if self._listed(p, subject)]
        results: dict[CheckName, CheckResult] = {}
        for part in sorted(listed, key=lambda p: not isinstance(p, GradCheck)):
            try:
                results[part.name] = part.evaluate(subject)
            except FrameworkError as exc:
                results[part.name] = part.fail(subject, exc.kind, str(exc))
        for part in runnable:
            if part not in listed:
                skipped.append(f"{part.name}: not among the case's checks")
                continue
            result = results[part.name]
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
        compared = list(metrics["parts"].values())
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
