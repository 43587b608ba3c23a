"""CAR(loc μ, correlation α, conditional_precision τ, adj_matrix W) (NumPyro's conditional
autoregression): a MultivariateNormal with precision Q = τ·(D − αW), D = diag(W's row sums),

    log p(x) = ½·(−n·log 2π + log det Q − (x − μ)ᵀ Q (x − μ)),

for |α| < 1 and W symmetric, nonnegative, every site with a neighbour (then Q is positive
definite). The oracle takes log det Q from a Cholesky factor of Q itself, where NumPyro uses
the eigenvalues of D^(−½) W D^(−½). W is a structure, not a parameter one differentiates
(NumPyro computes its eigenvalues, whose derivative does not exist at the repeated ones a
graph has): it is held constant (``integer``), and passed as a float array.
"""

from __future__ import annotations

import numpy as np

from .. import projections
from ..constants import LOG_2PI
from ..core import Arrays, Family, Options, OracleError, ParamInfo, ValueInfo
from ..pathwise import fold_to, through_cholesky
from .wishart import _chol_or_identity


class CAR(Family):
    def _event_shape(self, params: Arrays, parametrization: str | None) -> tuple[int, ...]:
        shape, n = np.shape(params["adj_matrix"]), np.shape(params["loc"])[-1]
        if shape[-1] != shape[-2] or n not in (1, shape[-1]):
            raise OracleError(f"CAR: adj_matrix {shape} is not (..., n, n) for loc of size {n}")
        return (shape[-1],)

    def _scaled(self, params: Arrays) -> tuple[np.ndarray, np.ndarray]:
        """D − αW, and W."""
        w = params["adj_matrix"]
        d = w.sum(-1)[..., None] * np.eye(w.shape[-1])
        return d - params["correlation"][..., None, None] * w, w

    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        tau = params["conditional_precision"]
        m, _ = self._scaled(params)
        n = value.shape[-1]
        chol, _ = _chol_or_identity(m)
        phi = value - params["loc"]
        quad = np.einsum("...i,...ij,...j->...", phi, m, phi)
        log_det = n * np.log(tau) + 2.0 * np.log(np.diagonal(chol, axis1=-2, axis2=-1)).sum(-1)
        return 0.5 * (-n * LOG_2PI + log_det - tau * quad)

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        tau = params["conditional_precision"]
        m, w = self._scaled(params)
        n = value.shape[-1]
        chol, _ = _chol_or_identity(m)
        inv = np.linalg.inv(chol)
        m_inv = np.swapaxes(inv, -1, -2) @ inv
        phi = value - params["loc"]
        q_phi = tau[..., None] * np.einsum("...ij,...j->...i", m, phi)
        d_loc = q_phi if params["loc"].shape[-1] == n else q_phi.sum(-1, keepdims=True)
        return {
            "loc": d_loc,
            "correlation": 0.5
            * (
                -(m_inv * w).sum(axis=(-1, -2))
                + tau * np.einsum("...i,...ij,...j->...", phi, w, phi)
            ),
            "conditional_precision": 0.5
            * (n / tau - np.einsum("...i,...ij,...j->...", phi, m, phi)),
            "value": -q_phi,
        }

    def _pathwise(self, params, draws, weights, parametrization, options):
        """NumPyro's: a MultivariateNormal with precision Q = τ·(D − αW), so x = loc + L·ε with
        L = chol(Q⁻¹), ε = L⁻¹(x − loc) read back. ∂(w·x)/∂loc = w; Q's cotangent by
        Cholesky's reverse mode (:func:`~reference.pathwise.through_cholesky`), then
        ∂/∂α = Σ Q̄ ⊙ (−τW) and ∂/∂τ = Σ Q̄ ⊙ (D − αW)."""
        tau = params["conditional_precision"][..., None, None]
        m, w_adj = self._scaled(params)
        chol = np.linalg.cholesky(np.linalg.inv(tau * m))
        noise = np.linalg.solve(chol, (draws - params["loc"])[..., None])[..., 0]
        w = np.broadcast_to(weights, draws.shape)
        bar_q = through_cholesky(chol, w[..., :, None] * noise[..., None, :], "precision_matrix")
        return {
            "loc": fold_to(w, params["loc"]),
            "correlation": (bar_q * -(tau * w_adj)).sum((-1, -2)),
            "conditional_precision": (bar_q * m).sum((-1, -2)),
        }

    def _projections(self, params, parametrization, options):
        m, _ = self._scaled(params)
        cov = np.linalg.inv(params["conditional_precision"][..., None, None] * m)
        return projections.gaussian(params["loc"], cov, projections.vector)

    def _sample(self, params, shape, rng, parametrization):
        m, _ = self._scaled(params)
        q = params["conditional_precision"][..., None, None] * m
        chol = np.linalg.cholesky(q)
        eps = rng.standard_normal((*shape, m.shape[-1]))
        # x − μ = L⁻ᵀ ε has covariance (L Lᵀ)⁻¹ = Q⁻¹.
        return params["loc"] + np.linalg.solve(np.swapaxes(chol, -1, -2), eps[..., None])[..., 0]

    def _mean(self, params, parametrization, options):
        return params["loc"]


CAR_FAMILY = CAR(
    name="CAR",
    parametrizations={
        "adjacency": {
            "loc": ParamInfo(1, "real"),
            "correlation": ParamInfo(0, "open_interval:-1,1"),
            "conditional_precision": ParamInfo(0, "positive"),
            "adj_matrix": ParamInfo(2, "adjacency_matrix", integer=True),
        }
    },
    value=ValueInfo(1, "real_vector"),
)
