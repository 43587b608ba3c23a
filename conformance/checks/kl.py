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
from conformance.registry.kl_pairs import serves
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
        if not serves(adapter.kl_pairs(), case.family, q.family):
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
        if not result.ok:
            arrays = {
                "expected": shown(answer.value),
                "actual": shown(got),
                "tolerance": shown(answer.tolerance),
            }
            return self.fail(subject, result.kind or Kind.VALUE, result.detail, metrics, arrays)
        if not np.all(np.isfinite(answer.value)):
            metrics["gradient"] = "not judged: KL is not finite everywhere"
            return CheckResult(True, metrics=metrics)
        return self._judge_gradient(subject, metrics)

    def _judge_gradient(self, subject: Subject, metrics: dict) -> CheckResult:
        """The gradient of Σ c · KL by each scalar and vector parameter of either side."""
        expected = subject.expectations.kl_gradient(subject.q_binding)
        wrt = list(expected.grads)
        if expected.left_out:
            metrics["not_differentiated"] = expected.left_out
        if not wrt:
            return CheckResult(True, metrics=metrics)
        metrics["differentiated"] = wrt
        found = subject.kl_gradient(wrt, expected.cotangent)
        for name in wrt:
            got, want = found.get(name), expected.grads[name]
            if got is None:  # disconnected: the framework says the gradient is 0
                metrics.setdefault("disconnected", []).append(name)
                got = np.zeros(want.shape, subject.dtype)
            if got.shape != want.shape:
                detail = f"gradient by {name} has shape {got.shape}, expected {want.shape}"
                return self.fail(subject, Kind.GRAD, detail, metrics)
            # Where the oracle finds no derivative (KL at a kink of its support, a step that
            # leaves a domain) the element is not judged, and the record says how many.
            kink = ~np.isfinite(want)
            if np.any(kink):
                metrics.setdefault("no_derivative", {})[name] = int(np.count_nonzero(kink))
                want, got = np.where(kink, 0.0, want), np.where(kink, 0.0, got)
            judged = compare_arrays(want, got, expected.tolerance[name], subject.dtype)
            metrics[f"grad {name}"] = judged.metrics
            if not judged.ok:
                arrays = {
                    "expected": shown(want),
                    "actual": shown(got),
                    "tolerance": shown(expected.tolerance[name]),
                }
                detail = f"gradient by {name}: {judged.detail}"
                return self.fail(subject, Kind.GRAD, detail, metrics, arrays)
        return CheckResult(True, metrics=metrics)

    def reproducer(self, subject: Subject) -> Reproducer:
        answer = subject.expectations.kl(subject.q_binding)
        finite = bool(np.all(np.isfinite(answer.value)))
        gradient = subject.expectations.kl_gradient(subject.q_binding) if finite else None
        wrt = list(gradient.grads) if gradient is not None else []

        def constants(script: Script) -> list[str]:
            lines = [
                f"EXPECTED_KL = {array_literal(answer.value)}  # float64 oracle",
                f"TOLERANCE_KL = {array_literal(answer.tolerance)}",
            ]
            if gradient is not None and wrt:
                ct = gradient.cotangent.astype(script.dtype)
                lines.append(f"CT_KL = {array_literal(ct)}  # the cotangent, as the item's")
                for i, name in enumerate(wrt):
                    lines += [
                        f"EXPECTED_GRAD_{i} = {array_literal(gradient.grads[name])}  # by {name}",
                        f"TOLERANCE_GRAD_{i} = {array_literal(gradient.tolerance[name])}",
                    ]
            return lines

        def body(script: Script) -> list[str]:
            lines = [*script.kl(), *compared("kl", "_KL", (script.dtype,))]
            if gradient is None or not wrt:
                return lines
            names = [_script_name(name) for name in wrt]
            found = script.kl_gradient(names)
            if found is None:
                return lines
            lines += [f"CT_KL = {script.dialect.array('CT_KL')}", *found]
            for i, name in enumerate(wrt):
                expected = f"EXPECTED_GRAD_{i}"
                lines += [
                    f"if grads[{i}] is None:  # disconnected: a gradient of 0",
                    f"    actual = np.zeros({expected}.shape, dtype={script.dtype!r})",
                    "else:",
                    f"    actual = {script.dialect.to_numpy(f'grads[{i}]')}",
                    "if actual.shape == " + expected + ".shape:  # no derivative: not judged",
                    f"    actual = np.where(np.isfinite({expected}), actual, {expected})",
                    *compared(f"gradient by {name}", f"_GRAD_{i}", (script.dtype,)),
                ]
            return lines

        return Reproducer(subject, self.name, body, constants)


def _script_name(name: str) -> str:
    """An input of the gradient (``p:loc``, ``q:scale``) as a reproducer script names it."""
    side, param = name.split(":", 1)
    return param if side == "p" else f"q_{param}"
