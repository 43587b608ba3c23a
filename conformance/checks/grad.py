"""Gradients of log_prob against the float64 oracle, parameter by parameter.

Two checks share this code: ``grad`` differentiates the framework's primary way
(torch.autograd, jax.grad) and ``grad_functional`` its functional transform (torch.func.grad,
jax.vjp). Structured matrices are compared in their own terms: the symmetric part for
covariance/precision matrices, the lower triangle for ``scale_tril`` — conventions for the
unused half differ between frameworks and are not errors.
"""

from __future__ import annotations

import numpy as np

from conformance.cases.loader import Case
from conformance.checks.base import Check, CheckResult, shown
from conformance.checks.subject import Subject
from conformance.compare import compare_arrays, project
from conformance.operations import Operation

_STRUCTURE_WORDS = {
    "symmetric": "symmetric part",
    "off_diagonal_symmetric": "symmetric part off the diagonal",
    "lower_triangular": "lower triangle",
    "dense": "all elements",
    "diagonal": "diagonal",
}


class GradCheck(Check):
    description = "∂(cotangent · log_prob)/∂(parameters, value) vs the float64 oracle"

    def __init__(self, operation: Operation) -> None:
        self.operation = operation
        self.name = str(operation)  # type: ignore[misc]

    def not_applicable(self, case: Case) -> str | None:
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
        method = subject.adapter.operations[self.operation]
        params, value = subject.params(), subject.value()
        cotangent = subject.array(grad.cotangent.astype(subject.dtype))
        with subject.framework_call(f"gradient ({method})"):
            got = subject.adapter.log_prob_vjp(
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
            "nan" if worst[3].get("actual_at_worst") != worst[3].get("actual_at_worst") else "grad"
        )
        return self.fail(
            subject, kind if worst[0] != np.inf or worst[3] else "grad", detail, metrics, arrays
        )
