"""LKJ(dimension d, concentration η) over d × d correlation matrices C (NumPyro's LKJ; GPyTorch's
LKJPrior is bound to it too):

    log p(C) = (η − 1)·log det C − log c_d(η)

with respect to Lebesgue measure on C's strictly-lower entries. c_d(η) is LKJCholesky's
normaliser: the density of L = chol C is Π L_ii^(2η−2+d−i)/c_d(η), and L ↦ L Lᵀ has the Jacobian
Π L_ii^(d−i), which cancels those powers' d − i. The value's gradient is the one of
(η − 1)·log det C over every entry taken as an independent variable, (η − 1)·C⁻¹, compared on
its symmetric part off the diagonal (structure ``off_diagonal_symmetric``): a correlation
matrix's diagonal is fixed, and frameworks extend log_prob off it differently (NumPyro's
transform adds −(d − 1)·log L_11).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..core import Arrays, Options, ParamInfo, ValueInfo
from .lkj_cholesky import LKJCholesky, _dim, _half_offsets, log_lkj_normalizer
from .wishart import _chol_or_identity


class LKJ(LKJCholesky):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        d, eta = _dim(params), params["concentration"]
        if d < 2:
            return np.full(eta.shape, np.nan)
        chol, _ = _chol_or_identity(value)
        log_det = 2.0 * np.log(np.diagonal(chol, axis1=-2, axis2=-1)).sum(-1)
        return (eta - 1.0) * log_det - log_lkj_normalizer(eta, d)

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        d, eta = _dim(params), params["concentration"]
        d_norm = special.digamma(eta[..., None] + _half_offsets(d)).sum(-1) - (
            d - 1
        ) * special.digamma(eta + 0.5 * (d - 1))
        chol, _ = _chol_or_identity(value)
        inv = np.linalg.inv(chol)
        log_det = 2.0 * np.log(np.diagonal(chol, axis1=-2, axis2=-1)).sum(-1)
        return {
            "concentration": log_det - d_norm,
            "value": (eta - 1.0)[..., None, None] * (np.swapaxes(inv, -1, -2) @ inv),
        }

    def _draw_moments(self, params, weights, parametrization, options):
        """C's diagonal is 1, and C ↦ D C D for D = diag(±1) keeps the law, so its off-diagonal
        entries are uncorrelated, each of mean 0 and variance v = 1/(2η + d − 1) ((r + 1)/2 ~
        Beta(η − 1 + d/2, η − 1 + d/2)). With s = Σ w·C and u_ij = w_ij + w_ji: E[s] = Σ w_ii,
        E[s²] = (Σ w_ii)² + v·Σ_{i<j} u_ij²."""
        d, eta = _dim(params), params["concentration"]
        v = 1.0 / (2.0 * eta + d - 1.0)
        trace = float(np.trace(weights))
        pairs = float((np.triu(weights + weights.T, 1) ** 2).sum())
        return np.full(eta.shape, trace), trace**2 + v * pairs

    def _sample(self, params, shape, rng, parametrization):
        chol = super()._sample(params, shape, rng, parametrization)
        c = chol @ np.swapaxes(chol, -1, -2)
        c = 0.5 * (c + np.swapaxes(c, -1, -2))
        d = c.shape[-1]
        return np.where(np.eye(d, dtype=bool), 1.0, c)  # the unit diagonal exactly

    def _mean(self, params, parametrization, options):
        # C ↦ D C D (D = diag(±1)) keeps the law, so every off-diagonal mean is 0.
        return np.eye(_dim(params))


LKJ_FAMILY = LKJ(
    name="LKJ",
    parametrizations={
        "concentration": {
            "dimension": ParamInfo(0, "positive_integer", integer=True, static=True),
            "concentration": ParamInfo(0, "positive"),
        }
    },
    value=ValueInfo(2, "corr_matrix", structure="off_diagonal_symmetric"),
)
