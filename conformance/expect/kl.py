"""The oracle's KL(p‖q) for a KL case in one dtype, with its tolerance: what the ``kl`` check
reads."""

from __future__ import annotations

import numpy as np

from conformance import reference
from conformance.answers.summaries import SummaryAnswer
from conformance.answers.values import Inputs
from conformance.compare import tolerance
from conformance.expect.summaries import STEP, differentiable


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
