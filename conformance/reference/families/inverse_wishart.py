"""InverseWishart(concentration ν, scale_matrix Ψ | rate_matrix Ψ⁻¹ | scale_tril S = chol Ψ) on
positive-definite X, and InverseWishartCholesky, the same law of X = L Lᵀ written on its lower
Cholesky factor L (both NumPyro's; torch has none):

    log p(X) = ν/2·log|Ψ| − νp/2·log 2 − log Γ_p(ν/2) − (ν + p + 1)/2·log|X| − ½·tr(Ψ X⁻¹)
    log p(L) = log p(L Lᵀ) + p·log 2 + Σ_i (p − i + 1)·log L_ii      (L ↦ L Lᵀ's Jacobian)

with ν > p − 1 (a domain that depends on the event size). tr(Ψ X⁻¹) = ‖Lx⁻¹ S‖²_F with Lx the
factor of X. scipy.stats.invwishart(df=ν, scale=Ψ) is the same density. Gradients are closed
forms over each matrix entry taken as an independent variable, as for Wishart.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from .. import projections
from ..constants import LOG_2
from ..core import Arrays, Family, Options, OracleError, ParamInfo, ValueInfo
from .lkj_cholesky import log_multivariate_gamma
from .wishart import _chol_or_identity, _eye_where_invalid


def _positive_diagonal(mat: np.ndarray) -> np.ndarray:
    diag = np.diagonal(mat, axis1=-2, axis2=-1)
    return np.all(diag > 0, axis=-1) & np.all(np.isfinite(mat), axis=(-1, -2))


def _inverse_of_factor(chol: np.ndarray) -> np.ndarray:
    """(L Lᵀ)⁻¹ = L⁻ᵀ L⁻¹."""
    inv = np.linalg.inv(chol)
    return np.swapaxes(inv, -1, -2) @ inv


class InverseWishart(Family):
    #: Whether the value is the Cholesky factor L of X (InverseWishartCholesky) or X itself.
    cholesky_value: bool = False

    def _event_shape(self, params: Arrays, parametrization: str | None) -> tuple[int, ...]:
        key = parametrization or self.default_parametrization
        shape = np.shape(params[key])
        if shape[-1] != shape[-2]:
            raise OracleError(f"{self.name}: {key} must be square (..., p, p), got {shape}")
        return tuple(shape[-2:])

    def _params_valid(self, params: Arrays, parametrization: str, options: Options) -> np.ndarray:
        p = params[parametrization].shape[-1]
        ok = super()._params_valid(params, parametrization, options)
        return ok & (params["concentration"] > p - 1)

    def _scale_factor(self, params: Arrays, parametrization: str) -> tuple[np.ndarray, np.ndarray]:
        """(H with Ψ = H Hᵀ, log|Ψ|): H = chol Ψ, the given S, or Lr⁻ᵀ from the rate's factor
        (Ψ = R⁻¹ is never formed and factored again). The identity where the parameter is not
        a valid matrix (its log_prob is NaN anyway)."""
        mat = params[parametrization]
        if parametrization == "scale_tril":
            s = _eye_where_invalid(mat, _positive_diagonal(mat))
            return s, 2.0 * np.log(np.diagonal(s, axis1=-2, axis2=-1)).sum(-1)
        chol, _ = _chol_or_identity(mat)
        log_det = 2.0 * np.log(np.diagonal(chol, axis1=-2, axis2=-1)).sum(-1)
        if parametrization == "scale_matrix":
            return chol, log_det
        return np.swapaxes(np.linalg.inv(chol), -1, -2), -log_det

    def _scale_tril(self, params: Arrays, parametrization: str) -> np.ndarray:
        """S = chol Ψ, for the sampler."""
        h, _ = self._scale_factor(params, parametrization)
        if parametrization != "rate_matrix":
            return h
        psi = h @ np.swapaxes(h, -1, -2)
        return _chol_or_identity(0.5 * (psi + np.swapaxes(psi, -1, -2)))[0]

    def _value_factor(self, value: np.ndarray) -> np.ndarray:
        """Lx with X = Lx Lxᵀ (the identity where the value is outside the support)."""
        if self.cholesky_value:
            return _eye_where_invalid(value, _positive_diagonal(value))
        return _chol_or_identity(value)[0]

    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        nu = params["concentration"]
        p = value.shape[-1]
        h, log_det_psi = self._scale_factor(params, parametrization)
        lx = self._value_factor(value)
        m = np.linalg.solve(lx, h)  # tr(Ψ X⁻¹) = ‖Lx⁻¹ H‖²
        log_diag_x = np.log(np.diagonal(lx, axis1=-2, axis2=-1))
        out = (
            0.5 * nu * log_det_psi
            - 0.5 * nu * p * LOG_2
            - log_multivariate_gamma(0.5 * nu, p)
            - (nu + p + 1.0) * log_diag_x.sum(-1)
            - 0.5 * (m * m).sum(axis=(-1, -2))
        )
        if self.cholesky_value:
            i = np.arange(1, p + 1)
            out = out + p * LOG_2 + ((p - i + 1.0) * log_diag_x).sum(-1)
        return out

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        nu = params["concentration"]
        p = value.shape[-1]
        h, log_det_psi = self._scale_factor(params, parametrization)
        psi = h @ np.swapaxes(h, -1, -2)
        lx = self._value_factor(value)
        p_eye = np.broadcast_to(np.eye(p), lx.shape)
        lx_t = np.swapaxes(lx, -1, -2)
        # By triangular solves, never an explicit inverse: N = Lx⁻¹H, W = Lx⁻ᵀN = X⁻¹H, so
        # X⁻¹ΨX⁻¹ = W Wᵀ and X⁻¹ΨX⁻¹L = Lx⁻ᵀ N Nᵀ.
        n_mat = np.linalg.solve(lx, h)
        x_inv_h = np.linalg.solve(lx_t, n_mat)
        x_inv = np.linalg.solve(lx_t, np.linalg.solve(lx, p_eye))
        x_inv_psi_x_inv = x_inv_h @ np.swapaxes(x_inv_h, -1, -2)
        log_det_x = 2.0 * np.log(np.diagonal(lx, axis1=-2, axis2=-1)).sum(-1)
        j = np.arange(1, p + 1)
        d_mvgamma = 0.5 * special.digamma(0.5 * nu[..., None] + 0.5 * (1 - j)).sum(-1)
        half_nu = 0.5 * nu[..., None, None]
        out = {"concentration": 0.5 * log_det_psi - 0.5 * p * LOG_2 - d_mvgamma - 0.5 * log_det_x}
        if parametrization == "scale_matrix":
            out[parametrization] = half_nu * _inverse_of_factor(h) - 0.5 * x_inv
        elif parametrization == "rate_matrix":
            out[parametrization] = -half_nu * psi + 0.5 * psi @ x_inv @ psi
        else:
            # ν·Σ log S_ii − ½ tr(S Sᵀ X⁻¹): ν/S_ii on the diagonal, −X⁻¹S (lower part).
            diag = np.diagonal(h, axis1=-2, axis2=-1)
            out[parametrization] = np.tril(-x_inv_h) + (nu[..., None] / diag)[..., None] * np.eye(p)
        if self.cholesky_value:
            # −(ν + i)/L_ii on the diagonal, and ∂(−½ tr(Ψ (LLᵀ)⁻¹))/∂L = X⁻¹ Ψ X⁻¹ L (lower part).
            i = np.arange(1, p + 1)
            diag = np.diagonal(lx, axis1=-2, axis2=-1)
            along = np.linalg.solve(lx_t, n_mat @ np.swapaxes(n_mat, -1, -2))
            out["value"] = np.tril(along) - ((nu[..., None] + i) / diag)[..., None] * np.eye(p)
        else:
            out["value"] = -0.5 * (nu + p + 1.0)[..., None, None] * x_inv + 0.5 * x_inv_psi_x_inv
        return out

    def _projections(self, params, parametrization, options):
        s = self._scale_tril(params, parametrization)
        psi = s @ np.swapaxes(s, -1, -2)
        as_matrix = projections.gram if self.cholesky_value else projections.vector
        return projections.inverse_chi2_quadratic_forms(params["concentration"], psi, as_matrix)

    def _sample(self, params, shape, rng, parametrization):
        """L = S A⁻¹ with A lower-triangular, A_ii² ~ χ²(ν − p + i) (i = 1..p), A_ij ~ N(0, 1):
        the Bartlett decomposition of X⁻¹ ~ Wishart(ν, Ψ⁻¹) taken in reverse order, whose
        inverse is again lower-triangular, so L is X's Cholesky factor. A χ² draw of 0 (ν near
        p − 1) is kept at the smallest normal number."""
        nu = params["concentration"]
        s = self._scale_tril(params, parametrization)
        p = s.shape[-1]
        a = np.tril(rng.standard_normal((*shape, p, p)), -1)
        chi2 = rng.chisquare(nu[..., None] - p + 1.0 + np.arange(p))
        a = a + np.sqrt(np.maximum(chi2, np.finfo(float).tiny))[..., None] * np.eye(p)
        lx = np.tril(s @ np.linalg.inv(a))  # exactly lower: inv leaves rounding above
        if self.cholesky_value:
            return lx
        x = lx @ np.swapaxes(lx, -1, -2)
        return 0.5 * (x + np.swapaxes(x, -1, -2))

    def _scale(self, params: Arrays, parametrization: str) -> np.ndarray:
        """Ψ: as given, S Sᵀ, or Lr⁻ᵀ Lr⁻¹ from the rate's factor."""
        if parametrization == "scale_matrix":
            return params["scale_matrix"]
        h, _ = self._scale_factor(params, parametrization)
        return h @ np.swapaxes(h, -1, -2)

    def _mean(self, params, parametrization, options):
        # Ψ/(ν − p − 1) for ν > p + 1. Below, the diagonal's mean is +inf (X_ii is
        # InverseGamma((ν − p + 1)/2, Ψ_ii/2), whose mean is infinite at shape ≤ 1) and the
        # rest's undefined (NaN). NumPyro returns NaN throughout: a declared convention.
        psi = self._scale(params, parametrization)
        p = psi.shape[-1]
        excess = (params["concentration"] - p - 1.0)[..., None, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            found = psi / excess
        below = np.where(np.eye(p, dtype=bool), np.inf, np.nan)
        return np.where(excess > 0, found, below)

    def _variance(self, params, parametrization, options):
        # ((ν − p + 1)·Ψ_ij² + (ν − p − 1)·Ψ_ii·Ψ_jj) / ((ν − p)·(ν − p − 1)²·(ν − p − 3)) for
        # ν > p + 3 (Ψ_ii²·2/((ν − p − 1)²·(ν − p − 3)) on the diagonal). For p + 1 < ν ≤ p + 3
        # the mean is finite and E[X_ij²] is not (the numerator is positive and the formula
        # grows without bound as ν − p → 3): +inf for every entry. For ν ≤ p + 1 there is no
        # mean to vary about: NaN. NumPyro returns NaN for ν ≤ p + 3: a declared convention.
        psi = self._scale(params, parametrization)
        p = psi.shape[-1]
        nu = params["concentration"][..., None, None]
        diag = np.diagonal(psi, axis1=-2, axis2=-1)
        outer = diag[..., :, None] * diag[..., None, :]
        m = nu - p
        with np.errstate(divide="ignore", invalid="ignore"):
            found = ((m + 1.0) * psi * psi + (m - 1.0) * outer) / (m * (m - 1.0) ** 2 * (m - 3.0))
        return np.where(m > 3.0, found, np.where(m > 1.0, np.inf, np.nan))

    def _mode(self, params, parametrization, options):
        psi = self._scale(params, parametrization)
        return psi / (params["concentration"] + psi.shape[-1] + 1.0)[..., None, None]


class InverseWishartCholesky(InverseWishart):
    cholesky_value = True
    # Its value is the factor L of X: InverseWishart's summaries are X's, not L's.
    _mean = Family._mean
    _variance = Family._variance
    _mode = Family._mode


def _parametrizations() -> dict[str, dict[str, ParamInfo]]:
    nu = ParamInfo(0, "positive")
    return {
        "scale_matrix": {
            "concentration": nu,
            "scale_matrix": ParamInfo(2, "positive_definite", structure="symmetric"),
        },
        "rate_matrix": {
            "concentration": nu,
            "rate_matrix": ParamInfo(2, "positive_definite", structure="symmetric"),
        },
        "scale_tril": {
            "concentration": nu,
            "scale_tril": ParamInfo(2, "lower_cholesky", structure="lower_triangular"),
        },
    }


INVERSE_WISHART = InverseWishart(
    name="InverseWishart",
    parametrizations=_parametrizations(),
    value=ValueInfo(2, "positive_definite", structure="symmetric"),
)
INVERSE_WISHART_CHOLESKY = InverseWishartCholesky(
    name="InverseWishartCholesky",
    parametrizations=_parametrizations(),
    value=ValueInfo(2, "lower_cholesky", structure="lower_triangular"),
)
