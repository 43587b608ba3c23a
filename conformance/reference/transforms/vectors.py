"""Transforms of vectors onto constrained vectors (simplex, ordered, L1 ball, zero sum): each
names the coordinates of its codomain its log|det J| is taken in."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import special

from .base import ParamSpec, Space, Transform, as_array, batch_shape
from .elementwise import log1m_tanh_squared, softplus
from .registry import oracle_transform


def _pad_front(a: np.ndarray, value: float) -> np.ndarray:
    """``a`` with ``value`` put before its first entry along the last axis."""
    return np.concatenate([np.full((*a.shape[:-1], 1), value), a], axis=-1)


def _tail_sums(a: np.ndarray) -> np.ndarray:
    """s_i = Σ_{j≥i} a_j along the last axis: 1 − Σ_{j<i} y_j on a simplex, without the
    cancellation of subtracting from 1."""
    return np.cumsum(a[..., ::-1], axis=-1)[..., ::-1]


def _resize_last(shape: tuple[int, ...], by: int) -> tuple[int, ...]:
    if not shape:
        raise ValueError("too few dimensions on input")
    return (*tuple(shape[:-1]), shape[-1] + by)


@oracle_transform
class StickBreaking(Transform):
    """``real_vector`` (K−1) onto the ``simplex`` (K) by stick breaking, the same in torch and
    NumPyro: z_i = σ(x_i − log(K−1−i)), y_i = z_i Π_{j<i}(1 − z_j), y_{K−1} = Π(1 − z_j);
    the shift puts x = 0 at the simplex's centre. log|det J| in the coordinates y_0…y_{K−2}
    (the simplex's first K−1 entries): Σ log y_i + log(1 − z_i)."""

    name = "stick_breaking"

    @property
    def domain(self) -> Space:
        return Space("real", 1)

    @property
    def codomain(self) -> Space:
        return Space("simplex", 1)

    @staticmethod
    def _shifted(x: np.ndarray) -> np.ndarray:
        n = x.shape[-1]
        return x - np.log(n - np.arange(n))

    def forward(self, x: np.ndarray) -> np.ndarray:
        x = as_array(x)
        z = special.expit(self._shifted(x))
        log_rest = np.cumsum(-softplus(self._shifted(x)), axis=-1)  # Σ_{j≤i} log(1 − z_j)
        pieces = np.concatenate([z, np.ones((*z.shape[:-1], 1))], axis=-1)
        return np.asarray(pieces * np.exp(_pad_front(log_rest, 0.0)))

    def inverse(self, y: np.ndarray) -> np.ndarray:
        y = as_array(y)
        rest = _tail_sums(y)[..., 1:]  # what is left of the stick after y_i
        n = y.shape[-1] - 1
        return np.asarray(np.log(y[..., :-1]) - np.log(rest) + np.log(n - np.arange(n)))

    def log_abs_det_jacobian(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        x, y = as_array(x), as_array(y)
        return np.asarray((np.log(y[..., :-1]) - softplus(self._shifted(x))).sum(-1))

    def forward_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return _resize_last(shape, 1)

    def inverse_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return _resize_last(shape, -1)


@oracle_transform
class Softmax(Transform):
    """``real_vector`` onto the ``simplex`` of the same length by y = eˣ / Σ eˣ (torch's
    ``SoftmaxTransform``, its ``transform_to(simplex)``). Not bijective (x + c maps to the same
    y): ``inverse(y)`` is log y, as torch returns, and there is no log|det J|."""

    name = "softmax"
    bijective = False

    @property
    def domain(self) -> Space:
        return Space("real", 1)

    @property
    def codomain(self) -> Space:
        return Space("simplex", 1)

    def forward(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(special.softmax(as_array(x), axis=-1))

    def inverse(self, y: np.ndarray) -> np.ndarray:
        return np.log(as_array(y))


@oracle_transform
class Ordered(Transform):
    """``real_vector`` onto ``ordered_vector``: y_0 = x_0, y_i = y_{i−1} + e^{x_i};
    log|det J| = Σ_{i≥1} x_i."""

    name = "ordered"

    @property
    def domain(self) -> Space:
        return Space("real", 1)

    @property
    def codomain(self) -> Space:
        return Space("ordered_vector", 1)

    def forward(self, x: np.ndarray) -> np.ndarray:
        x = as_array(x)
        return np.cumsum(np.concatenate([x[..., :1], np.exp(x[..., 1:])], axis=-1), axis=-1)

    def inverse(self, y: np.ndarray) -> np.ndarray:
        y = as_array(y)
        return np.concatenate([y[..., :1], np.log(np.diff(y, axis=-1))], axis=-1)

    def log_abs_det_jacobian(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.asarray(as_array(x)[..., 1:].sum(-1))


@oracle_transform
class SimplexToOrdered(Transform):
    """The ``simplex`` (K) onto ``ordered_vector`` (K−1): y_i = logit(Σ_{j≤i} x_j) + anchor.
    log|det J| in the simplex's first K−1 coordinates: Σ softplus(u) + softplus(−u) with
    u = y − anchor. (NumPyro's closed form puts y where u belongs: right at anchor 0 only.)"""

    name = "simplex_to_ordered"
    params = (ParamSpec("anchor_point", default=0.0),)

    def __init__(self, anchor_point: Any = 0.0) -> None:
        self.anchor_point = as_array(anchor_point)

    @property
    def domain(self) -> Space:
        return Space("simplex", 1)

    @property
    def codomain(self) -> Space:
        return Space("ordered_vector", 1)

    def forward(self, x: np.ndarray) -> np.ndarray:
        x = as_array(x)
        below = np.cumsum(x[..., :-1], axis=-1)
        above = _tail_sums(x)[..., 1:]
        return np.asarray(np.log(below) - np.log(above) + self.anchor_point[..., None])

    def inverse(self, y: np.ndarray) -> np.ndarray:
        u = as_array(y) - self.anchor_point[..., None]
        s = special.expit(u)
        last = special.expit(-u[..., -1:])
        return np.concatenate([s[..., :1], np.diff(s, axis=-1), last], axis=-1)

    def log_abs_det_jacobian(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        u = as_array(y) - self.anchor_point[..., None]
        return np.asarray((softplus(u) + softplus(-u)).sum(-1))

    def forward_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        out = _resize_last(shape, -1)
        return tuple(np.broadcast_shapes(out[:-1], self.anchor_point.shape)) + out[-1:]

    def inverse_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        out = _resize_last(shape, 1)
        return tuple(np.broadcast_shapes(out[:-1], self.anchor_point.shape)) + out[-1:]


@oracle_transform
class L1Ball(Transform):
    """``real_vector`` onto the open unit ``l1_ball`` (NumPyro): t = tanh x,
    y_i = t_i Π_{j<i}(1 − |t_j|). log|det J| = Σ_i [log(1 − t_i²) + Σ_{j<i} log(1 − |t_j|)]
    (the Jacobian is triangular in the ball's own coordinates)."""

    name = "l1_ball"

    @property
    def domain(self) -> Space:
        return Space("real", 1)

    @property
    def codomain(self) -> Space:
        return Space("l1_ball", 1)

    @staticmethod
    def _log_rest(x: np.ndarray) -> np.ndarray:
        """log Π_{j<i}(1 − |tanh x_j|), with log(1 − |tanh x|) = log 2 − 2|x| − softplus(−2|x|)."""
        a = np.abs(x)
        log1m = np.log(2.0) - 2.0 * a - softplus(-2.0 * a)
        return _pad_front(np.cumsum(log1m[..., :-1], axis=-1), 0.0)

    def forward(self, x: np.ndarray) -> np.ndarray:
        x = as_array(x)
        return np.tanh(x) * np.exp(self._log_rest(x))

    def inverse(self, y: np.ndarray) -> np.ndarray:
        y = as_array(y)
        rest = _pad_front(1.0 - np.cumsum(np.abs(y[..., :-1]), axis=-1), 1.0)
        return np.asarray(np.arctanh(y / rest))

    def log_abs_det_jacobian(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        x = as_array(x)
        return np.asarray((log1m_tanh_squared(x) + self._log_rest(x)).sum(-1))


def _extend(a: np.ndarray, axis: int) -> np.ndarray:
    """One axis of n entries onto n + 1 that add up to 0, by an isometry (PyMC's and NumPyro's
    Householder-like construction)."""
    n = a.shape[axis] + 1
    total = a.sum(axis, keepdims=True)
    norm = total / (np.sqrt(n) + n)
    fill = norm - total / np.sqrt(n)
    return np.concatenate([a, fill], axis=axis) - norm


def _extend_inverse(a: np.ndarray, axis: int) -> np.ndarray:
    n = a.shape[axis]
    last = np.take(a, [n - 1], axis=axis)
    norm = -last * np.sqrt(n) / (np.sqrt(n) + n)
    return np.take(a, np.arange(n - 1), axis=axis) + norm


@oracle_transform
class ZeroSum(Transform):
    """``real`` (n per axis, over the last ``transform_ndims`` axes) onto ``zero_sum`` (n + 1
    per axis, every axis summing to 0), NumPyro's. The map is an isometry onto the zero-sum
    subspace, so log|det J| = 0 in orthonormal coordinates of that subspace (the volume
    √det(JᵀJ)), not in the first n entries of y."""

    name = "zero_sum"
    params = (ParamSpec("transform_ndims", static=True, default=1),)

    def __init__(self, transform_ndims: int = 1) -> None:
        self.transform_ndims = int(transform_ndims)

    @property
    def domain(self) -> Space:
        return Space("real", self.transform_ndims)

    @property
    def codomain(self) -> Space:
        return Space("zero_sum", self.transform_ndims)

    def forward(self, x: np.ndarray) -> np.ndarray:
        out = as_array(x)
        for axis in range(-self.transform_ndims, 0):
            out = _extend(out, out.ndim + axis)
        return out

    def inverse(self, y: np.ndarray) -> np.ndarray:
        out = as_array(y)
        for axis in range(-self.transform_ndims, 0):
            out = _extend_inverse(out, out.ndim + axis)
        return out

    def log_abs_det_jacobian(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.zeros(batch_shape(as_array(x).shape, self.transform_ndims))

    def forward_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        k = self.transform_ndims
        return tuple(shape[:-k]) + tuple(s + 1 for s in shape[-k:])

    def inverse_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        k = self.transform_ndims
        return tuple(shape[:-k]) + tuple(s - 1 for s in shape[-k:])


@oracle_transform
class Permute(Transform):
    """``real_vector`` onto itself by y = x[..., permutation]; log|det J| = 0."""

    name = "permute"
    params = (ParamSpec("permutation", event_dim=1, static=True),)

    def __init__(self, permutation: Any) -> None:
        self.permutation = np.asarray(permutation, dtype=np.intp)

    @property
    def domain(self) -> Space:
        return Space("real", 1)

    @property
    def codomain(self) -> Space:
        return Space("real", 1)

    def forward(self, x: np.ndarray) -> np.ndarray:
        return as_array(x)[..., self.permutation]

    def inverse(self, y: np.ndarray) -> np.ndarray:
        return as_array(y)[..., np.argsort(self.permutation)]

    def log_abs_det_jacobian(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.zeros(batch_shape(as_array(x).shape, 1))
