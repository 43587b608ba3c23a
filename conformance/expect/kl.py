"""The oracle's KL(p‖q) for a KL case in one dtype, with its tolerance: what the ``kl`` check
reads."""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from conformance import reference
from conformance.answers.summaries import GradientAnswer, SummaryAnswer
from conformance.answers.values import Inputs
from conformance.cases.loader import Case
from conformance.compare import ULPS, tolerance
from conformance.dtypes import eps, round_to
from conformance.expect.materialize import inputs_for
from conformance.expect.summaries import STEP, differentiable
from conformance.reference import unbroadcast
from conformance.reference.numdiff import (
    richardson_elementwise_grad,
    richardson_with_halved_step,
    step_scale,
)


def kl_answer(
    p_family: str,
    p: Inputs,
    p_options: tuple,
    q_family: str,
    q: Inputs,
    q_options: tuple,
) -> SummaryAnswer:
    """KL(p‖q) at both sides' rounded parameters, held within the dtype's tolerance scaled by
    how far it moves under a relative step of each differentiable parameter of either side."""

    def at(p_params: dict, q_params: dict) -> np.ndarray:
        return reference.kl_divergence(
            p_family,
            p_params,
            q_family,
            q_params,
            p.parametrization,
            q.parametrization,
            dict(p_options),
            dict(q_options),
        )

    value = at(p.params, q.params)
    moves = [
        (lambda f, n=n: ({**p.params, n: p.params[n] * f}, q.params))
        for n in differentiable(reference.get_family(p_family), p)
    ] + [
        (lambda f, n=n: (p.params, {**q.params, n: q.params[n] * f}))
        for n in differentiable(reference.get_family(q_family), q)
    ]
    moved = np.zeros(value.shape)
    for move in moves:
        with np.errstate(invalid="ignore", over="ignore"):
            slope = np.abs(at(*move(1 + STEP)) - at(*move(1 - STEP))) / (2 * STEP)
        moved += np.where(np.isfinite(slope), slope, 0.0)
    return SummaryAnswer("kl", value, tolerance(p.dtype, value, moved))


#: Relative perturbation that measures the gradient's conditioning, and how many draws (one:
#: each draw costs as much as the gradient itself, and the step-halving estimate of the
#: oracle's own error already widens the tolerance where differences lose digits).
PERTURBATION = 1e-5
DRAWS = 1


@dataclass(frozen=True)
class Side:
    """One side of a KL pair as the gradient reads it."""

    family: str
    inputs: Inputs
    options: tuple
    #: The parameters the case may differentiate (not integer-valued, not static).
    differentiable: tuple[str, ...]


@lru_cache(maxsize=256)
def kl_gradient_for(case: Case, dtype: str, p_options: tuple, q_options: tuple) -> GradientAnswer:
    """:func:`kl_gradient` of a KL case in ``dtype``, once per worker for every framework whose
    bindings declare the same options."""
    q = case.kl_q
    assert q is not None, "a KL case's q"
    return kl_gradient(
        Side(case.family, inputs_for(case, dtype), p_options, case.differentiable_parameters),
        Side(q.family, inputs_for(q, dtype), q_options, q.differentiable_parameters),
        f"{case.file}::{case.id}",
    )


