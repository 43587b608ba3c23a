"""Fresh values for items that need more values than their case lists, kept off the boundaries.

The ``value-lead`` and ``value-batch`` variants and ``plate`` and ``scan`` steps draw values from
the oracle. They test batch semantics, not boundaries, which a case's authors place on purpose.
At an extreme case a raw draw often lands on the boundary, or rounds there in float32. So a draw
is kept only where log_prob and its gradients are finite and within float32's range, at the draw
and at its float32 rounding. That rounding must move log_prob by under one nat, and no element
may round to a float32 subnormal, which XLA on CPU reads as 0. Other positions are redrawn,
then take the case's own value after :data:`ATTEMPTS` tries.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from conformance import reference
from conformance.dtypes import round_to

#: Redraws before a position falls back to the case's own value.
ATTEMPTS = 8
_FLOAT32_MAX = float(np.finfo(np.float32).max)
_FLOAT32_EPS = float(np.finfo(np.float32).eps) / 2  # the relative rounding of a float32 value
_FLOAT32_TINY = float(np.finfo(np.float32).tiny)  # the smallest normal float32


def well_conditioned_draw(
    family: reference.Family,
    params: dict[str, np.ndarray],
    parametrization: str,
    draw: Callable[[], np.ndarray],
    fallback: np.ndarray,
    *,
    integer: bool,
) -> np.ndarray:
    """A value from ``draw()`` whose every position is well-conditioned (see the module doc).

    ``fallback`` (the case's own value) broadcasts to the drawn shape; it fills positions that
    stay ill-conditioned after :data:`ATTEMPTS` redraws.
    """

    def one() -> np.ndarray:
        value = np.asarray(draw(), dtype=np.float64)
        return np.round(value) if integer else value

    event_rank = family.value.event_rank
    value = one()
    for _ in range(ATTEMPTS):
        bad = _ill_conditioned(family, params, value, parametrization, integer)
        if not bad.any():
            return value
        value = np.where(bad.reshape(bad.shape + (1,) * event_rank), one(), value)
    bad = _ill_conditioned(family, params, value, parametrization, integer)
    own = _fitted(np.asarray(fallback, dtype=np.float64), value.shape)
    return np.where(bad.reshape(bad.shape + (1,) * event_rank), own, value)


def _ill_conditioned(
    family: reference.Family,
    params: dict[str, np.ndarray],
    value: np.ndarray,
    parametrization: str,
    integer: bool,
) -> np.ndarray:
    """Per position of ``value``'s batch part: does the oracle leave float32's finite range?"""
    candidates = [value] if integer else [value, round_to(value, "float32")]
    bad: np.ndarray | None = _subnormal_in_float32(family, candidates[-1])
    with np.errstate(all="ignore"):
        for candidate in candidates:
            try:
                evaluation = family.evaluate(params, candidate, parametrization)
                lp, grads = evaluation.log_prob, evaluation.gradients
            except (reference.OracleError, ValueError, ArithmeticError):
                return np.ones(_value_batch(family, value), dtype=bool)
            here = ~_in_range(lp)
            for g in grads.values():
                here |= ~_in_range(g).all(axis=tuple(range(lp.ndim, g.ndim)))
            if "value" in grads:  # rounding the value to float32 must not move log_prob a nat
                g = grads["value"]
                moved = np.abs(g * np.broadcast_to(candidate, g.shape)) * _FLOAT32_EPS
                here |= moved.sum(axis=tuple(range(lp.ndim, g.ndim))) >= 1.0
            bad = here if bad is None else bad | here
    assert bad is not None  # candidates is never empty
    return _reduce_to(bad, _value_batch(family, value))


def _subnormal_in_float32(family: reference.Family, value: np.ndarray) -> np.ndarray | None:
    """Per position of the value's batch part, whether an element is a float32 subnormal (None
    where none is: the usual case, which costs one comparison)."""
    magnitude = np.abs(value)
    subnormal = (magnitude > 0.0) & (magnitude < _FLOAT32_TINY)
    if not subnormal.any():
        return None
    event_rank = family.value.event_rank
    return subnormal.any(axis=tuple(range(subnormal.ndim - event_rank, subnormal.ndim)))


def _fitted(fallback: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``fallback`` broadcast to ``shape``; a case value drawn with its own sample shape ((3, 5)
    against a (4, 5) draw) gives its first sample, leading dim by leading dim, until it fits."""
    while True:
        try:
            return np.broadcast_to(fallback, shape)
        except ValueError:
            if fallback.ndim == 0:
                raise
            fallback = fallback[0]


def _in_range(array: np.ndarray) -> np.ndarray:
    return np.isfinite(array) & (np.abs(array) <= _FLOAT32_MAX)


def _value_batch(family: reference.Family, value: np.ndarray) -> tuple[int, ...]:
    return value.shape[: value.ndim - family.value.event_rank]


def _reduce_to(mask: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``mask`` (log_prob-shaped) reduced with ``any`` onto ``shape``, which broadcasts to it."""
    lead = mask.ndim - len(shape)
    if lead:
        mask = np.asarray(mask.any(axis=tuple(range(lead))))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and mask.shape[i] != 1)
    if axes:
        mask = np.asarray(mask.any(axis=axes, keepdims=True))
    return mask
