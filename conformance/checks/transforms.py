"""Transforms: vmap, jit and NumPyro effect handlers, each compared with the oracle.

* ``vmap`` maps the leading log_prob batch axis and, as a second ``in_axes`` variant, the
  trailing one; every input that has the axis is mapped there (a size-1 axis is squeezed and
  broadcast, a missing one is not mapped), so across the cases the parameters alone, the value
  alone, and both get mapped. It also maps the per-slice gradient (vmap of grad). A framework
  that writes in place into an unbatched tensor fails here with its own RuntimeError.
* ``jit`` compiles construction + log_prob (and the gradient) and compares with the oracle; when
  only the compiled result is wrong the failure kind is ``jit_only``.
* ``plate``, ``scan``, ``plate_in_scan`` put a sample site under NumPyro's handlers and check the
  traced distribution's batch shape and its log_prob elementwise (pyro-ppl/numpyro#1971).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from conformance.adapters.capabilities import Compiles, EffectHandlers, Vmaps
from conformance.answers.case import CheckedCase
from conformance.check_names import CheckName
from conformance.checks.base import Check, CheckResult, shown
from conformance.checks.subject import FrameworkError, Subject
from conformance.compare import compare_arrays, project, tolerance
from conformance.kinds import Kind
from conformance.operations import EFFECTS, Operation


def _skip_reason(subject: Subject) -> str | None:
    exp = subject.expected
    if exp.log_prob.size == 0:
        return f"nothing to compare: log_prob shape {exp.log_prob_shape}"
    if not exp.all_valid:
        return "inputs outside the support or domain: transforms are checked on valid inputs"
    return None


class _TransformCheck(Check):
    def _compare_log_prob(
        self, subject: Subject, actual: np.ndarray, expected: np.ndarray, sens: np.ndarray
    ):
        tol = tolerance(subject.dtype, expected, sens)
        return compare_arrays(expected, actual, tol, subject.dtype), tol


# ----- vmap ---------------------------------------------------------------------------------
@dataclass
class _Mapping:
    axis: int  # the log_prob axis mapped
    in_axes: dict[str, int | None]
    value_axis: int | None
    params: dict[str, np.ndarray]  # framework-dtype arrays, size-1 mapped axes squeezed
    value: np.ndarray
    squeezed: dict[str, int]  # input → local axis that was squeezed


def plan_mapping(subject: Subject, axis: int) -> _Mapping:
    """in_axes for mapping log_prob axis ``axis``: each input that has it is mapped there."""
    ranks = subject.event_ranks
    lp = subject.expected.log_prob_shape
    params = subject.inputs.framework_params()
    value = subject.inputs.framework_value()
    in_axes: dict[str, int | None] = {}
    squeezed: dict[str, int] = {}
    out_params: dict[str, np.ndarray] = {}

    def place(name: str, array: np.ndarray, event_rank: int) -> tuple[np.ndarray, int | None]:
        batch_nd = array.ndim - event_rank
        offset = len(lp) - batch_nd
        if axis < offset:
            return array, None
        local = axis - offset
        if array.shape[local] == lp[axis] and lp[axis] != 1:
            return array, local
        squeezed[name] = local
        return np.squeeze(array, axis=local), None

    for name, array in params.items():
        if name in subject.inputs.static:
            out_params[name] = array
            in_axes[name] = None
            continue
        out_params[name], in_axes[name] = place(name, array, ranks[name])
    value, value_axis = place("value", value, ranks["value"])
    return _Mapping(axis, in_axes, value_axis, out_params, value, squeezed)


class VmapCheck(_TransformCheck):
    name = CheckName.VMAP
    operation = Operation.VMAP
    description = "log_prob and its gradient under vmap, over leading and trailing batch axes"

    def not_applicable(self, case: CheckedCase) -> str | None:
        if not case.log_prob_shape or max(case.log_prob_shape) <= 1:
            return "log_prob has no batch axis of size > 1 to map over"
        return None

    def evaluate(self, subject: Subject) -> CheckResult:
        if reason := _skip_reason(subject):
            return CheckResult(True, skip_reason=reason)
        exp = subject.expected
        lp_shape = exp.log_prob_shape
        axes = [a for a in range(len(lp_shape)) if lp_shape[a] > 1]
        modes = {"leading": axes[0]}
        if axes[-1] != axes[0]:
            modes["trailing"] = axes[-1]
        metrics: dict = {"method": subject.adapter.operations[self.operation], "modes": {}}
        problems: list[str] = []
        arrays: dict = {}
        # The gradient first: a compiled vmapped gradient computes the leading mode's log_prob
        # on the way (see conformance.adapters.numpyro.compiled); reported after the modes.
        grad_metrics: dict = {"modes": {}}
        grad_error: FrameworkError | None = None
        try:
            grad_problems = self._vmap_grad(subject, modes["leading"], grad_metrics)
        except FrameworkError as exc:  # raised where it did before: after the log_prob modes
            grad_problems, grad_error = [], exc
        for mode, axis in modes.items():
            plan = plan_mapping(subject, axis)
            params = {k: subject.param(k, v) for k, v in plan.params.items()}
            value = subject.array(plan.value)
            adapter = subject.adapter
            assert isinstance(adapter, Vmaps), adapter.name
            with subject.framework_call(f"vmap log_prob ({mode} axis {axis})"):
                out = adapter.vmap_log_prob(
                    subject.binding, params, value, plan.in_axes, plan.value_axis
                )
            actual = subject.numpy(out)
            expected = np.moveaxis(exp.log_prob, axis, 0)
            sens = np.moveaxis(exp.sensitivity, axis, 0)
            label = f"{mode} axis {axis}: in_axes {plan.in_axes}, value axis {plan.value_axis}"
            metrics["modes"][mode] = {
                "axis": axis,
                "in_axes": plan.in_axes,
                "value_axis": plan.value_axis,
            }
            if actual.shape != expected.shape:
                problems.append(
                    f"{label}: vmapped log_prob shape {actual.shape}, expected {expected.shape}"
                )
                continue
            result, _ = self._compare_log_prob(subject, actual, expected, sens)
            metrics["modes"][mode].update(result.metrics)
            if not result.ok:
                problems.append(f"{label}: {result.detail}")
                arrays[mode] = {"expected": shown(expected), "actual": shown(actual)}
        if grad_error is not None:
            raise grad_error
        problems += grad_problems
        metrics["modes"].update(grad_metrics["modes"])
        metrics["max_err_over_tol"] = max(
            (float(m.get("max_err_over_tol", 0.0)) for m in metrics["modes"].values()), default=0.0
        )
        if problems:
            return self.fail(subject, Kind.VMAP, "\n  ".join(problems), metrics, arrays)
        return CheckResult(True, metrics=metrics)

    def _vmap_grad(self, subject: Subject, axis: int, metrics: dict) -> list[str]:
        grad = subject.gradient
        if not grad.wrt:
            return []
        plan = plan_mapping(subject, axis)
        params = {k: subject.param(k, v) for k, v in plan.params.items()}
        ct = np.moveaxis(grad.cotangent, axis, 0).astype(subject.dtype)
        adapter = subject.adapter
        assert isinstance(adapter, Vmaps), adapter.name
        with subject.framework_call("vmap of the gradient"):
            got = adapter.vmap_vjp(
                subject.binding,
                params,
                subject.array(plan.value),
                subject.array(ct),
                grad.wrt,
                plan.in_axes,
                plan.value_axis,
            )
        problems = []
        worst = 0.0
        for name in grad.wrt:
            stacked = subject.numpy(got[name]).astype(np.float64)
            mapped_axis = plan.value_axis if name == "value" else plan.in_axes.get(name)
            if mapped_axis is not None:
                full = np.moveaxis(stacked, 0, mapped_axis)
            else:
                full = stacked.sum(axis=0)
                if name in plan.squeezed:
                    full = np.expand_dims(full, plan.squeezed[name])
            structure = grad.structure[name]
            if structure == "none":
                continue
            expected, tol, unsure = grad.projected(name)
            if full.shape != expected.shape:
                problems.append(
                    f"vmap of grad: ∂/∂{name} shape {full.shape}, expected {expected.shape}"
                )
                continue
            result = compare_arrays(expected, project(full, structure), tol, subject.dtype, unsure)
            worst = max(worst, float(result.metrics.get("max_err_over_tol", 0.0)))
            if not result.ok:
                problems.append(f"vmap of grad: ∂/∂{name}: {result.detail}")
        metrics["modes"]["grad"] = {"axis": axis, "max_err_over_tol": worst}
        return problems


# ----- jit -----------------------------------------------------------------------------------
class JitCheck(_TransformCheck):
    name = CheckName.JIT
    operation = Operation.JIT
    description = "compiled construction + log_prob (and gradient) vs the oracle and eager"

    def evaluate(self, subject: Subject) -> CheckResult:
        if reason := _skip_reason(subject):
            return CheckResult(True, skip_reason=reason)
        exp = subject.expected
        params, value = subject.params(), subject.value()
        adapter = subject.adapter
        assert isinstance(adapter, Compiles), adapter.name
        method = adapter.operations[self.operation]
        with subject.framework_call(f"log_prob under {method}"):
            compiled = subject.numpy(adapter.jit_log_prob(subject.binding, params, value))
        metrics: dict = {"method": method}
        problems: list[str] = []
        if compiled.shape != exp.log_prob_shape:
            problems.append(
                f"compiled log_prob shape {compiled.shape}, expected {exp.log_prob_shape}"
            )
        else:
            result, _ = self._compare_log_prob(subject, compiled, exp.log_prob, exp.sensitivity)
            metrics.update(result.metrics)
            if not result.ok:
                problems.append(f"compiled log_prob: {result.detail}")
        grad = subject.gradient
        if grad.wrt:
            ct = subject.array(grad.cotangent.astype(subject.dtype))
            with subject.framework_call(f"gradient under {method}"):
                got = adapter.jit_vjp(subject.binding, params, value, ct, grad.wrt)
            for name in grad.wrt:
                structure = grad.structure[name]
                if structure == "none":
                    continue
                actual = project(subject.numpy(got[name]).astype(np.float64), structure)
                expected, tol, unsure = grad.projected(name)
                result = (
                    compare_arrays(expected, actual, tol, subject.dtype, unsure)
                    if actual.shape == expected.shape
                    else None
                )
                if result is None or not result.ok:
                    detail = (
                        result.detail
                        if result
                        else f"shape {actual.shape}, expected {expected.shape}"
                    )
                    problems.append(f"compiled gradient ∂/∂{name}: {detail}")
        if not problems:
            return CheckResult(True, metrics=metrics)
        eager = subject.numpy(subject.log_prob(subject.build()))
        eager_ok = (
            eager.shape == exp.log_prob_shape
            and self._compare_log_prob(subject, eager, exp.log_prob, exp.sensitivity)[0].ok
        )
        kind = Kind.JIT_ONLY if eager_ok else Kind.JIT
        note = (
            "eager log_prob matches the oracle: the failure is compiled-only"
            if eager_ok
            else "eager log_prob fails too (see the log_prob item)"
        )
        return self.fail(subject, kind, "\n  ".join([*problems, note]), metrics)


# ----- NumPyro effect handlers -------------------------------------------------------------
PLATE_SIZE = 3
SCAN_STEPS = 4


class EffectCheck(_TransformCheck):
    """A sample site under ``plate``, ``scan`` or a plate inside a scan."""

    description = "sample site under NumPyro effect handlers: traced batch shape and log_prob"
    operation: Operation  # always one of EFFECTS, and the check is named for it

    def __init__(self, operation: Operation) -> None:
        assert operation in EFFECTS, operation
        self.operation = operation
        self.name = CheckName(operation.value)

    def layout(
        self, batch: tuple[int, ...]
    ) -> tuple[tuple[int, int] | None, int | None, tuple[int, ...]]:
        """(plate (size, dim), scan steps, sample-shape prefix of the site's value)."""
        if self.operation is Operation.PLATE:
            return (PLATE_SIZE, -(len(batch) + 1)), None, (PLATE_SIZE,)
        if self.operation is Operation.SCAN:
            return None, SCAN_STEPS, (SCAN_STEPS,)
        # plate_in_scan: like the report, the plate runs over the leading batch dim when there
        # is one (loc (5, 2) under plate("foo", 5)), else it adds one.
        if batch:
            return (batch[0], -len(batch)), SCAN_STEPS, (SCAN_STEPS,)
        return (PLATE_SIZE, -1), SCAN_STEPS, (SCAN_STEPS, PLATE_SIZE)

    def evaluate(self, subject: Subject) -> CheckResult:
        if reason := _skip_reason(subject):
            return CheckResult(True, skip_reason=reason)
        batch = subject.expected.batch_shape
        plate, steps, prefix = self.layout(batch)
        site = subject.site(self.name, prefix)
        expected, value = site.log_prob, site.value
        site_batch = tuple(expected.shape)
        adapter = subject.adapter
        assert isinstance(adapter, EffectHandlers), adapter.name
        with subject.framework_call(adapter.operations[self.operation]):
            got_batch, lp = adapter.effect_site(
                self.operation,
                subject.binding,
                subject.params(),
                subject.array(value),
                plate,
                steps,
            )
        actual = subject.numpy(lp)
        metrics = {
            "method": subject.adapter.operations[self.operation],
            "plate": list(plate) if plate else None,
            "steps": steps,
            "site_batch_shape": list(got_batch),
            "expected_site_batch_shape": list(site_batch),
        }
        if tuple(got_batch) != site_batch:
            return self.fail(
                subject,
                Kind.SHAPE,
                f"traced site batch shape {tuple(got_batch)}, expected {site_batch} "
                f"(plate {plate}, scan steps {steps})",
                metrics,
            )
        if actual.shape != expected.shape:
            return self.fail(
                subject,
                Kind.SHAPE,
                f"site log_prob shape {actual.shape}, expected {expected.shape}",
                metrics,
            )
        sens = site.sensitivity
        result, tol = self._compare_log_prob(subject, actual, expected, sens)
        metrics.update(result.metrics)
        if not result.ok:
            arrays = {"expected": shown(expected), "actual": shown(actual), "tolerance": shown(tol)}
            return self.fail(subject, result.kind or Kind.VALUE, result.detail, metrics, arrays)
        return CheckResult(True, metrics=metrics)
