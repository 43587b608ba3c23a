"""log_prob called as users call it: input kinds, global modes and model APIs.

Each item calls the framework one way its users do (see :mod:`conformance.contexts`): the
inputs as NumPy arrays or Python numbers beside the framework's own, under a global mode (x64,
torch's default dtype, validation, ``no_grad``), through a transform that traces a parameter or
through NumPyro's ``log_density``. What it must give is the canonical call's: log_prob (or its
sum, for a model's log density) within the log_prob check's tolerance, the traced input's
gradient within the gradient check's, and the dtype the framework's own promotion rules give
for those inputs (each adapter states its rules; docs/conventions.md prints them). A raise is a
failure, unless the framework documents that it does not take an input of that kind (a
declared restriction: then raising passes, and an answer must still be right).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from conformance.adapters.capabilities import CallingContexts
from conformance.check_names import CheckName
from conformance.checks.base import Check, CheckResult, Reproducer, shown
from conformance.checks.grad import SCRIPT_COMPARISON, gradient_constants
from conformance.checks.subject import FrameworkError, Subject
from conformance.compare import compare_arrays, project, tolerance
from conformance.contexts import (
    DENSITY_CALLS,
    GRADIENT_CALLS,
    SUMMED_GRADIENT_CALLS,
    VMAP_SIZE,
    Call,
    InputKind,
)
from conformance.kinds import Kind
from conformance.operations import Operation
from conformance.reproducers.script import Script, array_literal, not_written

if TYPE_CHECKING:
    from conformance.answers.gradients import GradExpectation


class ContextCheck(Check):
    name = CheckName.CONTEXT
    operation = Operation.CONTEXT
    description = (
        "log_prob called as users call it (input kinds, global modes, model APIs): values, "
        "gradient and dtype"
    )

    def evaluate(self, subject: Subject) -> CheckResult:
        context = subject.context
        if context is None:
            return CheckResult(True, skip_reason="no calling context for this item")
        exp = subject.expected
        if exp.log_prob.size == 0:
            return CheckResult(
                True, skip_reason=f"nothing to compare: log_prob shape {exp.log_prob_shape}"
            )
        if not exp.all_valid:
            return CheckResult(
                True, skip_reason="calling contexts are checked on inputs inside the support"
            )
        inputs = subject.inputs
        shape = subject.case_shape
        traced = shape.traced(context.call)
        given = shape.inputs(context, subject.dtype)
        adapter = subject.adapter
        assert isinstance(adapter, CallingContexts), adapter.name
        restricted = {g.name: why for g in given if (why := adapter.context_restriction(g))}
        rules = adapter.context_dtypes(given, context.mode, subject.dtype)
        params = {
            k: subject.of_kind(k, v, context.kind(k)) for k, v in inputs.framework_params().items()
        }
        value = subject.of_kind("value", inputs.framework_value(), context.kind("value"))
        differentiates = context.call in GRADIENT_CALLS and bool(np.isfinite(exp.log_prob).any())
        grad = self._gradient(subject, context.call) if differentiates else None
        cotangent = (
            subject.array(grad.cotangent.astype(subject.dtype))
            if grad is not None and context.call not in SUMMED_GRADIENT_CALLS
            else None
        )
        metrics: dict = {
            "context": context.name,
            "mode": context.mode.value,
            "call": context.call.value,
            "kinds": {g.name: g.kind.value for g in given},
            "traced": list(traced),
            "expected_dtype": rules.result,
        }
        try:
            with subject.framework_call(f"{context.call.value} under mode {context.mode.value}"):
                outcome = adapter.context_call(
                    subject.binding, params, value, context, traced, cotangent, inputs.static
                )
            actual = subject.numpy(outcome.log_prob)
        except FrameworkError as exc:
            if not restricted:
                raise
            metrics["declared_restriction"] = restricted
            metrics["raised"] = str(exc).splitlines()[0][:500]
            return CheckResult(True, metrics=metrics)
        if restricted:
            metrics["declared_restriction"] = restricted
            metrics["answered"] = True  # it took the input all the same: held to the answer
        problems: list[tuple[Kind, str]] = []
        arrays: dict = {}
        expected, tol = self._expected(subject, context.call)
        metrics["dtype"] = actual.dtype.name
        if actual.shape != expected.shape:
            problems.append((Kind.SHAPE, f"result shape {actual.shape}, expected {expected.shape}"))
        else:
            result = compare_arrays(expected, actual.astype(np.float64), tol, subject.dtype)
            metrics.update(result.metrics)
            if not result.ok:
                what = "log density" if context.call in DENSITY_CALLS else "log_prob"
                problems.append((result.kind or Kind.VALUE, f"{what}: {result.detail}"))
                arrays["log_prob"] = {
                    "expected": shown(expected),
                    "actual": shown(actual),
                    "tolerance": shown(tol),
                }
        if grad is not None:
            problems += self._compare_grads(subject, grad, traced, outcome.grads, metrics, arrays)
        if actual.dtype.name != rules.result:
            problems.append(
                (
                    Kind.DTYPE,
                    f"result dtype {actual.dtype.name}, but {adapter.name}'s promotion rules give "
                    f"{rules.result} for these inputs "
                    f"({', '.join(f'{g.name} {g.kind.value} {g.dtype}' for g in given)}; "
                    f"mode {context.mode.value})",
                )
            )
        if not problems:
            return CheckResult(True, metrics=metrics)
        detail = "\n  ".join(f"[{kind}] {text}" for kind, text in problems)
        return self.fail(subject, problems[0][0], detail, metrics, arrays.get("log_prob"))

    @staticmethod
    def _gradient(subject: Subject, call: Call) -> GradExpectation:
        return subject.summed_gradient if call in SUMMED_GRADIENT_CALLS else subject.gradient

    @staticmethod
    def _expected(subject: Subject, call: Call) -> tuple[np.ndarray, np.ndarray]:
        """What the call must return and its tolerance: log_prob's (the log_prob check's),
        summed for a model's log density, stacked for vmap's mapped axis."""
        exp = subject.expected
        tol = subject.declared_tolerance(
            tolerance(subject.dtype, exp.log_prob, exp.sensitivity), exp.log_prob
        )
        if call in DENSITY_CALLS:
            return np.asarray(exp.log_prob.sum()), np.asarray(tol.sum())
        if call is Call.VMAP:
            stack = (VMAP_SIZE, *exp.log_prob.shape)
            return np.broadcast_to(exp.log_prob, stack), np.broadcast_to(tol, stack)
        return exp.log_prob, tol

    @staticmethod
    def _compare_grads(
        subject: Subject,
        grad: GradExpectation,
        traced: tuple[str, ...],
        got: Mapping[str, object],
        metrics: dict,
        arrays: dict,
    ) -> list[tuple[Kind, str]]:
        problems: list[tuple[Kind, str]] = []
        worst = 0.0
        for name in traced:
            structure = grad.structure[name]
            if structure == "none":
                continue
            found = got.get(name)
            if found is None:
                problems.append((Kind.GRAD, f"∂/∂{name}: the framework returned no gradient"))
                continue
            actual = project(
                subject.numpy(found, f"read gradient of {name}").astype(np.float64), structure
            )
            expected, tol, unsure = grad.projected(name)
            tol = subject.declared_tolerance(tol, expected, normwise=True)
            if actual.shape != expected.shape:
                problems.append(
                    (Kind.GRAD, f"∂/∂{name}: shape {actual.shape}, expected {expected.shape}")
                )
                continue
            result = compare_arrays(expected, actual, tol, subject.dtype, unsure)
            worst = max(worst, float(result.metrics.get("max_err_over_tol", 0.0)))
            if not result.ok:
                kind = Kind.NAN if result.kind is Kind.NAN else Kind.GRAD
                problems.append((kind, f"∂/∂{name}: {result.detail}"))
                arrays[name] = {"expected": shown(expected), "actual": shown(actual)}
        metrics["grad_max_err_over_tol"] = worst
        return problems

    def reproducer(self, subject: Subject) -> Reproducer | None:
        """The exact call the item made: each input turned into its kind, the mode switched
        on, the call, then the values, the dtype and the traced gradient compared as the
        check compares them."""
        context = subject.context
        if context is None:
            return None
        traced = subject.case_shape.traced(context.call)
        given = subject.case_shape.inputs(context, subject.dtype)
        adapter = subject.adapter
        assert isinstance(adapter, CallingContexts), adapter.name
        expected_dtype = adapter.context_dtypes(given, context.mode, subject.dtype).result
        differentiates = context.call in GRADIENT_CALLS
        expected, tol = self._expected(subject, context.call)

        def body(script: Script) -> list[str]:
            d = script.dialect
            made = d.context_call(
                {
                    "mode": context.mode,
                    "call_name": context.call,
                    "call": script.call,
                    "arrays": script.arrays,
                    "traced": traced,
                    "vmap_size": VMAP_SIZE,
                }
            )
            if made is None:
                return not_written("calling context")
            kinds = []
            for g in given:
                if g.kind is InputKind.NUMPY:
                    kinds.append(
                        f"{g.name} = {d.to_numpy(g.name)}" + ("[()]" if g.ndim == 0 else "")
                    )
                elif g.kind is InputKind.PYTHON:
                    kinds.append(f"{g.name} = {d.to_numpy(g.name)}.tolist()")
            lines = [
                f"# as the item called it: context {context.name}",
                *kinds,
                *made,
                f"LP = np.asarray({d.to_numpy('lp')})",
                "print('result', LP.dtype.name, LP.shape)",
                "report(LP.shape != EXPECTED_CALL.shape, f'result shape {LP.shape}, expected "
                "{EXPECTED_CALL.shape}')",
                "err = np.abs(LP.astype(np.float64) - EXPECTED_CALL)",
                "err = np.where(np.isnan(err), np.inf, err)",
                "ratio = err_over_tol(err, TOLERANCE_CALL, np.isfinite(EXPECTED_CALL))",
                "report(bool(ratio.size) and float(ratio.max()) > 1, "
                "f'value outside tolerance (worst err/tol {float(ratio.max()):.3g})')",
            ]
            if differentiates:
                lines += [
                    f"GRADS = {{n: (None if g is None else {d.to_numpy('g')}) "
                    "for n, g in grads.items()}",
                    *SCRIPT_COMPARISON,
                ]
            lines.append(
                f"report(LP.dtype.name != {expected_dtype!r}, f'result dtype {{LP.dtype.name}}, "
                f"the promotion rules give {expected_dtype}')"
            )
            return lines

        def constants(script: Script) -> list[str]:
            own = [
                "",
                f"EXPECTED_CALL = {array_literal(np.asarray(expected, dtype=np.float64))}",
                f"TOLERANCE_CALL = {array_literal(np.asarray(tol, dtype=np.float64))}",
            ]
            if not differentiates:
                return own
            return own + gradient_constants(subject, script, self._gradient(subject, context.call))

        return Reproducer(subject, self.name, body, constants)
