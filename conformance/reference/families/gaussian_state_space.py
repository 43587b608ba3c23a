"""GaussianStateSpace(num_steps T, transition_matrix A, covariance_matrix Σ | precision_matrix
Σ⁻¹ | scale_tril L, initial_value z_0) (NumPyro's): the linear Gaussian state-space model
z_t = A·z_(t−1) + ε_t, ε_t ~ Normal(0, Σ) independent, t = 1..T, on the path (z_1, …, z_T)
(event (T, n)). The map from innovations to path has Jacobian 1, so

    log p(z) = Σ_t log Normal(z_t − A·z_(t−1) | 0, Σ),

the residuals' density (tests hold it to scipy's multivariate normal of the whole path, whose
covariance is built from A's powers). NumPyro takes A as one 2-D matrix (no batch) and z_0
(default 0) as a batched vector; ``num_steps`` is a static Python int.
"""

from __future__ import annotations

import numpy as np

from .. import projections
from ..constants import LOG_2PI
from ..core import Arrays, Family, Options, OracleError, ParamInfo, ValueInfo
from .wishart import _chol_or_identity, _eye_where_invalid


def _previous(params: Arrays, value: np.ndarray) -> np.ndarray:
    """(z_0, …, z_(T−1)): the initial value, then the path without its last state."""
    z0 = np.broadcast_to(params["initial_value"], value.shape[:-2] + value.shape[-1:])
    return np.concatenate([z0[..., None, :], value[..., :-1, :]], axis=-2)


def _flatten_path(x: np.ndarray) -> np.ndarray:
    """A path (…, T, n) as one vector (…, T·n), time major."""
    return x.reshape(*x.shape[:-2], -1)


