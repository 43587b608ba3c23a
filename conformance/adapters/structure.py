"""Detecting covariance structure that a LinearOperator can represent exactly.

Used by the GPyTorch adapters to decide whether a case's covariance can go through a
block-diagonal or Kronecker operator, and to build the factors from the very numbers the
framework receives. NumPy only; works on float64 or float32 arrays.
"""

from __future__ import annotations

import numpy as np


def block_size(mat: np.ndarray) -> int | None:
    """The smallest m < n such that ``mat`` is block-diagonal in m×m blocks, or None."""
    n = mat.shape[-1]
    for m in range(1, n):
        if n % m:
            continue
        mask = np.kron(np.eye(n // m, dtype=bool), np.ones((m, m), dtype=bool))
        if not np.any(mat[..., ~mask]):
            return m
    return None


def kronecker_factors(mat: np.ndarray, rtol: float = 1e-5) -> tuple[np.ndarray, np.ndarray] | None:
    """Factors (A, B) with ``mat == kron(A, B)`` (up to ``rtol``), B as large as possible."""
    n = mat.shape[-1]
    for b in sorted((d for d in range(2, n) if n % d == 0), reverse=True):
        left, right = split_kronecker(mat, b)
        rebuilt = np.einsum("...ij,...kl->...ikjl", left, right).reshape(mat.shape)
        if np.max(np.abs(rebuilt - mat)) <= rtol * np.max(np.abs(mat)):
            return left, right
    return None


def split_kronecker(mat: np.ndarray, b: int) -> tuple[np.ndarray, np.ndarray]:
    """A = mat[::b, ::b] / mat[0, 0] and B = mat[:b, :b], so that kron(A, B) = mat."""
    return mat[..., ::b, ::b] / mat[..., :1, :1], mat[..., :b, :b]
