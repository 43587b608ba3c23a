"""The oracle's summaries of a case in one dtype, each with its tolerance: what the ``moments``
and ``entropy`` checks read."""

from __future__ import annotations

import numpy as np

from conformance import reference
from conformance.answers.summaries import SummaryAnswer
from conformance.answers.values import Inputs
from conformance.compare import ULPS, eps, tolerance

#: The relative step by which each parameter is moved to see how far a summary moves.
STEP = 1e-6


def summary_answer(
    family: reference.Family, inputs: Inputs, summary: str, options: tuple
) -> SummaryAnswer:
    """``summary`` at the rounded inputs, held within the dtype's tolerance scaled by its
    sensitivity to the parameters (the condition number of the summary's formula)."""
    params = inputs.params
    value = family.summary(summary, params, inputs.parametrization, dict(options))
    moved = np.zeros(value.shape)
    for name in _differentiable(family, inputs):
        up = family.summary(
            summary,
            {**params, name: params[name] * (1 + STEP)},
            inputs.parametrization,
            dict(options),
        )
        down = family.summary(
            summary,
            {**params, name: params[name] * (1 - STEP)},
            inputs.parametrization,
            dict(options),
        )
        with np.errstate(invalid="ignore", over="ignore"):
            slope = np.abs(up - down) / (2 * STEP)
        moved += np.where(np.isfinite(slope), slope, 0.0)
    return SummaryAnswer(summary, value, tolerance(inputs.dtype, value, moved))


def _differentiable(family: reference.Family, inputs: Inputs) -> list[str]:
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
    moved = np.zeros(found.shape)
    moves: list[tuple[dict, np.ndarray, dict, np.ndarray]] = [
        ({**params, n: params[n] * (1 + STEP)}, value, {**params, n: params[n] * (1 - STEP)}, value)
        for n in _differentiable(family, inputs)
    ]
    if not family.value.discrete:
        moves.append((params, value * (1 + STEP), params, value * (1 - STEP)))
    for up_params, up_value, down_params, down_value in moves:
        with np.errstate(invalid="ignore", over="ignore"):
            slope = np.abs(cdf(up_params, up_value) - cdf(down_params, down_value)) / (2 * STEP)
        moved += np.where(np.isfinite(slope), slope, 0.0)
    # Relative, not absolute: F is a probability, and a cdf that loses its tail (F = 1e-12
    # returned as 0) is wrong by all of F however small F is.
    with np.errstate(invalid="ignore"):
        scale = np.where(np.isfinite(found), np.abs(found), 0.0) + moved
    tol = ULPS[inputs.dtype] * eps(inputs.dtype) * scale + np.finfo(inputs.dtype).tiny
    return SummaryAnswer("cdf", found, tol)
