"""Wishart(df, covariance_matrix Σ | precision_matrix Σ⁻¹ | scale_tril L) on positive-definite X.

    log p(X) = (ν-d-1)/2·log|X| - ½·tr(Σ⁻¹X) - νd/2·log 2 - ν/2·log|Σ| - log Γ_d(ν/2)

with ν > d - 1 (a domain that depends on the event size, so it is checked here). NumPyro calls
the parameters concentration / scale_matrix / rate_matrix / scale_tril. Gradients are closed
forms with respect to each matrix entry taken as an independent variable; ParamInfo.structure
tells the comparison layer how to fold them (symmetric part, lower triangle), as for
MultivariateNormal.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from .. import projections
from ..constants import LOG_2
from ..core import Arrays, Family, Options, OracleError, ParamInfo, ValueInfo
from ..pathwise import through_cholesky
from .lkj_cholesky import log_multivariate_gamma


def _eye_where_invalid(mat: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """Identity in place of matrices that cannot be factored (their log_prob is NaN or -inf
    anyway), so one bad element does not stop the others from being evaluated."""
    return np.where(ok[..., None, None], mat, np.eye(mat.shape[-1]))


def triangle_log_det(chol: np.ndarray) -> np.ndarray:
    """log|L Lᵀ| = 2·Σ log|L_ii|."""
    return 2.0 * np.log(np.abs(np.diagonal(chol, axis1=-2, axis2=-1))).sum(-1)


def _chol_or_identity(mat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cholesky factors elementwise over the batch, and where factoring succeeded."""
    flat = mat.reshape(-1, *mat.shape[-2:])
    chol = np.empty_like(flat)
    ok = np.ones(len(flat), dtype=bool)
    for i, m in enumerate(flat):
        try:
            chol[i] = np.linalg.cholesky(m)
        except np.linalg.LinAlgError:
            chol[i], ok[i] = np.eye(m.shape[-1]), False
    return chol.reshape(mat.shape), ok.reshape(mat.shape[:-2])


