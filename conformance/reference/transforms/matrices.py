"""Transforms onto triangular and positive-definite matrices (Cholesky factors, correlation
factors): vectors and matrices packed and unpacked in one row-major order, the one both
frameworks use (the lower triangle row by row)."""

from __future__ import annotations

import math

import numpy as np

from .base import Space, Transform, as_array
from .elementwise import log1m_tanh_squared, softplus, softplus_inverse
from .registry import oracle_transform


def tril_to_vec(m: np.ndarray, diagonal: int = 0) -> np.ndarray:
    """The entries on and below ``diagonal`` of the last two axes, row by row."""
    rows, cols = np.tril_indices(m.shape[-1], diagonal)
    return m[..., rows, cols]


def vec_to_tril(v: np.ndarray, diagonal: int = 0) -> np.ndarray:
    """The D×D matrix whose entries on and below ``diagonal`` (≤ 0) are ``v``, row by row."""
    n = side(v.shape[-1], diagonal)
    out = np.zeros((*v.shape[:-1], n, n), dtype=v.dtype)
    rows, cols = np.tril_indices(n, diagonal)
    out[..., rows, cols] = v
    return out


def side(length: int, diagonal: int = 0) -> int:
    """D such that the triangle on and below ``diagonal`` (0 or −1) of a D×D matrix has
    ``length`` entries; ValueError otherwise."""
    n = round((math.sqrt(1 + 8 * length) - 1) / 2) - diagonal
    if len(np.tril_indices(n, diagonal)[0]) != length:
        raise ValueError(f"{length} entries are no triangle of a square matrix")
    return n


def _diag(m: np.ndarray) -> np.ndarray:
    return np.diagonal(m, axis1=-2, axis2=-1)


def _to_matrix(shape: tuple[int, ...], diagonal: int) -> tuple[int, ...]:
    if not shape:
        raise ValueError("too few dimensions on input")
    n = side(shape[-1], diagonal)
    return (*tuple(shape[:-1]), n, n)


def _to_vector(shape: tuple[int, ...], diagonal: int) -> tuple[int, ...]:
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(f"shape {shape} does not end in a square matrix")
    return (*tuple(shape[:-2]), len(np.tril_indices(shape[-1], diagonal)[0]))


class VectorToMatrix(Transform):
    """A transform from a ``real_vector`` packing the triangle on and below ``diagonal``."""

    diagonal = 0

    @property
    def domain(self) -> Space:
        return Space("real", 1)

    def forward_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return _to_matrix(tuple(shape), self.diagonal)

    def inverse_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return _to_vector(tuple(shape), self.diagonal)


