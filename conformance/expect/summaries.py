"""The oracle's summaries of a case in one dtype, each with its tolerance: what the ``moments``
and ``entropy`` checks read."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from conformance import reference
from conformance.answers.summaries import IcdfAnswer, SummaryAnswer
from conformance.answers.values import Inputs
from conformance.compare import ULPS, eps, tolerance

#: The relative step by which each parameter is moved to see how far a summary moves.
STEP = 1e-6


def summary_answer(
    family: reference.Family, inputs: Inputs, summary: str, options: tuple
) -> SummaryAnswer:
    """``summary`` at the rounded inputs, held within the dtype's tolerance scaled by its
    sensitivity to the parameters (the condition number of the summary's formula)."""

    def at(params: dict, value: np.ndarray) -> np.ndarray:
        return family.summary(summary, params, inputs.parametrization, dict(options))

    value = at(inputs.params, inputs.value)
    moved = _sensitivity(at, value.shape, family, inputs, with_value=False)
    return SummaryAnswer(summary, value, tolerance(inputs.dtype, value, moved))


def _sensitivity(
    at: Callable[[dict, np.ndarray], np.ndarray],
    shape: tuple[int, ...],
    family: reference.Family,
    inputs: Inputs,
    with_value: bool,
) -> np.ndarray:
    """Σ |∂at/∂log x| over the differentiable parameters (and the value, ``with_value``), by
    central relative steps; a step that leaves a domain counts 0."""
    params, value = inputs.params, inputs.value
    moves = [
        ({**params, n: params[n] * (1 + STEP)}, value, {**params, n: params[n] * (1 - STEP)}, value)
        for n in differentiable(family, inputs)
    ]
    if with_value:
        moves.append((params, value * (1 + STEP), params, value * (1 - STEP)))
    moved = np.zeros(shape)
    for up_params, up_value, down_params, down_value in moves:
        with np.errstate(invalid="ignore", over="ignore"):
            slope = np.abs(at(up_params, up_value) - at(down_params, down_value)) / (2 * STEP)
        moved += np.where(np.isfinite(slope), slope, 0.0)
    return moved


def differentiable(family: reference.Family, inputs: Inputs) -> list[str]:
    """The parameters a relative step moves: float arrays, not counts or static numbers."""
    info = family.params(inputs.parametrization)
    return [
        name
        for name, pinfo in info.items()
        if not pinfo.static
        and pinfo.differentiable
        and inputs.param_dtypes.get(name, "float") == "float"
    ]


def cdf_answer(family: reference.Family, inputs: Inputs, options: tuple) -> SummaryAnswer:
    """F(value) at the rounded inputs (log_prob-shaped, NaN at an invalid parameter), held
    within the dtype's ULPs of |F| plus how far F moves when the value and each parameter move
    by one relative unit."""
    params, value = inputs.params, inputs.value
    opts = dict(options)

    def cdf(p: dict, v: np.ndarray) -> np.ndarray:
        return family.cdf(p, v, inputs.parametrization, opts)

    found = cdf(params, value)
    moved = _sensitivity(cdf, found.shape, family, inputs, with_value=not family.value.discrete)
    # Relative, not absolute: F is a probability, and a cdf that loses its tail (F = 1e-12
    # returned as 0) is wrong by all of F however small F is.
    with np.errstate(invalid="ignore"):
        scale = np.where(np.isfinite(found), np.abs(found), 0.0) + moved
    tol = ULPS[inputs.dtype] * eps(inputs.dtype) * scale + np.finfo(inputs.dtype).tiny
    return SummaryAnswer("cdf", found, tol)


def icdf_answer(
    family: reference.Family, inputs: Inputs, options: tuple, cdf: SummaryAnswer
) -> IcdfAnswer:
    """F⁻¹(q) at q = F(value) rounded to the run's dtype, where the value is inside the support
    and the parameters in their domains (½ elsewhere, not judged): the case's far-tail values
    give tail probabilities. Held relatively, like the cdf: within the dtype's ULPs of |x| plus
    how far x moves when q moves by one relative unit of the nearer of q and 1 − q (dx/dq = 1/f,
    huge in a tail; a framework given q exactly can form 1 − q exactly) and when each parameter
    does. q = 0 and 1 give the support's ends, held exactly."""
    opts = dict(options)
    key = inputs.parametrization
    at = family.evaluate(inputs.params, inputs.value, key, opts)
    judged = np.asarray(at.in_support & at.params_valid)
    q = np.where(judged, cdf.value, 0.5).astype(inputs.dtype).astype(np.float64)
    found = family.icdf(inputs.params, q, key, opts)
    moved, unsure = _quantile_sensitivity(family, inputs, opts, q, found)
    with np.errstate(invalid="ignore"):
        scale = np.where(np.isfinite(found), np.abs(found), 0.0) + moved
    tol = ULPS[inputs.dtype] * eps(inputs.dtype) * scale + np.finfo(inputs.dtype).tiny + unsure
    # icdf(cdf(x)) = x: the framework's cdf may be off by its tolerance, which x inherits
    # through dx/dq = 1/f.
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        through = cdf.tolerance * np.exp(-at.log_prob)
    round_trip = tol + np.where(np.isfinite(through), through, np.inf)
    return IcdfAnswer(q, found, tol, judged, round_trip)


def _quantile_sensitivity(
    family: reference.Family, inputs: Inputs, opts: dict, q: np.ndarray, x: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Σ |∂x/∂log θ| over the differentiable parameters plus min(q, 1 − q)·|∂x/∂q|, by the
    implicit function theorem at x = F⁻¹(q): ∂x/∂θ = −(∂F/∂θ)/f(x) with ∂F/∂θ from central
    relative steps of the oracle's F at fixed x, and ∂x/∂q = 1/f(x), in logs (f underflows in
    a far tail). One inversion, not one per step: a family inverted by bisection costs 64
    CDFs per inversion. 0 at q = 0 and 1 (the support's ends, held exactly).

    Second, how far the oracle's own x may be off, absolutely: where F has no closed-form
    inverse, F's float64 rounding (a few ulps of F, which near 1 is all of 1 − F) over f. The
    oracle is not held tighter than it knows."""
    key, params = inputs.parametrization, inputs.params
    inner = (q > 0.0) & (q < 1.0) & np.isfinite(x)
    at = np.where(inner, x, np.nan)
    with np.errstate(all="ignore"):
        log_f = family.log_prob(params, at, key, opts)
        moved = np.exp(np.log(np.minimum(q, 1.0 - q)) - log_f)
        unsure = np.zeros(np.shape(moved))
        if not family.icdf_closed_form:
            unsure = np.exp(np.log(4 * eps("float64") * np.maximum(q, 1e-300)) - log_f)
        for name in differentiable(family, inputs):
            up = family.cdf({**params, name: params[name] * (1 + STEP)}, at, key, opts)
            down = family.cdf({**params, name: params[name] * (1 - STEP)}, at, key, opts)
            slope = np.exp(np.log(np.abs(up - down) / (2 * STEP)) - log_f)
            moved = moved + np.where(np.isfinite(slope), slope, 0.0)
    keep = inner & np.isfinite(moved)
    return np.where(keep, moved, 0.0), np.where(keep & np.isfinite(unsure), unsure, 0.0)