def kl_gradient(p: Side, q: Side, seed: str) -> GradientAnswer:
    """∂(Σ c · KL)/∂θ for each scalar or vector parameter θ of either side, by Richardson
    extrapolation of the oracle's closed form, with a cotangent ``c`` drawn from ``seed``.

    Each input's tolerance is ``ulps · eps · (M + F + S)`` as for log_prob's gradient
    (:mod:`conformance.expect.gradients`): the size of the sum forming it, the absolute floor
    carried through the step scale, and the gradient's change under random relative
    perturbations of every parameter. Matrix and simplex parameters are left out, said why.
    """
    sides = {"p": p, "q": q}
    families = {k: reference.get_family(s.family) for k, s in sides.items()}
    infos = {k: families[k].params(s.inputs.parametrization) for k, s in sides.items()}
    batch = tuple(
        np.broadcast_shapes(
            *(
                families[k].batch_shape(s.inputs.params, s.inputs.parametrization)
                for k, s in sides.items()
            )
        )
    )
    wrt, left_out = [], {}
    for k, side in sides.items():
        for name in side.differentiable:
            info = infos[k][name]
            if info.event_rank > 1 or info.domain == "simplex":
                left_out[f"{k}:{name}"] = f"a {'simplex' if info.event_rank <= 1 else 'matrix'}"
                continue
            wrt.append(f"{k}:{name}")
    ct = round_to(
        np.random.default_rng(zlib.crc32(seed.encode())).standard_normal(batch), p.inputs.dtype
    )
    flat = {
        f"{k}:{n}": np.broadcast_to(v, batch + v.shape[v.ndim - infos[k][n].event_rank :])
        for k, s in sides.items()
        for n, v in families[k]
        .params_broadcast_to(s.inputs.params, batch, s.inputs.parametrization)
        .items()
    }

    def kl(arrays: dict[str, np.ndarray]) -> np.ndarray:
        split = {
            k: {n.split(":", 1)[1]: v for n, v in arrays.items() if n.startswith(k + ":")}
            for k in sides
        }
        return reference.kl_divergence(
            p.family,
            split["p"],
            q.family,
            split["q"],
            p.inputs.parametrization,
            q.inputs.parametrization,
            dict(p.options),
            dict(q.options),
        )

    static = {n for n in flat if infos[n[0]][n[2:]].static}

    def many(points: Sequence[dict[str, np.ndarray]]) -> list[np.ndarray]:
        """KL at every point in one call of the oracle, the points stacked on a new batch
        axis: the closed forms are elementwise over the batch, and most of a call's cost is
        checking and broadcasting its parameters."""
        stacked = {
            n: points[0][n] if n in static else np.stack([point[n] for point in points])
            for n in flat
        }
        return list(kl(stacked))

    ranks = {n: infos[n[0]][n[2:]].event_rank for n in flat}
    domains = {n: infos[n[0]][n[2:]].domain for n in flat}
    # The oracle's own error, from a second extrapolation at half the first step: where KL is
    # huge beside its derivative (a scale of 1e6 against 1), rounding in the differences is
    # what limits the oracle, and the tolerance must carry it.
    elementwise, halved = richardson_with_halved_step(kl, flat, ranks, wrt, domains, many)
    shapes = {f"{k}:{n}": np.shape(v) for k, s in sides.items() for n, v in s.inputs.params.items()}
    grads, tolerance = {}, {}
    floats = {n for n in flat if not infos[n[0]][n[2:]].integer and not infos[n[0]][n[2:]].static}
    conditioning = _conditioning(kl, many, flat, ranks, domains, wrt, ct, elementwise, floats)
    for n in wrt:
        signed = ct.reshape(ct.shape + (1,) * ranks[n])
        terms = elementwise[n] * signed
        grads[n] = unbroadcast(terms, shapes[n])
        floor = unbroadcast(
            np.broadcast_to(np.abs(signed) / step_scale(domains[n], flat[n]), flat[n].shape),
            shapes[n],
        )
        total = (
            unbroadcast(np.abs(terms), shapes[n]) + floor + unbroadcast(conditioning[n], shapes[n])
        )
        with np.errstate(invalid="ignore"):
            own = np.nan_to_num(np.abs((halved[n] - elementwise[n]) * signed), nan=0.0)
        tolerance[n] = (
            ULPS[p.inputs.dtype] * eps(p.inputs.dtype) * total
            + 2.0 * unbroadcast(own, shapes[n])
            + np.finfo(np.float64).tiny
        )
    return GradientAnswer(ct, grads, tolerance, left_out)


def _conditioning(
    kl, many, flat, ranks, domains, wrt, ct, elementwise, floats
) -> dict[str, np.ndarray]:
    """max over random relative perturbations of every float input of |Δ(c · ∂KL/∂x)| / δ."""
    rng = np.random.default_rng(20261129)
    worst = {n: np.zeros(flat[n].shape) for n in wrt}
    for _ in range(DRAWS):
        moved_inputs = {
            n: v * (1.0 + PERTURBATION * rng.choice([-1.0, 1.0], size=v.shape))
            for n, v in flat.items()
        }
        try:
            moved = richardson_elementwise_grad(kl, moved_inputs, ranks, wrt, domains, many=many)
        except (ValueError, ArithmeticError, np.linalg.LinAlgError):
            continue
        with np.errstate(invalid="ignore", over="ignore"):
            for n in wrt:
                signed = ct.reshape(ct.shape + (1,) * ranks[n])
                delta = np.abs((moved[n] - elementwise[n]) * signed) / PERTURBATION
                worst[n] = np.maximum(worst[n], np.nan_to_num(delta, nan=0.0, posinf=0.0))
    return worst
