"""LowRankMultivariateNormal(loc, cov_factor W, cov_diag D): covariance Σ = W Wᵀ + diag(D).

The oracle factors the dense Σ in float64 (event sizes in cases are small); frameworks use the
Woodbury/capacitance form, so a diff measures their arithmetic against the exact density.
Gradients are closed forms with w = Σ⁻¹(x - μ): ∂/∂μ = w, ∂/∂W = (w wᵀ - Σ⁻¹) W,
∂/∂D = ½(w² - diag Σ⁻¹), ∂/∂x = -w.
"""

from __future__ import annotations

import numpy as np

from .. import projections
from ..constants import LOG_2PI
from ..core import Arrays, Family, Options, OracleError, ParamInfo, ValueInfo
from ..pathwise import fold_to
from .multivariate_normal import gaussian_entropy
from .wishart import triangle_log_det


def low_rank_covariance(cov_factor: np.ndarray, cov_diag: np.ndarray) -> np.ndarray:
    """W Wᵀ + diag(D). Where D is not positive (an invalid-parameter case, whose log_prob the
    base class sets to NaN) D = 1 stands in, so the factorisation of the other elements runs."""
    safe = np.where(np.isfinite(cov_diag) & (cov_diag > 0), cov_diag, 1.0)
    factor = np.where(np.isfinite(cov_factor), cov_factor, 0.0)
    outer = factor @ np.swapaxes(factor, -1, -2)
    return outer + safe[..., :, None] * np.eye(cov_diag.shape[-1])


class LowRankMultivariateNormal(Family):
    def _event_shape(self, params: Arrays, parametrization: str | None) -> tuple[int, ...]:
        n = np.shape(params["loc"])[-1]
        w, d = np.shape(params["cov_factor"]), np.shape(params["cov_diag"])
        if w[-2] != n or d[-1] != n:
            raise OracleError(
                f"LowRankMultivariateNormal: loc has event size {n}, so cov_factor must be "
                f"(..., {n}, rank) and cov_diag (..., {n}); got {w} and {d}"
            )
        return (n,)

    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        cov = low_rank_covariance(params["cov_factor"], params["cov_diag"])
        chol = np.linalg.cholesky(cov)
        z = np.linalg.solve(chol, (value - params["loc"])[..., None])[..., 0]
        half_logdet = np.log(np.diagonal(chol, axis1=-2, axis2=-1)).sum(-1)
        return -0.5 * (value.shape[-1] * LOG_2PI + (z * z).sum(-1)) - half_logdet

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        factor = params["cov_factor"]
        cov = low_rank_covariance(factor, params["cov_diag"])
        inv = np.linalg.inv(cov)
        w = np.einsum("...ij,...j->...i", inv, value - params["loc"])
        outer = w[..., :, None] * w[..., None, :]
        return {
            "loc": w,
            "cov_factor": (outer - inv) @ factor,
            "cov_diag": 0.5 * (w * w - np.diagonal(inv, axis1=-2, axis2=-1)),
            "value": -w,
        }

    def _projections(self, params, parametrization, options):
        cov = low_rank_covariance(params["cov_factor"], params["cov_diag"])
        return projections.gaussian(params["loc"], cov, projections.vector)

    def _pathwise(self, params, draws, weights, parametrization, options):
        """x = loc + W·ε₁ + √D·ε₂ (torch's and NumPyro's): ∂(w·x)/∂loc = w; W and D multiply
        noises the draw does not show (``pathwise_without``)."""
        return {"loc": fold_to(np.broadcast_to(weights, draws.shape), params["loc"])}

    def _draw_moments(self, params, weights, parametrization, options):
        """A Gaussian of covariance W·Wᵀ + D: E[s] = w·loc and
        E[s²] = (w·loc)² + ‖Wᵀw‖² + Σ w_i²·D_i."""
        mean = (weights * params["loc"]).sum(-1)
        along = np.einsum("...ij,...i->...j", params["cov_factor"], weights)
        spread = (along * along).sum(-1) + (weights * weights * params["cov_diag"]).sum(-1)
        return mean, mean * mean + spread

    def _sample(self, params, shape, rng, parametrization):
        factor = params["cov_factor"]
        z_rank = rng.standard_normal((*shape, factor.shape[-1]))
        z_diag = rng.standard_normal((*shape, factor.shape[-2]))
        low = np.einsum("...ij,...j->...i", factor, z_rank)
        return params["loc"] + low + np.sqrt(params["cov_diag"]) * z_diag

    def _mean(self, params, parametrization, options):
        return params["loc"]

    def _variance(self, params, parametrization, options):
        factor = params["cov_factor"]
        return (factor * factor).sum(-1) + params["cov_diag"]

    def _mode(self, params, parametrization, options):
        return params["loc"]

    def _entropy(self, params, parametrization, options):
        # log|W Wᵀ + D| = Σ log D + log|I + Wᵀ D⁻¹ W| (the determinant lemma), the capacitance's
        # by its Cholesky factor: its eigenvalues are ≥ 1, so it is always well conditioned.
        factor, diag = params["cov_factor"], params["cov_diag"]
        safe = np.where(np.isfinite(diag) & (diag > 0), diag, 1.0)
        scaled = np.where(np.isfinite(factor), factor, 0.0) / np.sqrt(safe)[..., None]
        capacitance = np.swapaxes(scaled, -1, -2) @ scaled + np.eye(factor.shape[-1])
        chol = np.linalg.cholesky(capacitance)
        log_det = np.log(safe).sum(-1) + triangle_log_det(chol)
        return gaussian_entropy(diag.shape[-1], log_det)


LOW_RANK_MULTIVARIATE_NORMAL = LowRankMultivariateNormal(
    name="LowRankMultivariateNormal",
    pathwise_without={
        name: "x = loc + W·ε₁ + √D·ε₂ has more noises than coordinates: the draw does not show "
        "the ε₁ and ε₂ its derivative by W and D multiplies"
        for name in ("cov_factor", "cov_diag")
    },
    parametrizations={
        "cov_factor": {
            "loc": ParamInfo(1, "real"),
            "cov_factor": ParamInfo(2, "real"),
            "cov_diag": ParamInfo(1, "positive"),
        }
    },
    value=ValueInfo(1, "real_vector"),
)
