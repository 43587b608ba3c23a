"""MatrixNormal(loc M, scale_tril_row L_r, scale_tril_column L_c) on n × p real matrices
(NumPyro's; torch has none): vec(X) ~ Normal(vec M, V ⊗ U) with U = L_r L_rᵀ (rows) and
V = L_c L_cᵀ (columns),

    log p(X) = −np/2·log 2π − p·log|L_r| − n·log|L_c| − ½‖L_r⁻¹ (X − M) L_c⁻ᵀ‖²_F

(scipy.stats.matrix_normal(M, U, V) is the same density). Gradients are closed forms, the
factors' on their lower triangles as for MultivariateNormal's scale_tril.
"""

from __future__ import annotations

import numpy as np

from .. import projections
from ..constants import LOG_2PI
from ..core import Arrays, Family, Options, OracleError, ParamInfo, ValueInfo
from ..pathwise import fold_to


def _valid_or_identity(chol: np.ndarray) -> np.ndarray:
    """The identity in place of a factor outside lower_cholesky (its log_prob is NaN anyway)."""
    diag = np.diagonal(chol, axis1=-2, axis2=-1)
    ok = np.all(diag > 0, axis=-1) & np.all(np.isfinite(chol), axis=(-1, -2))
    return np.where(ok[..., None, None], chol, np.eye(chol.shape[-1]))


def _log_diag(chol: np.ndarray) -> np.ndarray:
    return np.log(np.diagonal(chol, axis1=-2, axis2=-1)).sum(-1)


class MatrixNormal(Family):
    def _event_shape(self, params: Arrays, parametrization: str | None) -> tuple[int, ...]:
        n, p = np.shape(params["loc"])[-2:]
        row, col = (
            np.shape(params["scale_tril_row"])[-2:],
            np.shape(params["scale_tril_column"])[-2:],
        )
        if row != (n, n) or col != (p, p):
            raise OracleError(
                f"MatrixNormal: loc's event ({n}, {p}) needs scale_tril_row ({n}, {n}) and "
                f"scale_tril_column ({p}, {p}), got {row} and {col}"
            )
        return (n, p)

    def _standardized(self, params: Arrays, value: np.ndarray):
        lr = _valid_or_identity(params["scale_tril_row"])
        lc = _valid_or_identity(params["scale_tril_column"])
        b = np.linalg.solve(lr, value - params["loc"])  # L_r⁻¹ (X − M)
        a = np.swapaxes(np.linalg.solve(lc, np.swapaxes(b, -1, -2)), -1, -2)  # … L_c⁻ᵀ
        return lr, lc, a

    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        n, p = value.shape[-2:]
        lr, lc, a = self._standardized(params, value)
        return (
            -0.5 * n * p * LOG_2PI
            - p * _log_diag(lr)
            - n * _log_diag(lc)
            - 0.5 * (a * a).sum(axis=(-1, -2))
        )

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        n, p = value.shape[-2:]
        lr, lc, a = self._standardized(params, value)
        # W = U⁻¹ (X − M) V⁻¹ = L_r⁻ᵀ A L_c⁻¹.
        w = np.linalg.solve(np.swapaxes(lr, -1, -2), a)
        w = np.swapaxes(np.linalg.solve(np.swapaxes(lc, -1, -2), np.swapaxes(w, -1, -2)), -1, -2)
        # −½‖L_r⁻¹ B‖² over L_r (B = (X − M) L_c⁻ᵀ) is tril(L_r⁻ᵀ A Aᵀ); over L_c likewise.
        row = np.tril(np.linalg.solve(np.swapaxes(lr, -1, -2), a) @ np.swapaxes(a, -1, -2))
        col = np.tril(np.linalg.solve(np.swapaxes(lc, -1, -2), np.swapaxes(a, -1, -2)) @ a)
        row = row - p * (1.0 / np.diagonal(lr, axis1=-2, axis2=-1))[..., None] * np.eye(n)
        col = col - n * (1.0 / np.diagonal(lc, axis1=-2, axis2=-1))[..., None] * np.eye(p)
        return {"loc": w, "scale_tril_row": row, "scale_tril_column": col, "value": -w}

    def _projections(self, params, parametrization, options):
        # X = M + Lr Z Lcᵀ: row-major vec(X) has covariance U ⊗ V, U = Lr Lrᵀ, V = Lc Lcᵀ.
        lr, lc = params["scale_tril_row"], params["scale_tril_column"]
        u, v = lr @ np.swapaxes(lr, -1, -2), lc @ np.swapaxes(lc, -1, -2)
        n, p = u.shape[-1], v.shape[-1]
        cov = (u[..., :, None, :, None] * v[..., None, :, None, :]).reshape(
            *u.shape[:-2], n * p, n * p
        )
        mean = params["loc"].reshape(*params["loc"].shape[:-2], n * p)
        return projections.gaussian(mean, cov, lambda x: x.reshape(*x.shape[:-2], n * p))

    def _pathwise(self, params, draws, weights, parametrization, options):
        """x = loc + L_r·ε·L_cᵀ (NumPyro's), ε = L_r⁻¹(x − loc)L_c⁻ᵀ read back: with W the
        weights, ∂(W:x)/∂loc = W, ∂/∂L_r = W·L_c·εᵀ and ∂/∂L_c = Wᵀ·L_r·ε."""
        loc, lr, lc = params["loc"], params["scale_tril_row"], params["scale_tril_column"]
        w = np.broadcast_to(weights, draws.shape)
        left = np.linalg.solve(lr, draws - loc)  # L_r⁻¹(x − loc) = ε·L_cᵀ
        eps = np.swapaxes(np.linalg.solve(lc, np.swapaxes(left, -1, -2)), -1, -2)
        return {
            "loc": fold_to(w, loc),
            "scale_tril_row": w @ lc @ np.swapaxes(eps, -1, -2),
            "scale_tril_column": np.swapaxes(w, -1, -2) @ lr @ eps,
        }

    def _sample(self, params, shape, rng, parametrization):
        lr, lc = params["scale_tril_row"], params["scale_tril_column"]
        n, p = lr.shape[-1], lc.shape[-1]
        z = rng.standard_normal((*shape, n, p))
        return params["loc"] + lr @ z @ np.swapaxes(lc, -1, -2)

    def _mean(self, params, parametrization, options):
        return params["loc"]


MATRIX_NORMAL = MatrixNormal(
    name="MatrixNormal",
    parametrizations={
        "scale_tril": {
            "loc": ParamInfo(2, "real"),
            "scale_tril_row": ParamInfo(2, "lower_cholesky", structure="lower_triangular"),
            "scale_tril_column": ParamInfo(2, "lower_cholesky", structure="lower_triangular"),
        }
    },
    value=ValueInfo(2, "real"),
)
