"""Helpers for the families' declared maps of noise (``Family._pathwise``): what
``rsample_grad`` holds a multivariate draw's derivatives to."""

from __future__ import annotations

import numpy as np


def fold_to(grad: np.ndarray, like: np.ndarray) -> np.ndarray:
    """``grad`` (a copy per draw, the event's shape) summed over each axis where the parameter
    ``like`` has size 1 and ``grad`` does not: a parameter broadcast across the event gets the
    sum of what each coordinate it reaches contributes."""
    axes = tuple(
        i
        for i in range(grad.ndim)
        if i >= grad.ndim - like.ndim
        and like.shape[i - grad.ndim + like.ndim] == 1
        and grad.shape[i] != 1
    )
    out = grad.sum(axis=axes, keepdims=True) if axes else grad
    return np.broadcast_to(out, like.shape).copy()


def through_cholesky(chol: np.ndarray, bar_chol: np.ndarray, parametrization: str) -> np.ndarray:
    """A cotangent L̄ of the lower Cholesky factor L carried to the parameter it was made from:
    L itself (``scale_tril``), Σ = L Lᵀ by Cholesky's reverse mode (Σ̄ = L⁻ᵀ Φ(Lᵀ L̄) L⁻¹, Φ the
    lower triangle with half its diagonal; compared by its symmetric part), or the precision
    P = Σ⁻¹ (P̄ = −Σ Σ̄ Σ): the frameworks' scale parameters all reach their draws through L."""
    if parametrization == "scale_tril":
        return bar_chol
    inner = np.swapaxes(chol, -1, -2) @ bar_chol
    d = inner.shape[-1]
    phi = np.tril(inner) - 0.5 * np.diagonal(inner, axis1=-2, axis2=-1)[..., None] * np.eye(d)
    inv_chol = np.linalg.inv(chol)
    bar_cov = np.swapaxes(inv_chol, -1, -2) @ phi @ inv_chol
    if parametrization == "covariance_matrix":
        return bar_cov
    cov = chol @ np.swapaxes(chol, -1, -2)
    return -cov @ bar_cov @ cov
