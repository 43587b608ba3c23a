"""WishartCholesky(df ν, covariance_matrix Σ | precision_matrix Σ⁻¹ | scale_tril S): the lower
Cholesky factor L of X = L Lᵀ ~ Wishart(ν, Σ) (NumPyro's; torch has none). The density of L is
Wishart's at L Lᵀ times the Jacobian of L ↦ L Lᵀ, 2ᵖ·Π_i L_ii^(p−i+1):

    log p(L) = Σ_i (ν − i)·log L_ii − ½·tr(Σ⁻¹ L Lᵀ) − ν/2·log|Σ| − (ν/2 − 1)·p·log 2 − log Γ_p(ν/2)

(i = 1..p), over L's lower triangle with a positive diagonal. Written on L
itself and on the matrix the parametrisation gives, by triangular solves with its factor: no
matrix is inverted and factored again, and no L Lᵀ is factored (a diagonal entry 1e-8 of the
largest would not survive it; an explicit inverse loses 2e-10 of ∂/∂scale_tril at the
nearly singular edge). Parametrisations
and names as the Wishart family's; NumPyro calls them concentration / scale_matrix /
rate_matrix / scale_tril.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..constants import LOG_2
from ..core import Arrays, Family, Options, ParamInfo, ValueInfo
from ..pathwise import through_cholesky
from .lkj_cholesky import log_multivariate_gamma
from .wishart import (
    PATHWISE_WITHOUT_DF,
    Wishart,
    _chol_or_identity,
    _eye_where_invalid,
)


def _positive_diagonal(mat: np.ndarray) -> np.ndarray:
    diag = np.diagonal(mat, axis1=-2, axis2=-1)
    return np.all(diag > 0, axis=-1) & np.all(np.isfinite(mat), axis=(-1, -2))


def _log_diag(chol: np.ndarray) -> np.ndarray:
    return np.log(np.diagonal(chol, axis1=-2, axis2=-1)).sum(-1)


def _factor(params: Arrays, parametrization: str) -> tuple[np.ndarray, np.ndarray]:
    """(F, log|Σ|): the given matrix's lower factor, chol Σ (or the given S), or chol Σ⁻¹ for
    the precision matrix. The identity where the parameter is not a valid matrix (its
    log_prob is NaN anyway)."""
    mat = params[parametrization]
    if parametrization == "scale_tril":
        f = _eye_where_invalid(mat, _positive_diagonal(mat))
    else:
        f, _ = _chol_or_identity(mat)
    sign = -1.0 if parametrization == "precision_matrix" else 1.0
    return f, sign * 2.0 * _log_diag(f)


def _whitened(f: np.ndarray, x: np.ndarray, parametrization: str) -> tuple[np.ndarray, np.ndarray]:
    """(M with tr(Σ⁻¹ L Lᵀ) = ‖M‖², Σ⁻¹ L) by triangular solves, never an inverse: M = F⁻¹L
    and Σ⁻¹L = F⁻ᵀM from Σ's factor, M = Fᵀ L and Σ⁻¹L = F M from the precision's."""
    if parametrization == "precision_matrix":
        m = np.swapaxes(f, -1, -2) @ x
        return m, f @ m
    m = np.linalg.solve(f, x)
    return m, np.linalg.solve(np.swapaxes(f, -1, -2), m)


class WishartCholesky(Wishart):
    # Its value is the factor L of the Wishart's X: Wishart's summaries are X's, not L's.
    _mean = Family._mean
    _variance = Family._variance
    _mode = Family._mode
    _entropy = Family._entropy

    def _draw_moments(self, params, weights, parametrization, options):
        """The factor is L = C·A (C = chol Σ, A Bartlett's: A_kk = √χ²(ν − k), k = 0..p−1,
        A_kj ~ N(0, 1) below, all independent), so s = Σ w·L = Σ_kj (Cᵀw)_kj·A_kj:
        E[s] = Σ_k (Cᵀw)_kk·E[A_kk] with E[√χ²(m)] = √2·Γ((m+1)/2)/Γ(m/2), and
        Var(s) = Σ_(k>j) (Cᵀw)_kj² + Σ_k (Cᵀw)_kk²·(m_k − E[A_kk]²)."""
        chol = self._scale_tril(params, parametrization)
        c = np.swapaxes(chol, -1, -2) @ weights
        p = chol.shape[-1]
        dof = params["df"][..., None] - np.arange(p)
        mean_chi = np.sqrt(2.0) * np.exp(
            special.gammaln(0.5 * (dof + 1.0)) - special.gammaln(0.5 * dof)
        )
        diag = np.diagonal(c, axis1=-2, axis2=-1)
        below = np.tril(c, -1)
        mean = (diag * mean_chi).sum(-1)
        variance = (below * below).sum(axis=(-1, -2)) + (diag * diag * (dof - mean_chi**2)).sum(-1)
        return mean, mean * mean + variance

    def _pathwise(self, params, draws, weights, parametrization, options):
        """Bartlett's factor itself, NumPyro's map: V = L A, A = L⁻¹ V held, so
        ∂(W:V)/∂L = W·Aᵀ, carried to the parameter L was made from."""
        chol = np.broadcast_to(self._scale_tril(params, parametrization), draws.shape)
        with np.errstate(all="ignore"):
            a = np.linalg.solve(chol, draws)
            bar_chol = np.broadcast_to(weights, draws.shape) @ np.swapaxes(a, -1, -2)
        return {parametrization: through_cholesky(chol, bar_chol, parametrization)}

    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        nu = params["df"]
        p = value.shape[-1]
        f, log_det_sigma = _factor(params, parametrization)
        x = _eye_where_invalid(value, _positive_diagonal(value))
        m, _ = _whitened(f, x, parametrization)
        i = np.arange(1, p + 1)
        log_diag_x = np.log(np.diagonal(x, axis1=-2, axis2=-1))
        return (
            ((nu[..., None] - i) * log_diag_x).sum(-1)
            - 0.5 * (m * m).sum(axis=(-1, -2))
            - 0.5 * nu * log_det_sigma
            - (0.5 * nu - 1.0) * p * LOG_2
            - log_multivariate_gamma(0.5 * nu, p)
        )

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        nu = params["df"]
        p = value.shape[-1]
        f, log_det_sigma = _factor(params, parametrization)
        x = _eye_where_invalid(value, _positive_diagonal(value))
        diag = np.diagonal(x, axis1=-2, axis2=-1)
        i = np.arange(1, p + 1)
        m, sigma_inv_x = _whitened(f, x, parametrization)
        d_mvgamma = 0.5 * special.digamma(0.5 * nu[..., None] + 0.5 * (1 - i)).sum(-1)
        half_nu = 0.5 * nu[..., None, None]
        out = {
            "df": np.log(diag).sum(-1) - 0.5 * p * LOG_2 - 0.5 * log_det_sigma - d_mvgamma,
            "value": np.tril(-sigma_inv_x) + ((nu[..., None] - i) / diag)[..., None] * np.eye(p),
        }
        if parametrization == "covariance_matrix":
            eye = np.broadcast_to(np.eye(p), f.shape)
            sigma_inv = np.linalg.solve(np.swapaxes(f, -1, -2), np.linalg.solve(f, eye))
            outer = sigma_inv_x @ np.swapaxes(sigma_inv_x, -1, -2)  # Σ⁻¹ X Σ⁻¹
            out[parametrization] = -half_nu * sigma_inv + 0.5 * outer
        elif parametrization == "precision_matrix":
            eye = np.broadcast_to(np.eye(p), f.shape)
            sigma = np.linalg.solve(np.swapaxes(f, -1, -2), np.linalg.solve(f, eye))
            out[parametrization] = half_nu * sigma - 0.5 * (x @ np.swapaxes(x, -1, -2))
        else:
            # −ν·Σ log S_ii − ½ tr((S Sᵀ)⁻¹ X): −ν/S_ii on the diagonal, Σ⁻¹ X S⁻ᵀ =
            # (Σ⁻¹L)(S⁻¹L)ᵀ (lower part).
            s_diag = np.diagonal(f, axis1=-2, axis2=-1)
            grad = np.tril(sigma_inv_x @ np.swapaxes(m, -1, -2))
            out[parametrization] = grad - (nu[..., None] / s_diag)[..., None] * np.eye(p)
        return out

    def _sample(self, params, shape, rng, parametrization):
        """Bartlett: L = S A with A lower-triangular, A_ii² ~ χ²(ν − i + 1), A_ij ~ N(0, 1) —
        already the Cholesky factor of S A Aᵀ Sᵀ. A χ² draw of 0 (ν near d − 1) is kept at
        the smallest normal number, so the factor stays inside the support."""
        nu = params["df"]
        chol = self._scale_tril(params, parametrization)
        d = chol.shape[-1]
        a = np.tril(rng.standard_normal((*shape, d, d)), -1)
        chi2 = np.maximum(rng.chisquare(nu[..., None] - np.arange(d)), np.finfo(float).tiny)
        return chol @ (a + np.sqrt(chi2)[..., None] * np.eye(d))


_DF = ParamInfo(0, "positive")
_VALUE = ValueInfo(2, "lower_cholesky", structure="lower_triangular")
WISHART_CHOLESKY = WishartCholesky(
    name="WishartCholesky",
    pathwise_without=PATHWISE_WITHOUT_DF,
    parametrizations={
        "covariance_matrix": {
            "df": _DF,
            "covariance_matrix": ParamInfo(2, "positive_definite", structure="symmetric"),
        },
        "precision_matrix": {
            "df": _DF,
            "precision_matrix": ParamInfo(2, "positive_definite", structure="symmetric"),
        },
        "scale_tril": {
            "df": _DF,
            "scale_tril": ParamInfo(2, "lower_cholesky", structure="lower_triangular"),
        },
    },
    value=_VALUE,
)
