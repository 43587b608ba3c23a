"""Linear transforms (Fourier, cosine and Haar bases, triangular maps, complex packing): their
log|det J| is a constant, 0 for the orthonormal ones."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import fft

from ..declarations import OracleError
from .base import ParamSpec, Space, Transform, as_array, batch_shape
from .registry import oracle_transform


@oracle_transform
class LowerCholeskyAffine(Transform):
    """``real_vector`` onto itself by y = loc + L x (NumPyro); log|det J| = Σ log|L_ii|,
    shaped like the broadcast batch of x, loc and L."""

    name = "lower_cholesky_affine"
    params = (
        ParamSpec("loc", event_dim=1),
        ParamSpec("scale_tril", event_dim=2, domain="lower_cholesky"),
    )

    def __init__(self, loc: Any, scale_tril: Any) -> None:
        self.loc, self.scale_tril = as_array(loc), as_array(scale_tril)

    @property
    def domain(self) -> Space:
        return Space("real", 1)

    @property
    def codomain(self) -> Space:
        return Space("real", 1)

    def forward(self, x: np.ndarray) -> np.ndarray:
        return self.loc + (self.scale_tril @ as_array(x)[..., None])[..., 0]

    def inverse(self, y: np.ndarray) -> np.ndarray:
        rhs = as_array(y) - self.loc
        shape = np.broadcast_shapes(rhs.shape[:-1], self.scale_tril.shape[:-2])
        matrix = np.broadcast_to(self.scale_tril, shape + self.scale_tril.shape[-2:])
        rhs = np.broadcast_to(rhs, shape + rhs.shape[-1:])
        return np.asarray(np.linalg.solve(matrix, rhs[..., None])[..., 0])

    def log_abs_det_jacobian(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        logdet = np.log(np.abs(np.diagonal(self.scale_tril, axis1=-2, axis2=-1))).sum(-1)
        return np.broadcast_to(logdet, self.forward_shape(as_array(x).shape)[:-1]).copy()

    def forward_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        if not shape:
            raise ValueError("too few dimensions on input")
        return tuple(np.broadcast_shapes(tuple(shape), self.loc.shape, self.scale_tril.shape[:-1]))

    def inverse_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return self.forward_shape(shape)


@oracle_transform
class RecursiveLinear(Transform):
    """A (time × D) matrix onto another by y_t = A y_{t−1} + x_t, y_{−1} = initial_value
    (NumPyro's ``RecursiveLinearTransform``); unit block-triangular, so log|det J| = 0."""

    name = "recursive_linear"
    params = (
        ParamSpec("transition_matrix", event_dim=2),
        ParamSpec("initial_value", event_dim=1, default=None),
    )

    def __init__(self, transition_matrix: Any, initial_value: Any = None) -> None:
        self.transition_matrix = as_array(transition_matrix)
        d = self.transition_matrix.shape[-1]
        self.initial_value = as_array(np.zeros(d) if initial_value is None else initial_value)

    @property
    def domain(self) -> Space:
        return Space("real", 2)

    @property
    def codomain(self) -> Space:
        return Space("real", 2)

    def _step(self, prev: np.ndarray) -> np.ndarray:
        return (self.transition_matrix @ prev[..., None])[..., 0]

    def forward(self, x: np.ndarray) -> np.ndarray:
        x = as_array(x)
        out = np.zeros(self.forward_shape(x.shape))
        prev = self.initial_value
        for t in range(x.shape[-2]):
            prev = self._step(prev) + x[..., t, :]
            out[..., t, :] = prev
        return out

    def inverse(self, y: np.ndarray) -> np.ndarray:
        y = as_array(y)
        out = np.zeros(self.inverse_shape(y.shape))
        prev = self.initial_value
        for t in range(y.shape[-2]):
            out[..., t, :] = y[..., t, :] - self._step(prev)
            prev = y[..., t, :]
        return out

    def log_abs_det_jacobian(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.zeros(self.forward_shape(as_array(x).shape)[:-2])

    def forward_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        batch = np.broadcast_shapes(
            tuple(shape[:-2]), self.transition_matrix.shape[:-2], self.initial_value.shape[:-1]
        )
        return tuple(batch) + tuple(shape[-2:])

    def inverse_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return self.forward_shape(shape)


@oracle_transform
class Complex(Transform):
    """A pair (..., 2) onto the complex number x₀ + i x₁ (NumPyro's ``ComplexTransform``);
    ℝ² and ℂ are the same plane, log|det J| = 0."""

    name = "complex"

    @property
    def domain(self) -> Space:
        return Space("real", 1)

    @property
    def codomain(self) -> Space:
        return Space("complex", 0)

    def forward(self, x: np.ndarray) -> np.ndarray:
        x = as_array(x)
        if x.shape[-1:] != (2,):
            raise OracleError("complex takes a trailing dimension of size 2")
        return x[..., 0] + 1j * x[..., 1]

    def inverse(self, y: np.ndarray) -> np.ndarray:
        y = np.asarray(y)
        return np.stack([y.real, y.imag], axis=-1).astype(np.float64)

    def log_abs_det_jacobian(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.zeros(batch_shape(as_array(x).shape, 1))

    def forward_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        if shape[-1:] != (2,):
            raise ValueError("input must have a trailing dimension of size 2")
        return tuple(shape[:-1])

    def inverse_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return (*tuple(shape), 2)


@oracle_transform
class RealFastFourier(Transform):
    """The real FFT over the last ``transform_ndims`` axes (NumPyro's
    ``RealFastFourierTransform``), unnormalised. Taken as a real map onto the independent real
    and imaginary parts of the half spectrum (the imaginary parts of the q self-conjugate
    coefficients, always 0, left out), log|det J| = (n log n − (n − q) log 2)/2 for n input
    entries, q = Π(2 − n_k mod 2): the full DFT scales lengths by √n, and each coefficient
    kept for its conjugate carries the energy of two."""

    name = "rfft"
    params = (
        ParamSpec("transform_shape", static=True, default=None),
        ParamSpec("transform_ndims", static=True, default=1),
    )

    def __init__(self, transform_shape: Any = None, transform_ndims: int = 1) -> None:
        if isinstance(transform_shape, int):
            transform_shape = (transform_shape,)
        if transform_shape is not None and len(transform_shape) != transform_ndims:
            raise OracleError("transform_shape must have transform_ndims entries")
        self.transform_shape = None if transform_shape is None else tuple(transform_shape)
        self.transform_ndims = int(transform_ndims)

    @property
    def axes(self) -> tuple[int, ...]:
        return tuple(range(-self.transform_ndims, 0))

    @property
    def domain(self) -> Space:
        return Space("real", self.transform_ndims)

    @property
    def codomain(self) -> Space:
        return Space("complex", self.transform_ndims)

    def forward(self, x: np.ndarray) -> np.ndarray:
        return np.fft.rfftn(as_array(x), s=self.transform_shape, axes=self.axes)

    def inverse(self, y: np.ndarray) -> np.ndarray:
        return np.fft.irfftn(np.asarray(y), s=self.transform_shape, axes=self.axes)

    def log_abs_det_jacobian(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        event = as_array(x).shape[-self.transform_ndims :]
        n = math.prod(event)
        q = math.prod(2 - k % 2 for k in event)
        value = (n * math.log(n) - math.log(2.0) * (n - q)) / 2
        return np.full(batch_shape(as_array(x).shape, self.transform_ndims), value)

    def _with_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        if self.transform_shape is None:
            return tuple(shape)
        return tuple(shape[: len(shape) - self.transform_ndims]) + self.transform_shape

    def forward_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        shape = self._with_shape(tuple(shape))
        return (*shape[:-1], shape[-1] // 2 + 1)

    def inverse_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        if self.transform_shape is not None:
            return self._with_shape(tuple(shape))
        return (*tuple(shape[:-1]), 2 * (shape[-1] - 1))


@oracle_transform
class PackRealFastFourierCoefficients(Transform):
    """A real vector of n entries onto the n//2 + 1 complex coefficients of a real FFT
    (NumPyro's ``PackRealFastFourierCoefficientsTransform``): the first n//2 + 1 entries are
    the real parts, the rest the imaginary parts of coefficients 1, 2, …; the map only moves
    entries, log|det J| = 0. ``inverse`` needs ``transform_shape`` (n,)."""

    name = "pack_rfft"
    params = (ParamSpec("transform_shape", static=True, default=None),)

    def __init__(self, transform_shape: Any = None) -> None:
        if transform_shape is not None and len(tuple(transform_shape)) != 1:
            raise OracleError("packing Fourier coefficients is for vectors only")
        self.shape = None if transform_shape is None else tuple(transform_shape)

    @property
    def domain(self) -> Space:
        return Space("real", 1)

    @property
    def codomain(self) -> Space:
        return Space("complex", 1)

    @staticmethod
    def _split(n: int) -> tuple[int, int]:
        return n // 2 + 1, n - (n // 2 + 1)

    def forward(self, x: np.ndarray) -> np.ndarray:
        x = as_array(x)
        n_real, n_imag = self._split(x.shape[-1])
        out = x[..., :n_real].astype(np.complex128)
        out[..., 1 : 1 + n_imag] += 1j * x[..., n_real:]
        return out

    def inverse(self, y: np.ndarray) -> np.ndarray:
        if self.shape is None:
            raise OracleError("pack_rfft's inverse needs transform_shape")
        y = np.asarray(y)
        _, n_imag = self._split(self.shape[0])
        return np.concatenate([y.real, y.imag[..., 1 : n_imag + 1]], axis=-1)

    def log_abs_det_jacobian(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.zeros(batch_shape(as_array(x).shape, 1))

    def forward_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return (*tuple(shape[:-1]), shape[-1] // 2 + 1)

    def inverse_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        if self.shape is None:
            raise OracleError("pack_rfft's inverse shape needs transform_shape")
        return tuple(shape[:-1]) + self.shape


_ROOT_HALF = 1.0 / math.sqrt(2.0)


def _haar(x: np.ndarray) -> np.ndarray:
    """The orthonormal Haar transform of the last axis (NumPyro's layout: the coarsest mean,
    then each level's details from coarse to fine, an odd level's leftover entry after its
    details)."""
    lo, his, ends = x, [], []
    for _ in range(max(0, x.shape[-1].bit_length() - 1)):
        n = lo.shape[-1] // 2
        even, odd = lo[..., 0 : 2 * n : 2], lo[..., 1 : 2 * n : 2]
        ends.append(lo[..., 2 * n :])
        his.append(_ROOT_HALF * (even - odd))
        lo = _ROOT_HALF * (even + odd)
    parts = [lo]
    for hi, end in zip(reversed(his), reversed(ends), strict=True):
        parts += [hi, end]
    return np.concatenate(parts, axis=-1)


def _haar_inverse(y: np.ndarray) -> np.ndarray:
    size = y.shape[-1]
    lengths = []
    length = size
    for _ in range(max(0, size.bit_length() - 1)):
        lengths.append(length)
        length //= 2
    lo, offset = y[..., 0:1], 1
    for level in reversed(lengths):
        n = level // 2
        hi = y[..., offset : offset + n]
        end = y[..., offset + n : offset + level - n]
        offset += level - n
        pairs = np.stack([_ROOT_HALF * (lo + hi), _ROOT_HALF * (lo - hi)], axis=-1)
        lo = np.concatenate([pairs.reshape((*pairs.shape[:-2], 2 * n)), end], axis=-1)
    return lo


class AlongAxis(Transform):
    """An orthonormal map along axis ``dim`` (< 0), the axes from ``dim`` on one event."""

    dim = -1

    @property
    def domain(self) -> Space:
        return Space("real", -self.dim)

    @property
    def codomain(self) -> Space:
        return Space("real", -self.dim)

    def log_abs_det_jacobian(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.zeros(batch_shape(as_array(x).shape, -self.dim))


@oracle_transform
class Haar(AlongAxis):
    """The orthonormal Haar wavelet transform along ``dim`` (NumPyro's ``HaarTransform``),
    of the reversed axis when ``flip``; log|det J| = 0."""

    name = "haar"
    params = (
        ParamSpec("dim", static=True, default=-1),
        ParamSpec("flip", static=True, default=False),
    )

    def __init__(self, dim: int = -1, flip: bool = False) -> None:
        if dim >= 0:
            raise OracleError("haar's dim is negative")
        self.dim, self.flip = int(dim), bool(flip)

    def forward(self, x: np.ndarray) -> np.ndarray:
        x = np.swapaxes(as_array(x), self.dim, -1)
        if self.flip:
            x = x[..., ::-1]
        return np.swapaxes(_haar(x), self.dim, -1)

    def inverse(self, y: np.ndarray) -> np.ndarray:
        x = _haar_inverse(np.swapaxes(as_array(y), self.dim, -1))
        if self.flip:
            x = x[..., ::-1]
        return np.swapaxes(x, self.dim, -1)


@oracle_transform
class DiscreteCosine(AlongAxis):
    """The orthonormal DCT-II along ``dim`` (NumPyro's ``DiscreteCosineTransform``), each
    frequency k then scaled by w_k ∝ (k + ½)^smooth with Π w_k = 1; log|det J| = Σ log w_k
    = 0 whatever ``smooth``."""

    name = "dct"
    params = (
        ParamSpec("dim", static=True, default=-1),
        ParamSpec("smooth", static=True, default=0.0),
    )

    def __init__(self, dim: int = -1, smooth: float = 0.0) -> None:
        if dim >= 0:
            raise OracleError("dct's dim is negative")
        self.dim, self.smooth = int(dim), float(smooth)

    def _weight(self, size: int) -> np.ndarray:
        w = np.linspace(0.5, size - 0.5, size) ** self.smooth
        w = w / np.exp(np.mean(np.log(w)))
        return w.reshape((size,) + (1,) * (-self.dim - 1))

    def forward(self, x: np.ndarray) -> np.ndarray:
        x = as_array(x)
        y = np.asarray(fft.dct(x, type=2, norm="ortho", axis=self.dim))
        return y * self._weight(x.shape[self.dim]) if self.smooth else y

    def inverse(self, y: np.ndarray) -> np.ndarray:
        y = as_array(y)
        if self.smooth:
            y = y / self._weight(y.shape[self.dim])
        return np.asarray(fft.idct(y, type=2, norm="ortho", axis=self.dim))
