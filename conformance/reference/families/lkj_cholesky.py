"""LKJCholesky(dimension d, concentration η): Cholesky factors L of LKJ correlation matrices.

The density is with respect to Lebesgue measure on L's strictly-lower entries (each row a point
on a hemisphere, parametrised by its first i-1 entries):

    log p(L) = Σ_{i=2..d} (d - i + 2η - 2)·log L_ii - log c_d(η)

— det(LLᵀ)^(η-1) = Π L_ii^(2η-2) times the Jacobian Π L_ii^(d-i) of L ↦ LLᵀ. The normaliser is
Lewandowski, Kurowicka & Joe (2009), in its multivariate-gamma form:

    log c_d(η) = (d-1)/2·log π + log Γ_{d-1}(η + (d-2)/2) - (d-1)·log Γ(η + (d-1)/2)

(tests check it against the paper's vine product and against quadrature). ``dimension`` is a
static Python int (torch and NumPyro index with it) and must be at least 2.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from .. import projections
from ..constants import LOG_PI
from ..core import Arrays, Family, Options, OracleError, ParamInfo, ValueInfo


def log_multivariate_gamma(a: np.ndarray, p: int) -> np.ndarray:
    """log Γ_p(a) = p(p-1)/4·log π + Σ_{j=1..p} log Γ(a + (1-j)/2), elementwise in ``a``."""
    j = np.arange(1, p + 1)
    return 0.25 * p * (p - 1) * LOG_PI + special.gammaln(a[..., None] + 0.5 * (1 - j)).sum(-1)


def _dim(params: Arrays) -> int:
    return int(np.asarray(params["dimension"]))


def _half_offsets(d: int) -> np.ndarray:
    """(d − 2)/2, …, ½, 0: the multivariate gamma's arguments are η plus these. Adding them to
    η keeps η's digits; (η + (d − 1)/2) − ½ − (j − 1)/2 loses them for tiny η (1e-10 of
    η = 1e-6 in float64)."""
    return 0.5 * (d - 1 - np.arange(1, d))


def log_lkj_normalizer(eta: np.ndarray, d: int) -> np.ndarray:
    """log of the normaliser: (d−1)/2·log π + log Γ_{d−1}(η + (d−2)/2) − (d−1)·log Γ(η + (d−1)/2),
    the multivariate gamma written out so that each argument is η plus an exact offset."""
    eta = np.asarray(eta, dtype=np.float64)
    multivariate_gamma = 0.25 * (d - 1) * (d - 2) * LOG_PI + special.gammaln(
        eta[..., None] + _half_offsets(d)
    ).sum(-1)
    return (
        0.5 * (d - 1) * LOG_PI + multivariate_gamma - (d - 1) * special.gammaln(eta + 0.5 * (d - 1))
    )


def _orders(eta: np.ndarray, d: int) -> np.ndarray:
    """The exponents d - i + 2η - 2 of L_ii for i = 2..d (last axis)."""
    i = np.arange(2, d + 1)
    return (d - i) + 2.0 * eta[..., None] - 2.0


class LKJCholesky(Family):
    def _event_shape(self, params: Arrays, parametrization: str | None) -> tuple[int, ...]:
        d = _dim(params)
        return (d, d)

    def log_prob_shape(
        self, params: Arrays, value: np.ndarray, parametrization: str | None = None
    ) -> tuple[int, ...]:
        """As the base class; but with no valid dimension (d < 2: no distribution, log_prob is
        NaN) the value's own trailing (n, n) is taken as the event. Shape-only case validation
        passes a placeholder 0 for every parameter, static ones included, and a literal value
        of shape (..., d, d) must still validate."""
        if _dim(params) >= 2:
            return super().log_prob_shape(params, value, parametrization)
        batch = self.batch_shape(params, parametrization)
        vshape = np.shape(value)
        if len(vshape) < 2 or vshape[-1] != vshape[-2]:
            raise OracleError(f"LKJCholesky: value shape {vshape} is not (..., n, n)")
        try:
            return tuple(np.broadcast_shapes(vshape[:-2], batch))
        except ValueError:
            raise OracleError(
                f"LKJCholesky: value batch shape {vshape[:-2]} does not broadcast with {batch}"
            ) from None

    def _params_valid(self, params: Arrays, parametrization: str, options: Options) -> np.ndarray:
        return super()._params_valid(params, parametrization, options) & (_dim(params) >= 2)

    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        d, eta = _dim(params), params["concentration"]
        if d < 2:
            return np.full(eta.shape, np.nan)
        diag = np.diagonal(value, axis1=-2, axis2=-1)[..., 1:]
        return (_orders(eta, d) * np.log(diag)).sum(-1) - log_lkj_normalizer(eta, d)

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        d, eta = _dim(params), params["concentration"]
        d_norm = special.digamma(eta[..., None] + _half_offsets(d)).sum(-1) - (
            d - 1
        ) * special.digamma(eta + 0.5 * (d - 1))
        diag = np.diagonal(value, axis1=-2, axis2=-1)
        d_value = np.zeros(value.shape)
        idx = np.arange(1, d)
        d_value[..., idx, idx] = _orders(eta, d) / diag[..., 1:]
        return {"concentration": 2.0 * np.log(diag[..., 1:]).sum(-1) - d_norm, "value": d_value}

    def _projections(self, params, parametrization, options):
        as_corr = projections.gram if self.value.support == "corr_cholesky" else projections.vector
        return projections.lkj_correlations(params["concentration"], _dim(params), as_corr)

    def _draw_moments(self, params, weights, parametrization, options):
        """Row i of the factor is (√y_i·u_i, √(1 − y_i)) with y_i ~ Beta(i/2, η + (d − 1 − i)/2)
        and u_i uniform on the unit sphere, the rows independent (the onion method); and
        L ↦ D L D for D = diag(±1) keeps the law. So E[L_ij] = 0 off the diagonal, the entries
        are uncorrelated but for the diagonal's, E[L_ij²] = v = 1/(2η + d − 1) (j < i),
        E[L_ii²] = 1 − i·v, and m_i = E[L_ii] = B(b_i + ½, i/2)/B(b_i, i/2), b_i = η + (d − 1 − i)/2.
        With s = Σ w·L: E[s] = Σ w_ii m_i and
        E[s²] = (Σ w_ii m_i)² − Σ w_ii² m_i² + Σ w_ii²(1 − i·v) + v·Σ_{i>j} w_ij²."""
        d, eta = _dim(params), params["concentration"]
        i = np.arange(d, dtype=np.float64)
        b = eta[..., None] + 0.5 * (d - 1 - i)
        a = 0.5 * i
        log_m = (
            special.gammaln(b + 0.5) - special.gammaln(b) + special.gammaln(a + b)
            - special.gammaln(a + b + 0.5)
        )  # fmt: skip
        m = np.where(i == 0, 1.0, np.exp(log_m))
        v = 1.0 / (2.0 * eta + d - 1.0)
        diag = np.diagonal(weights)
        below = float((np.tril(weights, -1) ** 2).sum())
        mean = (diag * m).sum(-1)
        second = (
            mean**2
            - (diag**2 * m**2).sum(-1)
            + float((diag**2).sum())
            + v * (below - float((i * diag**2).sum()))
        )
        return mean, second

    def _sample(self, params, shape, rng, parametrization):
        """The onion method (LKJ 2009, §3.2): row i's squared off-diagonal norm is
        Beta(i/2, η + (d − 1 − i)/2), as NumPyro draws (torch draws Beta(i − ½, …) for i ≥ 2, a
        known failure: torch-lkj-cholesky-onion-beta)."""
        d, eta = _dim(params), params["concentration"]
        offset = np.concatenate([[0.0], np.arange(d - 1, dtype=np.float64)])
        beta_a = 0.5 * np.maximum(np.arange(d, dtype=np.float64), 1.0)
        beta_b = eta[..., None] + 0.5 * (d - 2) - 0.5 * offset
        y = rng.beta(beta_a, beta_b)[..., None]
        u = np.tril(rng.standard_normal((*shape, d, d)), -1)
        norms = np.linalg.norm(u, axis=-1, keepdims=True)
        u = np.divide(u, norms, out=np.zeros_like(u), where=norms > 0)
        w = np.sqrt(y) * u
        diag = np.sqrt(np.clip(1.0 - (w * w).sum(-1), np.finfo(float).tiny, None))
        return w + diag[..., None] * np.eye(d)


LKJ_CHOLESKY = LKJCholesky(
    name="LKJCholesky",
    parametrizations={
        "concentration": {
            "dimension": ParamInfo(0, "positive_integer", integer=True, static=True),
            "concentration": ParamInfo(0, "positive"),
        }
    },
    value=ValueInfo(2, "corr_cholesky"),
)
