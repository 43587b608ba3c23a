"""What the oracle expects of a gradient, and how far a framework's may stray from it.

The gradient checked is ∂(Σ_b c_b · log_prob_b)/∂x for a fixed random cotangent ``c`` seeded by
the case, so errors that cancel in a plain sum still show. Integer-valued inputs and static
parameters are held constant. Element ``i`` of input ``x`` has tolerance
``ulps · eps · (M_i + S_i + F_i)``. ``M_i = Σ_b |c_b|·|∂log_prob_b/∂x_i|`` is the size of the
sum forming it. ``S_i`` is the gradient's condition number, measured on the oracle by random
relative perturbations. ``F_i = Σ_b |c_b| / scale(x_i)`` carries log_prob's absolute floor
(:mod:`conformance.compare`) to the gradient. Why each term: docs/running.md, "How values are
compared".
"""

from __future__ import annotations

import zlib
from functools import lru_cache

import numpy as np

from conformance import reference, timing
from conformance.answers.gradients import ExpectedGrad
from conformance.cases.loader import Case
from conformance.compare import ULPS, project
from conformance.dtypes import eps, round_to
from conformance.expect.materialize import evaluation_for, inputs_for
from conformance.reference import unbroadcast
from conformance.reference.numdiff import step_scale

#: Relative perturbation used to measure the gradient's conditioning, and how many draws.
PERTURBATION = 1e-5
DRAWS = 3


def differentiable_inputs(case: Case) -> tuple[str, ...]:
    """The inputs a gradient check differentiates (see :attr:`Case.differentiable_inputs`)."""
    return case.differentiable_inputs


def cotangent_for(case: Case, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    seed = zlib.crc32(f"{case.file}::{case.id}".encode())
    ct = np.random.default_rng(seed).standard_normal(shape)
    return round_to(ct, dtype)


def structure_of(case: Case, name: str) -> str:
    family = reference.get_family(case.family)
    if name == "value":
        return family.value.structure
    return family.params(case.parametrization)[name].structure


def binding_structure(binding, name: str, default: str, inputs) -> str:
    """The structure a gradient of ``name`` is compared in for this binding (sized if needed)."""
    structure = binding.structure.get(name, default)
    if structure == "block_diagonal":
        from conformance.adapters.structure import block_size

        return f"block_diagonal:{block_size(np.asarray(inputs.params[name])) or inputs.params[name].shape[-1]}"
    return structure


@lru_cache(maxsize=4096)
@timing.timed("oracle")
def expected_grad_for(
    case: Case, dtype: str, options: tuple = (), summed: bool = False
) -> ExpectedGrad:
    """``summed``: the gradient of log_prob's plain sum (cotangent 1 everywhere), as a model's
    log density takes it, instead of the fixed random cotangent's."""
    family = reference.get_family(case.family)
    inputs = inputs_for(case, dtype)
    evaluation = evaluation_for(case, dtype, options)
    par, opts = inputs.parametrization, dict(options)
    wrt = differentiable_inputs(case)
    lp_shape = evaluation.inputs.lp_shape
    ct = np.ones(lp_shape) if summed else cotangent_for(case, lp_shape, dtype)
    grads_all = evaluation.vjp(ct)
    elementwise = evaluation.gradients
    info = family.params(par)
    structure = {k: structure_of(case, k) for k in wrt}
    grads = {k: project(grads_all[k], structure[k]) for k in wrt}

    conditioning = _conditioning(family, inputs, ct, par, opts, wrt, structure, grads)
    tolerance, indeterminate = {}, {}
    limit = float(np.finfo(dtype).max)
    for k in wrt:
        rank = evaluation.ranks[k]
        target = evaluation.shapes[k]
        signed_ct = ct.reshape(ct.shape + (1,) * rank)
        ct_b = np.abs(signed_ct)
        x_b = evaluation.input(k)
        domain = family.value.support if k == "value" else info[k].domain
        terms = elementwise[k] * signed_ct
        magnitude = unbroadcast(np.abs(terms), target)
        with np.errstate(invalid="ignore"):
            indeterminate[k] = (unbroadcast((terms > limit).astype(float), target) > 0) & (
                unbroadcast((terms < -limit).astype(float), target) > 0
            )
        floor = unbroadcast(np.broadcast_to(ct_b / step_scale(domain, x_b), x_b.shape), target)
        total = project(magnitude + floor, structure[k]) + conditioning[k]
        tolerance[k] = ULPS[dtype] * eps(dtype) * total + np.finfo(np.float64).tiny
    return ExpectedGrad(ct, wrt, grads, tolerance, structure, indeterminate)


def _conditioning(family, inputs, ct, par, opts, wrt, structure, grads) -> dict[str, np.ndarray]:
    """max over random relative perturbations of |g(x(1 + δs)) − g(x)| / δ, per gradient element."""
    rng = np.random.default_rng(20261121)
    info = family.params(par)
    floats = [k for k, p in info.items() if not p.integer and not p.static]
    perturb_value = not family.value.discrete
    worst = {k: np.zeros_like(grads[k]) for k in wrt}
    for _ in range(DRAWS):
        params = dict(inputs.params)
        for k in floats:
            params[k] = perturbed(inputs.params[k], info[k].structure, rng)
        value = (
            perturbed(inputs.value, family.value.structure, rng) if perturb_value else inputs.value
        )
        try:
            moved = family.evaluate(params, value, par, opts).vjp(ct)
        except (ValueError, np.linalg.LinAlgError):
            continue
        with np.errstate(invalid="ignore", over="ignore"):  # inf − inf at a pole: no measure
            for k in wrt:
                delta = np.abs(project(moved[k], structure[k]) - grads[k]) / PERTURBATION
                worst[k] = np.maximum(worst[k], np.nan_to_num(delta, nan=0.0, posinf=0.0))
    return worst


def perturbed(
    x: np.ndarray, structure: str, rng: np.random.Generator, step: float = PERTURBATION
) -> np.ndarray:
    """``x`` moved by ``step`` relative, each element up or down at random (a symmetric
    matrix's mirrored elements alike: it stays symmetric)."""
    signs = rng.choice([-1.0, 1.0], size=np.shape(x))
    if structure == "symmetric":
        signs = np.triu(signs) + np.swapaxes(np.triu(signs, 1), -1, -2)
    return np.asarray(x) * (1.0 + step * signs)
