"""Whether values lie in a transform's codomain (or domain): the membership tests of
:mod:`reference.domains`, with the transforms' own spaces (bounds given as arrays, the L1
ball, zero sum over several axes, complex numbers, cat and stack of spaces) added."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np

from .. import domains
from .base import Space

#: Spaces the frameworks name apart that are the same set as a space of domains.py.
ALIASES = {
    "softplus_positive": "positive",
    "softplus_lower_cholesky": "lower_cholesky",
    "scaled_unit_lower_cholesky": "lower_cholesky",
}

#: The event dims each named space has of its own (what ``independent`` adds to).
OWN_EVENT_DIM = {
    "simplex": 1,
    "ordered_vector": 1,
    "positive_ordered_vector": 1,
    "l1_ball": 1,
    "lower_cholesky": 2,
    "corr_cholesky": 2,
    "corr_matrix": 2,
    "positive_definite": 2,
    "scaled_unit_lower_cholesky": 2,
    "softplus_lower_cholesky": 2,
}


def _l1_ball(y: np.ndarray) -> np.ndarray:
    return np.all(np.isfinite(y), axis=-1) & (np.abs(y).sum(-1) < 1.0)


def _positive_ordered(y: np.ndarray) -> np.ndarray:
    return domains.contains("ordered_vector", y, 1) & np.all(y > 0, axis=-1)


_OWN: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "l1_ball": _l1_ball,
    "positive_ordered_vector": _positive_ordered,
}


def _reduce(mask: np.ndarray, ndims: int) -> np.ndarray:
    return np.asarray(mask.all(axis=tuple(range(-ndims, 0)))) if ndims > 0 else np.asarray(mask)


def _zero_sum(y: np.ndarray, ndims: int) -> np.ndarray:
    ok = np.all(np.isfinite(y), axis=tuple(range(-ndims, 0))) if ndims else np.isfinite(y)
    scale = np.maximum(np.abs(y).max(axis=tuple(range(-ndims, 0))), 1.0)
    for axis in range(-ndims, 0):
        sums = np.abs(y.sum(axis=axis, keepdims=True))
        worst = sums.max(axis=tuple(range(-ndims, 0)))
        ok = ok & (worst <= 1e-9 * y.shape[axis] * scale)
    return np.asarray(ok)


def _bounded(space: Space, y: np.ndarray) -> np.ndarray:
    ok = np.isfinite(y)
    if space.name in ("greater_than", "interval"):
        ok = ok & (y > space.low if space.name == "greater_than" else y >= space.low)
    if space.name in ("less_than", "interval"):
        ok = ok & (y < space.high if space.name == "less_than" else y <= space.high)
    return _reduce(ok, space.event_dim)


def _joined(space: Space, y: np.ndarray) -> np.ndarray:
    axis = space.dim % y.ndim
    if space.name == "stack":
        slices = [np.take(y, i, axis=axis) for i in range(len(space.parts))]
        event_dims = [space.event_dim - (1 if axis >= y.ndim - space.event_dim else 0)] * len(
            slices
        )
    else:
        edges = np.cumsum((0, *space.lengths))
        slices = [np.take(y, np.arange(a, b), axis=axis) for a, b in itertools.pairwise(edges)]
        event_dims = [space.event_dim] * len(slices)
    results = []
    for part, value, event_dim in zip(space.parts, slices, event_dims, strict=True):
        inner = contains(part.independent(event_dim - part.event_dim), value)
        results.append(inner)
    if axis < y.ndim - space.event_dim:
        join = np.stack if space.name == "stack" else np.concatenate
        return np.asarray(join(results, axis=axis))
    return np.logical_and.reduce(results)


def contains(space: Space, value: np.ndarray) -> np.ndarray:
    """Is each event of ``value`` in ``space``? Shaped like the batch (``value``'s shape
    without the space's event dims)."""
    y = np.asarray(value)
    if space.name == "complex":
        return _reduce(np.isfinite(y), space.event_dim)
    if space.name == "dependent":
        return np.ones(y.shape[: y.ndim - space.event_dim], dtype=bool)
    if space.name in ("cat", "stack"):
        return _joined(space, y)
    y = y.astype(np.float64)
    if space.name in ("greater_than", "less_than", "interval"):
        return _bounded(space, y)
    if space.name == "zero_sum":
        return _zero_sum(y, space.event_dim)
    name = ALIASES.get(space.name, space.name)
    own = OWN_EVENT_DIM.get(space.name, 0)
    if name in _OWN:
        return _reduce(_OWN[name](y), space.event_dim - own)
    return np.asarray(domains.contains(name, y, space.event_dim))