@oracle_transform
class CorrCholesky(VectorToMatrix):
    """``real_vector`` (D(D−1)/2) onto ``corr_cholesky`` (D×D), the same in both frameworks:
    t = tanh x fills the strict lower triangle row by row and each row is a signed stick
    breaking of t², y_ik = t_ik √(1 − Σ_{j<k} y_ij²), y_ii what is left. log|det J| in the
    strict lower triangle of y (row by row): Σ_ik log(1 − t_ik²) + ½ Σ_{j<k} log(1 − t_ij²)."""

    name = "corr_cholesky"
    diagonal = -1

    @property
    def codomain(self) -> Space:
        return Space("corr_cholesky", 2)

    def forward(self, x: np.ndarray) -> np.ndarray:
        x = as_array(x)
        t = vec_to_tril(np.tanh(x), -1)
        log_rest = vec_to_tril(0.5 * log1m_tanh_squared(x), -1)  # log √(1 − t²) per entry
        before = np.cumsum(log_rest, axis=-1) - log_rest  # Σ_{j<k}
        n = t.shape[-1]
        return np.asarray((t + np.eye(n)) * np.exp(before))

    def inverse(self, y: np.ndarray) -> np.ndarray:
        y = as_array(y)
        squares = np.tril(y * y)
        rest = np.cumsum(squares[..., ::-1], axis=-1)[..., ::-1]  # Σ_{j≥k} y_ij² = 1 − Σ_{j<k}
        t = tril_to_vec(y, -1) / np.sqrt(tril_to_vec(rest, -1))
        return np.asarray(np.arctanh(t))

    def log_abs_det_jacobian(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        x = as_array(x)
        logs = vec_to_tril(log1m_tanh_squared(x), -1)
        before = np.cumsum(logs, axis=-1) - logs
        return np.asarray((logs + 0.5 * np.tril(before, -1)).sum(axis=(-1, -2)))


@oracle_transform
class LowerCholesky(VectorToMatrix):
    """``real_vector`` (D(D+1)/2) onto ``lower_cholesky`` (NumPyro's bijection): the first
    D(D−1)/2 entries fill the strict lower triangle row by row, the last D are the log of the
    diagonal. log|det J| = Σ of those last D entries, in the coordinates (strict lower
    triangle row by row, diagonal)."""

    name = "lower_cholesky"

    @property
    def codomain(self) -> Space:
        return Space("lower_cholesky", 2)

    @staticmethod
    def split(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The strict lower triangle (as a matrix) and the diagonal's packed entries."""
        n = side(x.shape[-1])
        return vec_to_tril(x[..., :-n], -1), x[..., -n:]

    def forward(self, x: np.ndarray) -> np.ndarray:
        lower, diag = self.split(as_array(x))
        return lower + np.exp(diag)[..., None] * np.eye(diag.shape[-1])

    def inverse(self, y: np.ndarray) -> np.ndarray:
        y = as_array(y)
        return np.concatenate([tril_to_vec(y, -1), np.log(_diag(y))], axis=-1)

    def log_abs_det_jacobian(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.asarray(self.split(as_array(x))[1].sum(-1))


@oracle_transform
class SoftplusLowerCholesky(LowerCholesky):
    """As ``lower_cholesky`` with softplus in place of exp on the diagonal (NumPyro's, onto
    ``softplus_lower_cholesky``, the same set); log|det J| = −Σ softplus(−x_diag)."""

    name = "softplus_lower_cholesky"

    def forward(self, x: np.ndarray) -> np.ndarray:
        lower, diag = self.split(as_array(x))
        return lower + softplus(diag)[..., None] * np.eye(diag.shape[-1])

    def inverse(self, y: np.ndarray) -> np.ndarray:
        y = as_array(y)
        return np.concatenate([tril_to_vec(y, -1), softplus_inverse(_diag(y))], axis=-1)

    def log_abs_det_jacobian(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.asarray(-softplus(-self.split(as_array(x))[1]).sum(-1))


@oracle_transform
class ScaledUnitLowerCholesky(LowerCholesky):
    """NumPyro's onto ``scaled_unit_lower_cholesky`` (a lower Cholesky factor): a unit lower
    triangular matrix from the first D(D−1)/2 entries, its row i scaled by d_i =
    softplus(x_diag,i). log|det J| = Σ_i i·log d_i − softplus(−x_diag,i) (row i has i
    scaled entries), in the coordinates (strict lower triangle row by row, diagonal)."""

    name = "scaled_unit_lower_cholesky"

    @property
    def codomain(self) -> Space:
        return Space("scaled_unit_lower_cholesky", 2)

    def forward(self, x: np.ndarray) -> np.ndarray:
        lower, diag = self.split(as_array(x))
        return (lower + np.eye(diag.shape[-1])) * softplus(diag)[..., None]

    def inverse(self, y: np.ndarray) -> np.ndarray:
        y = as_array(y)
        d = _diag(y)
        unit = y / d[..., None]
        return np.concatenate([tril_to_vec(unit, -1), softplus_inverse(d)], axis=-1)

    def log_abs_det_jacobian(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        diag = self.split(as_array(x))[1]
        rows = np.arange(diag.shape[-1])
        return np.asarray((rows * np.log(softplus(diag)) - softplus(-diag)).sum(-1))


@oracle_transform
class LowerCholeskySquare(Transform):
    """torch's ``LowerCholeskyTransform``: a square matrix onto ``lower_cholesky`` by keeping
    its strict lower triangle and exponentiating its diagonal. Not bijective (the upper
    triangle is dropped): ``inverse`` gives the matrix with a zero upper triangle and no
    log|det J| (torch raises NotImplementedError)."""

    name = "lower_cholesky_square"
    bijective = False

    @property
    def domain(self) -> Space:
        return Space("real", 2)

    @property
    def codomain(self) -> Space:
        return Space("lower_cholesky", 2)

    def forward(self, x: np.ndarray) -> np.ndarray:
        x = as_array(x)
        return np.tril(x, -1) + np.exp(_diag(x))[..., None] * np.eye(x.shape[-1])

    def inverse(self, y: np.ndarray) -> np.ndarray:
        y = as_array(y)
        return np.tril(y, -1) + np.log(_diag(y))[..., None] * np.eye(y.shape[-1])


@oracle_transform
class PositiveDefiniteSquare(Transform):
    """torch's ``PositiveDefiniteTransform``: a square matrix onto ``positive_definite`` by
    L Lᵀ with L = ``lower_cholesky_square(x)``. Not bijective; ``inverse`` is the Cholesky
    factor run back through ``lower_cholesky_square``'s inverse; no log|det J|."""

    name = "positive_definite_square"
    bijective = False

    @property
    def domain(self) -> Space:
        return Space("real", 2)

    @property
    def codomain(self) -> Space:
        return Space("positive_definite", 2)

    def forward(self, x: np.ndarray) -> np.ndarray:
        factor = LowerCholeskySquare().forward(x)
        return factor @ np.swapaxes(factor, -1, -2)

    def inverse(self, y: np.ndarray) -> np.ndarray:
        return LowerCholeskySquare().inverse(np.linalg.cholesky(as_array(y)))


@oracle_transform
class Cholesky(Transform):
    """NumPyro's ``CholeskyTransform``: ``positive_definite`` onto ``lower_cholesky`` by the
    Cholesky factor. log|det J| = −D log 2 − Σ_i (D − i) log L_ii (i from 0), the inverse of
    X = L Lᵀ's Jacobian, in the coordinates of X's lower triangle (diagonal included) and L's,
    both row by row."""

    name = "cholesky"

    @property
    def domain(self) -> Space:
        return Space("positive_definite", 2)

    @property
    def codomain(self) -> Space:
        return Space("lower_cholesky", 2)

    def forward(self, x: np.ndarray) -> np.ndarray:
        return np.linalg.cholesky(as_array(x))

    def inverse(self, y: np.ndarray) -> np.ndarray:
        y = as_array(y)
        return y @ np.swapaxes(y, -1, -2)

    def log_abs_det_jacobian(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        diag = _diag(as_array(y))
        n = diag.shape[-1]
        return np.asarray(-n * np.log(2.0) - ((n - np.arange(n)) * np.log(diag)).sum(-1))


@oracle_transform
class CorrMatrixCholesky(Cholesky):
    """NumPyro's ``CorrMatrixCholeskyTransform``: ``corr_matrix`` onto ``corr_cholesky`` by
    the Cholesky factor. log|det J| = −Σ_i (D − 1 − i) log L_ii, in the coordinates of the
    strict lower triangles of X and L, row by row."""

    name = "corr_matrix_cholesky"

    @property
    def domain(self) -> Space:
        return Space("corr_matrix", 2)

    @property
    def codomain(self) -> Space:
        return Space("corr_cholesky", 2)

    def log_abs_det_jacobian(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        diag = _diag(as_array(y))
        n = diag.shape[-1]
        return np.asarray(-((n - 1 - np.arange(n)) * np.log(diag)).sum(-1))
