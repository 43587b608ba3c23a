"""AsymmetricLaplaceQuantile(loc, scale σ, quantile q) (NumPyro): the asymmetric Laplace of
Bayesian quantile regression, with q of the mass left of loc,

    log p = log(q·(1 − q)/σ) − ρ_q((x − loc)/σ),   ρ_q(u) = u·(q − 1[u < 0]),

the AsymmetricLaplace family with asymmetry κ = √(q/(1 − q)) and scale σ·κ/q (NumPyro builds
it so). Written in q directly: log q + log1p(−q) keeps q near 0 and 1, where 1/q − 1 rounds.
"""

from __future__ import annotations

import numpy as np

from ..core import Arrays, Family, Options, ParamInfo, ValueInfo


class AsymmetricLaplaceQuantile(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        scale, q = params["scale"], params["quantile"]
        d = value - params["loc"]
        weight = np.where(d < 0, q - 1.0, q)  # ρ_q(u) = u·weight
        return np.log(q) + np.log1p(-q) - np.log(scale) - d * weight / scale

    def _grad(self, params, value, parametrization, options):
        scale, q = params["scale"], params["quantile"]
        d = value - params["loc"]
        weight = np.where(d < 0, q - 1.0, q)
        return {
            "loc": weight / scale,
            "scale": (d * weight / scale - 1.0) / scale,
            "quantile": (1.0 - 2.0 * q) / (q * (1.0 - q)) - d / scale,
            "value": -weight / scale,
        }

    def _cdf(self, params, value, parametrization, options):
        # Below loc: q·e^{(1 − q)(x − loc)/scale}; above: 1 − (1 − q)·e^{−q(x − loc)/scale}.
        scale, q = params["scale"], params["quantile"]
        d = value - params["loc"]
        below = q * np.exp((1.0 - q) * np.minimum(d, 0.0) / scale)
        above = 1.0 - (1.0 - q) * np.exp(-q * np.maximum(d, 0.0) / scale)
        return np.where(d < 0.0, below, above)

    def _icdf(self, params, q, parametrization, options):
        loc, scale, tau = params["loc"], params["scale"], params["quantile"]
        below = scale / (1.0 - tau) * np.log(q / tau)
        above = -scale / tau * np.log((1.0 - q) / (1.0 - tau))
        return loc + np.where(q < tau, below, above)

    def moments_unjudged(self, params: Arrays, parametrization: str | None = None) -> str:
        q = np.asarray(params["quantile"])
        if np.any((q < 0.05) | (q > 0.95)):
            return (
                "a quantile beyond [0.05, 0.95]: one side is drawn rarely and far (scale/q or "
                "scale/(1 − q)), so the derivative's mean rests on a few draws"
            )
        return ""

    def _draw_moments(self, params, weights, parametrization, options):
        """x − loc is −scale·e/(1 − q) with probability q, else scale·e/q (e ~ Exp(1)):
        E[x − loc] = scale·((1 − q)/q − q/(1 − q)), E[(x − loc)²] = 2·scale²·(q/(1 − q)² +
        (1 − q)/q²)."""
        loc, scale, q = params["loc"], params["scale"], params["quantile"]
        shift = scale * ((1.0 - q) / q - q / (1.0 - q))
        spread = 2.0 * scale**2 * (q / (1.0 - q) ** 2 + (1.0 - q) / q**2)
        return weights * (loc + shift), weights**2 * (loc**2 + 2.0 * loc * shift + spread)

    def _sample(self, params, shape, rng, parametrization):
        scale, q = params["scale"], params["quantile"]
        e = rng.exponential(size=shape)
        left = rng.random(size=shape) < q
        return params["loc"] + np.where(left, -e * scale / (1.0 - q), e * scale / q)

    def _mean(self, params, parametrization, options):
        # loc + scale·((1 − q)/q − q/(1 − q)) = loc + scale·(1 − 2q)/(q(1 − q)).
        scale, q = params["scale"], params["quantile"]
        return params["loc"] + scale * ((1.0 - 2.0 * q) / (q * (1.0 - q)))

    def _variance(self, params, parametrization, options):
        # The sides' scales scale/(1 − q) and scale/q: Var = their squares' sum.
        scale, q = params["scale"], params["quantile"]
        return (scale / (1.0 - q)) ** 2 + (scale / q) ** 2


ASYMMETRIC_LAPLACE_QUANTILE = AsymmetricLaplaceQuantile(
    name="AsymmetricLaplaceQuantile",
    parametrizations={
        "loc_scale_quantile": {
            "loc": ParamInfo(0, "real"),
            "scale": ParamInfo(0, "positive"),
            "quantile": ParamInfo(0, "open_unit_interval", form_changes=(0.5,)),
        }
    },
    value=ValueInfo(0, "real", kink_at=("loc",)),
)
