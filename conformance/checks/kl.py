"""kl_divergence(p, q) against the oracle, for a KL case: value, shape (p's batch shape
broadcast against q's) and dtype, in each framework that registers a rule for the pair.

Where q's support does not cover p's the oracle says +inf, and so must the framework; where
p = q it says 0, held within the dtype's tolerance like every other value.
"""

from __future__ import annotations

import numpy as np

from conformance.adapters.base import Adapter
from conformance.adapters.capabilities import DividesKL
from conformance.answers.case import CheckedCase
from conformance.check_names import CheckName
from conformance.checks.base import Check, CheckResult, Reproducer, shown
from conformance.checks.subject import Subject
from conformance.checks.summaries import compared
from conformance.compare import compare_arrays
from conformance.kinds import Kind
from conformance.operations import Operation
from conformance.registry import Binding
from conformance.reproducers.script import Script, array_literal


class KLCheck(Check):
    name = CheckName.KL
    description = "kl_divergence(p, q) vs the float64 oracle"
    operation = Operation.KL

    def not_applicable(self, case: CheckedCase) -> str | None:
        return None if case.kl_q is not None else "not a KL case"

    def offered(self, case: CheckedCase, adapter: Adapter, binding: Binding) -> str | None:
        """Why ``adapter`` has no item for this KL case (it lacks q's family, or registers no
        rule for the pair), or None."""
        q = case.kl_q
        assert q is not None and isinstance(adapter, DividesKL)
        found = adapter.binding(q.family, q.parametrization)
        if isinstance(found, str):
            return found
        if (case.family, q.family) not in adapter.kl_pairs():
            return f"registers no KL rule for ({case.family}, {q.family})"
        return None

    def evaluate(self, subject: Subject) -> CheckResult:
        answer = subject.expectations.kl(subject.q_binding)
        shape = subject.case.kl_shape
        if answer.value.size == 0:
            return CheckResult(True, skip_reason=f"nothing to compare: KL shape {shape}")
        got = subject.kl()
        if got.shape != shape:
            return self.fail(subject, Kind.SHAPE, f"kl shape {got.shape}, expected {shape}")
        if got.dtype != np.dtype(subject.dtype):
            return self.fail(subject, Kind.DTYPE, f"kl dtype {got.dtype}, expected {subject.dtype}")
        result = compare_arrays(answer.value, got, answer.tolerance, subject.dtype)
        metrics = dict(result.metrics)
        if result.ok:
            return CheckResult(True, metrics=metrics)
        arrays = {
            "expected": shown(answer.value),
            "actual": shown(got),
            "tolerance": shown(answer.tolerance),
        }
        return self.fail(subject, result.kind or Kind.VALUE, result.detail, metrics, arrays)

    def reproducer(self, subject: Subject) -> Reproducer:
        answer = subject.expectations.kl(subject.q_binding)

        def constants(script: Script) -> list[str]:
            return [
                f"EXPECTED_KL = {array_literal(answer.value)}  # float64 oracle",
                f"TOLERANCE_KL = {array_literal(answer.tolerance)}",
            ]

        def body(script: Script) -> list[str]:
            return [
                *script.kl(),
                *compared("kl", "_KL", (script.dtype,)),
            ]

        return Reproducer(subject, self.name, body, constants)
