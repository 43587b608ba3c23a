"""MultivariateNormal by ``covariance_matrix``, ``scale_tril`` or ``precision_matrix``.

Gradients are closed forms with respect to each matrix entry taken as an independent variable;
the comparison layer applies the structure conventions (symmetric part, lower triangle).
"""

from __future__ import annotations

import numpy as np

from .. import projections
from ..constants import LOG_2PI
from ..core import Arrays, Family, OracleError, ParamInfo, ValueInfo
from ..pathwise import fold_to, through_cholesky
from .wishart import _chol_or_identity, triangle_log_det


def _solve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.linalg.solve(a, b[..., None])[..., 0]


def gaussian_entropy(n: int, log_det_cov: np.ndarray) -> np.ndarray:
    """½·(n·(1 + log 2π) + log|Σ|), a Gaussian's on ℝⁿ."""
    return 0.5 * (n * (1.0 + LOG_2PI) + log_det_cov)


def covariance_diagonal_and_log_det(
    mat: np.ndarray, parametrization: str
) -> tuple[np.ndarray, np.ndarray]:
    """(diag Σ, log|Σ|) from Σ, from its factor L (diag Σ = row sums of L²) or from the
    precision P = U Uᵀ (diag P⁻¹ = column sums of (U⁻¹)², a triangular solve, no inverse of P),
    each log-determinant from a triangular factor. A matrix that does not factor (an invalid
    parameter, NaN from the caller) stands in as the identity."""
    if parametrization == "scale_tril":
        return (mat * mat).sum(-1), triangle_log_det(mat)
    chol, _ = _chol_or_identity(mat)
    if parametrization == "covariance_matrix":
        return np.diagonal(mat, axis1=-2, axis2=-1).copy(), triangle_log_det(chol)
    inv = np.linalg.solve(chol, np.broadcast_to(np.eye(mat.shape[-1]), chol.shape))
    return (inv * inv).sum(-2), -triangle_log_det(chol)


