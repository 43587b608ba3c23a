"""Op-by-op evaluation where a framework compiles by default (NumPyro under ``jax.jit``).

The other checks evaluate NumPyro compiled, as its users run it; this one runs the case's own
inputs eagerly — shapes and log_prob — where Python branches see concrete values and validation
and warnings happen. Gradients are left to the compiled checks: users take them under
``jax.jit`` (MCMC, SVI), and an eager gradient costs as much as all the compiled items of a case
together, for differences (XLA fusion of the backward pass) the compiled items already see. It is the counterpart of ``jit`` (torch.compile where eager
is the default). When the eager result is wrong but the compiled one is right, the failure kind
is ``eager_only``; when both are wrong it keeps the part's own kind (the compiled items fail too).
"""

from __future__ import annotations

from conformance.check_names import CheckName
from conformance.checks.base import CheckResult, Reproducer
from conformance.checks.composite import CompositeCheck
from conformance.checks.log_prob import LogProbCheck
from conformance.checks.shapes import ShapesCheck
from conformance.checks.subject import Subject
from conformance.kinds import Kind
from conformance.operations import Operation


class EagerCheck(CompositeCheck):
    name = CheckName.EAGER
    operation = Operation.EAGER
    description = "op-by-op shapes and log_prob vs the oracle (where compiled is the default)"

    def __init__(self) -> None:
        self.parts = (ShapesCheck(), LogProbCheck())

    def evaluate(self, subject: Subject) -> CheckResult:
        eager = subject.eagerly()
        result = self.evaluate_parts(eager)
        if result.passed or eager is subject:
            return result
        compiled = self.evaluate_parts(subject)
        if compiled.passed and not compiled.skip_reason:
            note = "compiled (the other items' evaluation) matches the oracle: eager-only"
            return CheckResult(
                False,
                Kind.EAGER_ONLY,
                f"{result.message}\n  {note}",
                result.metrics,
                arrays=result.arrays,
            )
        result.message += "\n  compiled fails too (see the log_prob and grad items)"
        return result

    def reproducer(self, subject: Subject) -> Reproducer | None:
        # The case's own log_prob, op by op.
        return LogProbCheck().reproducer(subject.eagerly())