class GaussianStateSpace(Family):
    def _event_shape(self, params: Arrays, parametrization: str | None) -> tuple[int, ...]:
        key = parametrization or self.default_parametrization
        n = np.shape(params["transition_matrix"])[-1]
        if np.shape(params[key])[-2:] != (n, n) or np.shape(params["initial_value"])[-1] != n:
            raise OracleError(
                f"GaussianStateSpace: {key} and initial_value must match A's size {n}"
            )
        return (int(np.asarray(params["num_steps"])), n)

    def _factor(self, params: Arrays, parametrization: str) -> np.ndarray:
        """L with Σ = L Lᵀ (the identity where the parameter is not a valid matrix)."""
        mat = params[parametrization]
        if parametrization == "scale_tril":
            diag = np.diagonal(mat, axis1=-2, axis2=-1)
            ok = np.all(diag > 0, axis=-1) & np.all(np.isfinite(mat), axis=(-1, -2))
            return _eye_where_invalid(mat, ok)
        chol, _ = _chol_or_identity(mat)
        if parametrization == "covariance_matrix":
            return chol
        inv = np.linalg.inv(chol)  # Σ = P⁻¹ = Lp⁻ᵀ Lp⁻¹
        return _chol_or_identity(np.swapaxes(inv, -1, -2) @ inv)[0]

    def _residuals(self, params: Arrays, value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        prev = _previous(params, value)
        a = params["transition_matrix"]
        return value - np.einsum("...ij,...tj->...ti", a, prev), prev

    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        steps, n = value.shape[-2:]
        r, _ = self._residuals(params, value)
        if parametrization == "precision_matrix":
            chol_p, _ = _chol_or_identity(params["precision_matrix"])
            w = np.einsum("...ji,...tj->...ti", chol_p, r)  # Lpᵀ r
            half_log_det = -np.log(np.diagonal(chol_p, axis1=-2, axis2=-1)).sum(-1)
        else:
            chol = self._factor(params, parametrization)
            w = np.linalg.solve(chol[..., None, :, :], r[..., None])[..., 0]
            half_log_det = np.log(np.diagonal(chol, axis1=-2, axis2=-1)).sum(-1)
        return -steps * (0.5 * n * LOG_2PI + half_log_det) - 0.5 * (w * w).sum(axis=(-1, -2))

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        steps, n = value.shape[-2:]
        r, prev = self._residuals(params, value)
        a = params["transition_matrix"]
        chol = self._factor(params, parametrization)
        inv = np.linalg.inv(chol)
        sigma_inv = np.swapaxes(inv, -1, -2) @ inv
        if parametrization == "precision_matrix":
            sigma_inv = params["precision_matrix"]
        u = np.einsum("...ij,...tj->...ti", sigma_inv, r)  # Σ⁻¹ r_t
        back = np.einsum("...ji,...tj->...ti", a, u)  # Aᵀ Σ⁻¹ r_t
        d_value = -u.copy()
        d_value[..., :-1, :] += back[..., 1:, :]
        scatter = np.einsum("...ti,...tj->...ij", r, r)  # Σ_t r_t r_tᵀ
        out = {
            "transition_matrix": np.einsum("...ti,...tj->...ij", u, prev),
            "initial_value": back[..., 0, :],
            "value": d_value,
        }
        if parametrization == "covariance_matrix":
            out[parametrization] = -0.5 * steps * sigma_inv + 0.5 * sigma_inv @ scatter @ sigma_inv
        elif parametrization == "precision_matrix":
            chol_p, _ = _chol_or_identity(params["precision_matrix"])
            inv_p = np.linalg.inv(chol_p)
            cov = np.swapaxes(inv_p, -1, -2) @ inv_p  # P⁻¹ from P's own factor
            out[parametrization] = 0.5 * steps * cov - 0.5 * scatter
        else:
            z = np.einsum("...ij,...tj->...ti", inv, r)
            g = np.tril(np.einsum("...ti,...tj->...ij", u, z))
            diag = np.diagonal(chol, axis1=-2, axis2=-1)
            out[parametrization] = g - steps * (1.0 / diag)[..., None] * np.eye(n)
        return out

    def _projections(self, params, parametrization, options):
        """The path is z = m + M·ε with m_t = A^t·z_0 and M block lower triangular (block
        (t, k) = A^(t−k), k ≤ t) over the innovations ε_k ~ N(0, Σ): a Gaussian of covariance
        M (I_T ⊗ Σ) Mᵀ, whose linear projections (of the flattened path) are Normal."""
        chol = self._factor(params, parametrization)
        a = params["transition_matrix"]
        steps = int(np.asarray(params["num_steps"]))
        n = a.shape[-1]
        batch = np.broadcast_shapes(
            a.shape[:-2], chol.shape[:-2], np.shape(params["initial_value"])[:-1]
        )
        powers = [np.broadcast_to(np.eye(n), (*batch, n, n))]
        for _ in range(steps):
            powers.append(np.broadcast_to(a, (*batch, n, n)) @ powers[-1])
        z0 = np.broadcast_to(params["initial_value"], (*batch, n))
        mean = np.concatenate(
            [np.einsum("...ij,...j->...i", powers[t], z0) for t in range(1, steps + 1)], axis=-1
        )
        factor = np.zeros((*batch, steps * n, steps * n))
        root = np.broadcast_to(chol, (*batch, n, n))
        for t in range(steps):
            for k in range(t + 1):
                factor[..., t * n : (t + 1) * n, k * n : (k + 1) * n] = powers[t - k] @ root
        cov = factor @ np.swapaxes(factor, -1, -2)
        return projections.gaussian(mean, cov, _flatten_path)

    def _sample(self, params, shape, rng, parametrization):
        chol = self._factor(params, parametrization)
        a = params["transition_matrix"]
        steps = int(np.asarray(params["num_steps"]))
        n = a.shape[-1]
        z = np.broadcast_to(params["initial_value"], (*shape, n))
        path = []
        for _ in range(steps):
            eps = np.einsum("...ij,...j->...i", chol, rng.standard_normal((*shape, n)))
            z = np.einsum("...ij,...j->...i", a, z) + eps
            path.append(z)
        return np.stack(path, axis=-2)


def _parametrization(name: str, info: ParamInfo) -> dict[str, ParamInfo]:
    return {
        "num_steps": ParamInfo(0, "positive_integer", integer=True, static=True),
        "transition_matrix": ParamInfo(2, "real"),
        name: info,
        "initial_value": ParamInfo(1, "real"),
    }


GAUSSIAN_STATE_SPACE = GaussianStateSpace(
    name="GaussianStateSpace",
    parametrizations={
        "covariance_matrix": _parametrization(
            "covariance_matrix", ParamInfo(2, "positive_definite", structure="symmetric")
        ),
        "precision_matrix": _parametrization(
            "precision_matrix", ParamInfo(2, "positive_definite", structure="symmetric")
        ),
        "scale_tril": _parametrization(
            "scale_tril", ParamInfo(2, "lower_cholesky", structure="lower_triangular")
        ),
    },
    value=ValueInfo(2, "real"),
)
