"""The oracle's summaries of a case in one dtype, each with its tolerance: what the ``moments``
and ``entropy`` checks read."""

from __future__ import annotations

import numpy as np

from conformance import reference
from conformance.answers.summaries import SummaryAnswer
from conformance.answers.values import Inputs
from conformance.compare import tolerance

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
