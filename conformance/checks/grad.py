"""Gradients of log_prob against the float64 oracle, parameter by parameter.

Two checks share this code: ``grad`` differentiates the framework's primary way
(torch.autograd, jax.grad) and ``grad_functional`` its functional transform (torch.func.grad,
jax.vjp). Structured matrices are compared in their own terms: the symmetric part for
covariance/precision matrices, the lower triangle for ``scale_tril`` — conventions for the
unused half differ between frameworks and are not errors.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING

import numpy as np

from conformance.adapters.capabilities import Differentiates
from conformance.answers.case import CheckedCase
from conformance.check_names import CheckName
from conformance.checks.base import Check, CheckResult, Reproducer, shown
from conformance.checks.subject import Subject
from conformance.compare import compare_arrays, project
from conformance.kinds import Kind
from conformance.operations import GRADIENTS, Operation
from conformance.reproducers.script import array_literal

if TYPE_CHECKING:
    from conformance.answers.gradients import GradExpectation
    from conformance.reproducers.script import Script

_STRUCTURE_WORDS = {
    "symmetric": "symmetric part",
    "off_diagonal_symmetric": "symmetric part off the diagonal",
    "lower_triangular": "lower triangle",
    "dense": "all elements",
    "diagonal": "diagonal",
}


class GradCheck(Check):
    description = "∂(cotangent · log_prob)/∂(parameters, value) vs the float64 oracle"
    operation: Operation  # always one: GRAD or GRAD_FUNCTIONAL, and the check is named for it

    def __init__(self, operation: Operation) -> None:
        assert operation in GRADIENTS, operation
        self.operation = operation
        self.name = CheckName(operation.value)

    def not_applicable(self, case: CheckedCase) -> str | None:
        if not case.differentiable_inputs:
            return "no differentiable input (every input is integer-valued or static)"
        return None

    def evaluate(self, subject: Subject) -> CheckResult:
        exp = subject.expected
        if exp.log_prob.size == 0:
            return CheckResult(
                True, skip_reason=f"nothing to compare: log_prob shape {exp.log_prob_shape}"
            )
        if not exp.all_valid:
            return CheckResult(
                True,
                skip_reason="inputs outside the support or domain: the gradient is undefined there",
            )
        if not np.isfinite(exp.log_prob).any():
            # E.g. a support end that this binding's declared convention leaves out (NumPyro's
            # open (0, ∞) at x = 0): log_prob is -inf, a constant, with no derivative to judge.
            return CheckResult(
                True,
                skip_reason="log_prob is ±inf at every element (under the binding's declared "
                "conventions): the gradient is undefined there",
            )
        grad = subject.gradient
        adapter = subject.adapter
        assert isinstance(adapter, Differentiates), adapter.name
        method = adapter.operations[self.operation]
        params, value = subject.params(), subject.value()
        cotangent = subject.array(grad.cotangent.astype(subject.dtype))
        with subject.framework_call(f"gradient ({method})"):
            got = adapter.log_prob_vjp(
                subject.binding, params, value, cotangent, grad.wrt, self.operation
            )
        per_param: dict[str, dict] = {}
        failures: list[tuple[float, str, str, dict]] = []
        arrays: dict[str, dict] = {}
        for name in grad.wrt:
            # A binding that reads only part of a matrix (a diagonal operator) is compared there.
            structure = grad.structure[name]
            if structure == "none":  # declared not comparable for this binding (see its note)
                per_param[name] = {"structure": "none", "compared": 0, "note": subject.binding.note}
                continue
            expected, tol, unsure = grad.projected(name)
            label = f"∂/∂{name} ({_STRUCTURE_WORDS.get(structure, structure)})"
            if got.get(name) is None:
                per_param[name] = {"structure": structure, "missing": True}
                failures.append(
                    (np.inf, name, f"{label}: the framework returned no gradient (None)", {})
                )
                continue
            actual = project(
                subject.numpy(got[name], f"read gradient of {name}").astype(np.float64), structure
            )
            if actual.shape != expected.shape:
                per_param[name] = {"structure": structure, "shape": list(actual.shape)}
                failures.append(
                    (
                        np.inf,
                        name,
                        f"{label}: gradient shape {actual.shape}, expected {expected.shape}",
                        {},
                    )
                )
                continue
            tol = subject.declared_tolerance(tol, expected, normwise=True)
            result = compare_arrays(expected, actual, tol, subject.dtype, unsure)
            per_param[name] = {"structure": structure, **result.metrics}
            if not result.ok:
                undefined = int(np.count_nonzero(np.isnan(expected) & ~np.isnan(actual)))
                hint = (
                    f"; the oracle's derivative does not exist at {undefined} of these elements "
                    f"(NaN): a case at such a point lists the other inputs in grad_wrt"
                    if undefined
                    else ""
                )
                failures.append(
                    (
                        result.metrics.get("max_err_over_tol", np.inf),
                        name,
                        f"{label}: {result.detail}{hint}",
                        result.metrics,
                    )
                )
                arrays[name] = {
                    "expected": shown(expected),
                    "actual": shown(actual),
                    "tolerance": shown(tol),
                }
        if not failures and not any(p.get("compared") for p in per_param.values()):
            return CheckResult(True, skip_reason="no gradient this binding declares comparable")
        metrics = {
            **(
                {"declared_tolerance": dict(subject.binding.tolerance)}
                if subject.binding.tolerance
                else {}
            ),
            "method": method,
            "wrt": list(grad.wrt),
            "params": per_param,
            "compared": int(sum(p.get("compared", 0) for p in per_param.values())),
            # Over what was compared: a part declared not comparable has no error at all; a
            # missing or misshapen gradient is infinitely wrong.
            "max_err_over_tol": max(
                (
                    float(p.get("max_err_over_tol", np.inf))
                    for p in per_param.values()
                    if p.get("structure") != "none"
                ),
                default=0.0,
            ),
        }
        if not failures:
            return CheckResult(True, metrics=metrics)
        failures.sort(key=lambda f: -f[0])
        worst = failures[0]
        metrics.update({k: v for k, v in worst[3].items() if k != "compared"})
        metrics["worst_param"] = worst[1]
        detail = f"method {method}; " + "\n  ".join(f[2] for f in failures)
        kind = (
            Kind.NAN
            if worst[3].get("actual_at_worst") != worst[3].get("actual_at_worst")
            else Kind.GRAD
        )
        return self.fail(
            subject, kind if worst[0] != np.inf or worst[3] else Kind.GRAD, detail, metrics, arrays
        )

    def reproducer(self, subject: Subject) -> Reproducer:
        def body(script: Script) -> list[str]:
            d = script.dialect
            return [
                *script.gradient(self.name, subject.gradient.wrt),
                f"GRADS = {{n: (None if g is None else {d.to_numpy('g')}) "
                f"for n, g in zip({list(subject.gradient.wrt)!r}, grads, strict=True)}}",
                *SCRIPT_COMPARISON,
            ]

        return Reproducer(
            subject, self.name, body, lambda script: gradient_constants(subject, script)
        )


def gradient_constants(
    subject: Subject, script: Script, grad: GradExpectation | None = None
) -> list[str]:
    """The fixed cotangent, the oracle's projected gradients and their tolerances: the
    subject's own (or ``grad``'s), so the script judges with exactly the numbers the check
    judged with."""
    grad = subject.gradient if grad is None else grad
    compared = grad.compared()

    def tolerance_of(n: str) -> np.ndarray:
        expected, tol, _ = grad.projected(n)
        return subject.declared_tolerance(tol, expected, normwise=True)

    return [
        "",
        "",
        # The comparison's own projection, as source: one rule, stated once.
        *inspect.getsource(project).rstrip("\n").splitlines(),
        "",
        "",
        f"STRUCTURE = {grad.structure!r}",
        f"CT = {script.dialect.array(array_literal(grad.cotangent.astype(subject.dtype)))}  # cotangent",
        "EXPECTED_GRAD = {",
        *(f"    {n!r}: {array_literal(grad.projected(n)[0])}," for n in compared),
        "}",
        "TOLERANCE_GRAD = {",
        *(f"    {n!r}: {array_literal(tolerance_of(n))}," for n in compared),
        "}",
    ]


#: The script's comparison of ``GRADS`` with ``EXPECTED_GRAD``, as :meth:`GradCheck.evaluate`
#: judges them.
SCRIPT_COMPARISON = [
    "worst_ratio = 0.0",
    "for name, got in GRADS.items():",
    "    if STRUCTURE[name] == 'none':  # declared not comparable for this binding",
    "        continue",
    "    if got is None:",
    "        report(True, f'no gradient for {name} (None)')",
    "    got = project(np.asarray(got, dtype=np.float64), STRUCTURE[name])",
    "    exp = EXPECTED_GRAD[name]",
    "    # A non-finite gradient must match exactly; NaN is never within tolerance.",
    "    err = np.where(np.isfinite(exp), np.abs(got - exp), np.where(got == exp, 0.0, np.inf))",
    "    err = np.where(np.isnan(err), np.inf, err)",
    "    ratio = err_over_tol(err, TOLERANCE_GRAD[name], np.isfinite(exp))",
    "    worst = np.unravel_index(int(np.argmax(ratio)), ratio.shape) if ratio.size else ()",
    "    print(f'd/d{name} ({STRUCTURE[name]}): max abs err {float(err.max()) if err.size else 0.0:.3g}',",
    "          'worst', worst, 'expected', EXPECTED_GRAD[name][worst] if ratio.size else None,",
    "          'actual', got[worst] if ratio.size else None)",
    "    worst_ratio = max(worst_ratio, float(ratio.max()) if ratio.size else 0.0)",
    "report(worst_ratio > 1, f'gradient outside tolerance (worst err/tol {worst_ratio:.3g})')",
]
