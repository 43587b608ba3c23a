"""LKJCovariancePrior(dimension d, concentration η, sd prior Gamma(α, β)) over d × d covariance
matrices X = D C D (GPyTorch's; D = diag(sd)): a correlation matrix C ~ LKJ(d, η) and each of
the d marginal standard deviations sd_i = √X_ii drawn from the sd prior independently, as its
docstring says ("used for each of the n marginal standard deviations"). The density of X with
respect to Lebesgue measure on its lower triangle is

    log p(X) = log LKJ(C) + Σ_i log Gamma(sd_i | α, β) − d·log 2 − d·Σ_i log sd_i

— (sd, C's strictly-lower entries) ↦ X has the Jacobian Π_i 2·sd_i · Π_{i<j} sd_i·sd_j =
2^d·Π_i sd_i^d. As a function of X's entries, log det C = log det X − Σ log X_ii, so

    log p(X) = (η − 1)·(log det X − Σ log X_ii) + Σ_i [(α − 1 − d)/2·log X_ii − β·√X_ii]
               + d·(α·log β − lgamma α − log 2) − log c_d(η)

whose gradient over every entry taken as an independent variable is the closed form below.
Parametrisation ``gamma_sd`` names the sd prior (the one the cases compose; GPyTorch's
GammaPrior(concentration, rate)).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from .. import projections
from ..constants import LOG_2
from ..core import Arrays, Family, Options, ParamInfo, Projection, ValueInfo
from .lkj_cholesky import LKJCholesky, _dim, _half_offsets, log_lkj_normalizer
from .wishart import _chol_or_identity


def _parts(value: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """X's Cholesky factor (identity where X is outside the support), log det X, diag X."""
    chol, _ = _chol_or_identity(value)
    log_det = 2.0 * np.log(np.diagonal(chol, axis1=-2, axis2=-1)).sum(-1)
    diag = np.diagonal(chol @ np.swapaxes(chol, -1, -2), axis1=-2, axis2=-1)
    return chol, log_det, diag


class LKJCovariancePrior(LKJCholesky):
    #: Its draws are covariances (a Gamma sd per row times the LKJ factor): the factor's
    #: moments are not theirs.
    _draw_moments = Family._draw_moments

    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        d, eta = _dim(params), params["concentration"]
        if d < 2:
            return np.full(eta.shape, np.nan)
        alpha, beta = params["sd_concentration"], params["sd_rate"]
        _, log_det, diag = _parts(value)
        log_diag = np.log(diag)
        return (
            (eta - 1.0) * (log_det - log_diag.sum(-1))
            + (0.5 * (alpha - 1.0 - d)[..., None] * log_diag - beta[..., None] * np.sqrt(diag)).sum(
                -1
            )
            + d * (alpha * np.log(beta) - special.gammaln(alpha) - LOG_2)
            - log_lkj_normalizer(eta, d)
        )

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        d, eta = _dim(params), params["concentration"]
        alpha, beta = params["sd_concentration"], params["sd_rate"]
        chol, log_det, diag = _parts(value)
        inv = np.linalg.inv(chol)
        x_inv = np.swapaxes(inv, -1, -2) @ inv
        d_norm = special.digamma(eta[..., None] + _half_offsets(d)).sum(-1) - (
            d - 1
        ) * special.digamma(eta + 0.5 * (d - 1))
        sd = np.sqrt(diag)
        on_diag = (0.5 * (alpha - 1.0 - d) - (eta - 1.0))[..., None] / diag - 0.5 * beta[
            ..., None
        ] / sd
        return {
            "concentration": log_det - np.log(diag).sum(-1) - d_norm,
            "sd_concentration": (
                np.log(beta)[..., None] - special.digamma(alpha)[..., None] + np.log(sd)
            ).sum(-1),
            "sd_rate": (alpha[..., None] / beta[..., None] - sd).sum(-1),
            "value": (eta - 1.0)[..., None, None] * x_inv + on_diag[..., None] * np.eye(d),
        }

    def _projections(self, params, parametrization, options):
        # Σ = diag(sd)·R·diag(sd): √Σ_00 ~ Gamma(sd_concentration, sd_rate), and R's entries are
        # LKJ's.
        a, b = params["sd_concentration"], params["sd_rate"]

        def sd_cdf(y):
            return special.gammainc(a, b * np.maximum(y, 0.0))

        def correlation(x):
            sd = np.sqrt(np.diagonal(x, axis1=-2, axis2=-1))
            return x / (sd[..., :, None] * sd[..., None, :])

        found = [Projection("√Σ[0, 0]", lambda x: np.sqrt(x[..., 0, 0]), sd_cdf)]
        return found + projections.lkj_correlations(
            params["concentration"], _dim(params), correlation
        )

    def _sample(self, params, shape, rng, parametrization):
        chol = super()._sample(params, shape, rng, parametrization)
        d = chol.shape[-1]
        alpha = np.asarray(params["sd_concentration"])[..., None]
        beta = np.asarray(params["sd_rate"])[..., None]
        sd = rng.gamma(np.broadcast_to(alpha, (*shape, d)), 1.0 / beta)
        factor = sd[..., :, None] * chol
        x = factor @ np.swapaxes(factor, -1, -2)
        return 0.5 * (x + np.swapaxes(x, -1, -2))


LKJ_COVARIANCE_PRIOR = LKJCovariancePrior(
    name="LKJCovariancePrior",
    parametrizations={
        "gamma_sd": {
            "dimension": ParamInfo(0, "positive_integer", integer=True, static=True),
            "concentration": ParamInfo(0, "positive"),
            "sd_concentration": ParamInfo(0, "positive"),
            "sd_rate": ParamInfo(0, "positive"),
        }
    },
    value=ValueInfo(2, "positive_definite", structure="symmetric"),
)
