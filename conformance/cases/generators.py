"""Deterministic named generators for case arrays.

Each generator turns (shape, seed, options) into a float64 array with NumPy's PCG64, so a case
file pins its inputs exactly without listing every number. The options of each generator are
declared in :mod:`conformance.cases.case_model`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

Generator = Callable[..., np.ndarray]


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def normal(shape, seed, loc=0.0, scale=1.0) -> np.ndarray:
    return loc + scale * _rng(seed).standard_normal(shape)


def uniform(shape, seed, low=0.0, high=1.0) -> np.ndarray:
    return _rng(seed).uniform(low, high, shape)


def positive(shape, seed, low=0.5, high=2.0) -> np.ndarray:
    """Log-uniform on [low, high]: positive scales spread over orders of magnitude alike."""
    return np.exp(_rng(seed).uniform(np.log(low), np.log(high), shape))


def probability(shape, seed, low=0.05, high=0.95) -> np.ndarray:
    return _rng(seed).uniform(low, high, shape)


def simplex(shape, seed, concentration=1.0) -> np.ndarray:
    """Points on the simplex along the last dim (Dirichlet draws)."""
    shape = tuple(shape)
    return _rng(seed).dirichlet(np.full(shape[-1], concentration), shape[:-1])


def spd(
    shape, seed, min_eigenvalue=0.5, max_eigenvalue=2.0, diagonal=False, blocks=None, kronecker=None
) -> np.ndarray:
    """Symmetric positive-definite matrices with eigenvalues log-uniform in the given range.

    A random rotation makes the matrix non-diagonal unless ``diagonal`` is set; the condition
    number is bounded by max/min eigenvalue. ``blocks=k`` makes k equal dense diagonal blocks;
    ``kronecker=[a, b]`` makes kron(A, B) of SPD factors (structures GPyTorch operators take).
    """
    shape = tuple(shape)
    *batch, n, m = shape
    if n != m:
        raise ValueError(f"spd needs a square shape (..., n, n), got {shape}")
    if blocks is not None:
        if n % blocks:
            raise ValueError(f"spd: {blocks} blocks do not divide size {n}")
        size = n // blocks
        parts = [
            spd((*batch, size, size), seed + 7919 * j, min_eigenvalue, max_eigenvalue)
            for j in range(blocks)
        ]
        out = np.zeros(shape)
        for j, part in enumerate(parts):
            out[..., j * size : (j + 1) * size, j * size : (j + 1) * size] = part
        return out
    if kronecker is not None:
        a, b = kronecker
        if a * b != n:
            raise ValueError(f"spd: kronecker factor sizes {a}×{b} do not make size {n}")
        left = spd((*batch, a, a), seed, np.sqrt(min_eigenvalue), np.sqrt(max_eigenvalue))
        right = spd((*batch, b, b), seed + 1, np.sqrt(min_eigenvalue), np.sqrt(max_eigenvalue))
        return np.einsum("...ij,...kl->...ikjl", left, right).reshape(shape)
    rng = _rng(seed)
    eig = np.exp(rng.uniform(np.log(min_eigenvalue), np.log(max_eigenvalue), (*batch, n)))
    if diagonal:
        return eig[..., :, None] * np.eye(n)
    q, r = np.linalg.qr(rng.standard_normal((*batch, n, n)))
    q = q * np.sign(np.diagonal(r, axis1=-2, axis2=-1))[..., None, :]
    mat = (q * eig[..., None, :]) @ np.swapaxes(q, -1, -2)
    return 0.5 * (mat + np.swapaxes(mat, -1, -2))


def cholesky(shape, seed, diag_low=0.5, diag_high=1.5, off_scale=0.5) -> np.ndarray:
    """Lower-triangular matrices with a positive diagonal (a ``scale_tril``)."""
    shape = tuple(shape)
    *batch, n, m = shape
    if n != m:
        raise ValueError(f"cholesky needs a square shape (..., n, n), got {shape}")
    rng = _rng(seed)
    off = np.tril(off_scale * rng.standard_normal(shape), k=-1)
    diag = rng.uniform(diag_low, diag_high, (*batch, n))
    return off + diag[..., :, None] * np.eye(n)


def integers(shape, seed, low=0, high=1) -> np.ndarray:
    """Integers in [low, high], both ends included (stored as float64 until cast)."""
    return _rng(seed).integers(low, high, size=shape, endpoint=True).astype(np.float64)


GENERATORS: dict[str, Generator] = {
    "normal": normal,
    "uniform": uniform,
    "positive": positive,
    "probability": probability,
    "simplex": simplex,
    "spd": spd,
    "cholesky": cholesky,
    "integers": integers,
}