class Wishart(Family):
    def _event_shape(self, params: Arrays, parametrization: str | None) -> tuple[int, ...]:
        key = parametrization or self.default_parametrization
        shape = np.shape(params[key])
        if shape[-1] != shape[-2]:
            raise OracleError(f"Wishart: {key} must be square (..., d, d), got {shape}")
        return tuple(shape[-2:])

    def _params_valid(self, params: Arrays, parametrization: str, options: Options) -> np.ndarray:
        d = params[parametrization].shape[-1]
        return super()._params_valid(params, parametrization, options) & (params["df"] > d - 1)

    def _scale_tril(self, params: Arrays, parametrization: str) -> np.ndarray:
        """L with Σ = L Lᵀ (identity where the parameter is not a valid matrix)."""
        mat = params[parametrization]
        if parametrization == "scale_tril":
            diag = np.diagonal(mat, axis1=-2, axis2=-1)
            return _eye_where_invalid(
                mat, np.all(diag > 0, axis=-1) & np.all(np.isfinite(mat), axis=(-1, -2))
            )
        chol, _ = _chol_or_identity(mat)
        if parametrization == "covariance_matrix":
            return chol
        # Σ = P⁻¹ = (Lp Lpᵀ)⁻¹ = Lp⁻ᵀ Lp⁻¹; its Cholesky factor is chol(P⁻¹).
        inv = np.linalg.inv(chol)
        cov = np.swapaxes(inv, -1, -2) @ inv
        return _chol_or_identity(0.5 * (cov + np.swapaxes(cov, -1, -2)))[0]

    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        nu = params["df"]
        d = value.shape[-1]
        chol = self._scale_tril(params, parametrization)
        x_chol, _ = _chol_or_identity(value)
        logdet_x = 2.0 * np.log(np.diagonal(x_chol, axis1=-2, axis2=-1)).sum(-1)
        logdet_s = 2.0 * np.log(np.diagonal(chol, axis1=-2, axis2=-1)).sum(-1)
        # tr(Σ⁻¹X) = ‖L⁻¹ Lx‖_F²: no explicit inverse, positive by construction.
        m = np.linalg.solve(chol, x_chol)
        trace = (m * m).sum(axis=(-1, -2))
        return (
            0.5 * (nu - d - 1.0) * logdet_x
            - 0.5 * trace
            - 0.5 * nu * d * LOG_2
            - 0.5 * nu * logdet_s
            - log_multivariate_gamma(0.5 * nu, d)
        )

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        nu = params["df"]
        d = value.shape[-1]
        chol = self._scale_tril(params, parametrization)
        inv_chol = np.linalg.inv(chol)
        sigma_inv = np.swapaxes(inv_chol, -1, -2) @ inv_chol
        x_chol, _ = _chol_or_identity(value)
        x_inv_chol = np.linalg.inv(x_chol)
        x_inv = np.swapaxes(x_inv_chol, -1, -2) @ x_inv_chol
        logdet_x = 2.0 * np.log(np.diagonal(x_chol, axis1=-2, axis2=-1)).sum(-1)
        logdet_s = 2.0 * np.log(np.diagonal(chol, axis1=-2, axis2=-1)).sum(-1)
        j = np.arange(1, d + 1)
        d_mvgamma = 0.5 * special.digamma(0.5 * nu[..., None] + 0.5 * (1 - j)).sum(-1)
        out = {
            "df": 0.5 * logdet_x - 0.5 * d * LOG_2 - 0.5 * logdet_s - d_mvgamma,
            "value": 0.5 * (nu - d - 1.0)[..., None, None] * x_inv - 0.5 * sigma_inv,
        }
        mat = params[parametrization]
        half_nu = 0.5 * nu[..., None, None]
        if parametrization == "covariance_matrix":
            out[parametrization] = -half_nu * sigma_inv + 0.5 * sigma_inv @ value @ sigma_inv
        elif parametrization == "precision_matrix":
            out[parametrization] = half_nu * (chol @ np.swapaxes(chol, -1, -2)) - 0.5 * value
        else:
            # ∂/∂L of -ν Σ log L_ii - ½ tr((LLᵀ)⁻¹X) = -ν diag(1/L_ii) + Σ⁻¹ X L⁻ᵀ (lower part).
            g = np.tril(sigma_inv @ value @ np.swapaxes(inv_chol, -1, -2))
            diag = np.diagonal(mat, axis1=-2, axis2=-1)
            out[parametrization] = g - 2.0 * half_nu * (1.0 / diag)[..., None] * np.eye(d)
        return out

    def _projections(self, params, parametrization, options):
        chol = self._scale_tril(params, parametrization)
        scale = chol @ np.swapaxes(chol, -1, -2)
        as_matrix = (
            projections.gram if self.value.support == "lower_cholesky" else projections.vector
        )
        return projections.chi2_quadratic_forms(params["df"], scale, as_matrix)

    def _pathwise(self, params, draws, weights, parametrization, options):
        """Bartlett's map, torch's and NumPyro's: X = (L A)(L A)ᵀ with A lower-triangular (χ
        draws on its diagonal, normal ones below), read back as A = chol(L⁻¹ X L⁻ᵀ). With A
        held, ∂(W:X)/∂L = (W + Wᵀ)·X·L⁻ᵀ, carried to the parameter L was made from
        (:func:`~.multivariate_normal.through_cholesky`). A draw whose L⁻¹ X L⁻ᵀ does not factor
        is not judged (NaN)."""
        chol = np.broadcast_to(self._scale_tril(params, parametrization), draws.shape)
        inv = np.linalg.inv(chol)
        w = np.broadcast_to(weights, draws.shape)
        with np.errstate(all="ignore"):
            bar_chol = (w + np.swapaxes(w, -1, -2)) @ draws @ np.swapaxes(inv, -1, -2)
            _, ok = _chol_or_identity(inv @ draws @ np.swapaxes(inv, -1, -2))
            bar_chol = np.where(ok[..., None, None], bar_chol, np.nan)
        return {parametrization: through_cholesky(chol, bar_chol, parametrization)}

    def _draw_moments(self, params, weights, parametrization, options):
        """With A = (w + wᵀ)/2 (the draw is symmetric, so s = tr(A·W)): E[s] = df·tr(AΣ) and
        Var(s) = 2·df·tr(AΣAΣ)."""
        chol = self._scale_tril(params, parametrization)
        sigma = chol @ np.swapaxes(chol, -1, -2)
        a = 0.5 * (weights + weights.T)
        a_sigma = a @ sigma
        df = params["df"]
        mean = df * np.trace(a_sigma, axis1=-2, axis2=-1)
        return mean, mean * mean + 2.0 * df * np.trace(a_sigma @ a_sigma, axis1=-2, axis2=-1)

    def _sample(self, params, shape, rng, parametrization):
        """Bartlett: X = L A Aᵀ Lᵀ, A lower-triangular, A_ii² ~ χ²(ν - i), A_ij ~ N(0, 1)."""
        nu = params["df"]
        chol = self._scale_tril(params, parametrization)
        d = chol.shape[-1]
        a = np.tril(rng.standard_normal((*shape, d, d)), -1)
        chi = np.sqrt(rng.chisquare(nu[..., None] - np.arange(d)))
        a = a + chi[..., None] * np.eye(d)
        la = chol @ a
        x = la @ np.swapaxes(la, -1, -2)
        return 0.5 * (x + np.swapaxes(x, -1, -2))

    def _covariance(self, params: Arrays, parametrization: str) -> tuple[np.ndarray, np.ndarray]:
        """(Σ, log|Σ|): Σ as given, L Lᵀ, or U⁻ᵀ U⁻¹ from the precision's factor U (no inverse of
        the precision itself); each log-determinant from a triangular factor."""
        mat = params[parametrization]
        if parametrization == "scale_tril":
            chol = self._scale_tril(params, parametrization)
            return chol @ np.swapaxes(chol, -1, -2), triangle_log_det(chol)
        factor, _ = _chol_or_identity(mat)
        if parametrization == "covariance_matrix":
            return mat, triangle_log_det(factor)
        inv = np.linalg.solve(factor, np.broadcast_to(np.eye(mat.shape[-1]), factor.shape))
        return np.swapaxes(inv, -1, -2) @ inv, -triangle_log_det(factor)

    def _mean(self, params, parametrization, options):
        sigma, _ = self._covariance(params, parametrization)
        return params["df"][..., None, None] * sigma

    def _variance(self, params, parametrization, options):
        # Var X_ij = ν·(Σ_ij² + Σ_ii·Σ_jj).
        sigma, _ = self._covariance(params, parametrization)
        diag = np.diagonal(sigma, axis1=-2, axis2=-1)
        return params["df"][..., None, None] * (
            sigma * sigma + diag[..., :, None] * diag[..., None, :]
        )

    def _mode(self, params, parametrization, options):
        # (ν − p − 1)·Σ for ν > p + 1; below, the density grows without bound towards singular
        # matrices (at ν = p + 1 it is largest at X = 0, outside the support): no mode (torch: NaN).
        sigma, _ = self._covariance(params, parametrization)
        factor = params["df"] - sigma.shape[-1] - 1.0
        return np.where(factor > 0, factor, np.nan)[..., None, None] * sigma

    def _entropy(self, params, parametrization, options):
        # (p + 1)/2·log|Σ| + p(p + 1)/2·log 2 + log Γ_p(ν/2) − (ν − p − 1)/2·ψ_p(ν/2) + νp/2.
        nu = params["df"]
        p = params[parametrization].shape[-1]
        _, log_det = self._covariance(params, parametrization)
        j = np.arange(1, p + 1)
        multi_digamma = special.digamma(0.5 * nu[..., None] + 0.5 * (1 - j)).sum(-1)
        return (
            0.5 * (p + 1) * log_det
            + 0.5 * p * (p + 1) * LOG_2
            + log_multivariate_gamma(0.5 * nu, p)
            - 0.5 * (nu - p - 1.0) * multi_digamma
            + 0.5 * nu * p
        )


_DF = ParamInfo(0, "positive")
#: df reaches the draws through the χ draws on A's diagonal: their derivative by df is a Gamma
#: draw's implicit one, which the map here does not declare.
PATHWISE_WITHOUT_DF = {
    "df": "df reaches the draws through Bartlett's χ² draws, whose derivative by df (a Gamma "
    "draw's implicit one) the oracle's map does not declare"
}

WISHART = Wishart(
    name="Wishart",
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
    value=ValueInfo(2, "positive_definite"),
)