class MultivariateNormal(Family):
    def _event_shape(self, params: Arrays, parametrization: str | None) -> tuple[int, ...]:
        key = parametrization or self.default_parametrization
        n = np.shape(params["loc"])[-1]
        m = np.shape(params[key])
        if m[-2:] != (n, n):
            raise OracleError(
                f"MultivariateNormal: loc has event size {n} but {key} has shape {m}; "
                f"expected (..., {n}, {n})"
            )
        return (n,)

    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options
    ) -> np.ndarray:
        d = value - params["loc"]
        n = d.shape[-1]
        mat = params[parametrization]
        if parametrization == "precision_matrix":
            chol = np.linalg.cholesky(mat)
            half_logdet_cov = -np.log(np.diagonal(chol, axis1=-2, axis2=-1)).sum(-1)
            maha = np.einsum("...i,...ij,...j->...", d, mat, d)
        else:
            chol = np.linalg.cholesky(mat) if parametrization == "covariance_matrix" else mat
            z = _solve(chol, d)
            half_logdet_cov = np.log(np.abs(np.diagonal(chol, axis1=-2, axis2=-1))).sum(-1)
            maha = (z * z).sum(-1)
        return -0.5 * (n * LOG_2PI + maha) - half_logdet_cov

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options
    ) -> dict[str, np.ndarray]:
        d = value - params["loc"]
        mat = params[parametrization]
        if parametrization == "covariance_matrix":
            w = _solve(mat, d)
            g = -0.5 * np.linalg.inv(mat) + 0.5 * w[..., :, None] * w[..., None, :]
        elif parametrization == "scale_tril":
            z = _solve(mat, d)
            w = _solve(np.swapaxes(mat, -1, -2), z)
            g = np.tril(w[..., :, None] * z[..., None, :])
            diag = np.diagonal(mat, axis1=-2, axis2=-1)
            g = g - np.einsum("...i,ij->...ij", 1.0 / diag, np.eye(d.shape[-1]))
        else:
            w = np.einsum("...ij,...j->...i", mat, d)
            g = 0.5 * np.linalg.inv(mat) - 0.5 * d[..., :, None] * d[..., None, :]
        return {"loc": w, parametrization: g, "value": -w}

    @staticmethod
    def _covariance(params: Arrays, parametrization: str) -> np.ndarray:
        mat = params[parametrization]
        if parametrization == "scale_tril":
            return mat @ np.swapaxes(mat, -1, -2)
        if parametrization == "precision_matrix":
            return np.linalg.inv(mat)
        return mat

    def _projections(self, params, parametrization, options):
        cov = self._covariance(params, parametrization)
        return projections.gaussian(params["loc"], cov, projections.vector)

    def _draw_moments(self, params, weights, parametrization, options):
        """E[s] = w·loc and E[s²] = (w·loc)² + wᵀΣw, whatever root of Σ the draws use: what
        judges a sampler that draws through another root than Cholesky's (GPyTorch's
        root decompositions) in expectation."""
        mean = (weights * params["loc"]).sum(-1)
        cov = self._covariance(params, parametrization)
        return mean, mean * mean + np.einsum("i,...ij,j->...", weights, cov, weights)

    def _pathwise(self, params, draws, weights, parametrization, options):
        """x = loc + L·ε with L the lower Cholesky factor of the covariance (torch's and NumPyro's
        map for every parametrisation: a precision's is chol(P⁻¹)), so ∂(Σ_j w_j·x_j)/∂loc = w
        and ∂/∂L_jk = w_j·ε_k; a covariance's by Cholesky's reverse mode (Σ̄ = L⁻ᵀ Φ(Lᵀ L̄) L⁻¹, Φ the
        lower triangle with half its diagonal; compared by its symmetric part), a precision's
        then by Σ = P⁻¹ (P̄ = −Σ Σ̄ Σ)."""
        loc, mat = params["loc"], params[parametrization]
        if parametrization == "scale_tril":
            chol = mat
        else:
            cov = np.linalg.inv(mat) if parametrization == "precision_matrix" else mat
            chol = np.linalg.cholesky(cov)
        chol = np.broadcast_to(chol, (*draws.shape[:-1], *chol.shape[-2:]))
        noise = _solve(chol, draws - loc)
        w = np.broadcast_to(weights, noise.shape)
        bar_chol = w[..., :, None] * noise[..., None, :]
        found = {"loc": fold_to(w, loc)}
        found[parametrization] = through_cholesky(chol, bar_chol, parametrization)
        return found

    def _sample(self, params, shape, rng, parametrization):
        mat = params[parametrization]
        if parametrization == "covariance_matrix":
            chol = np.linalg.cholesky(mat)
        elif parametrization == "scale_tril":
            chol = mat
        else:
            chol = np.linalg.cholesky(np.linalg.inv(mat))
        eps = rng.standard_normal((*shape, mat.shape[-1]))
        return params["loc"] + np.einsum("...ij,...j->...i", chol, eps)

    def _mean(self, params, parametrization, options):
        return params["loc"]

    def _variance(self, params, parametrization, options):
        return covariance_diagonal_and_log_det(params[parametrization], parametrization)[0]

    def _mode(self, params, parametrization, options):
        return params["loc"]

    def _entropy(self, params, parametrization, options):
        mat = params[parametrization]
        _, log_det = covariance_diagonal_and_log_det(mat, parametrization)
        return gaussian_entropy(mat.shape[-1], log_det)


_LOC = ParamInfo(1, "real")
MULTIVARIATE_NORMAL = MultivariateNormal(
    name="MultivariateNormal",
    parametrizations={
        "covariance_matrix": {
            "loc": _LOC,
            "covariance_matrix": ParamInfo(2, "positive_definite", structure="symmetric"),
        },
        "scale_tril": {
            "loc": _LOC,
            "scale_tril": ParamInfo(2, "lower_cholesky", structure="lower_triangular"),
        },
        "precision_matrix": {
            "loc": _LOC,
            "precision_matrix": ParamInfo(2, "positive_definite", structure="symmetric"),
        },
    },
    value=ValueInfo(1, "real_vector"),
)
