"""MaskedDistribution(Gamma(concentration, rate), mask) — NumPyro only (``Gamma(…).mask``):
log_prob is the base's where ``mask`` is 1 and exactly 0 where it is 0, whatever the value there
(NumPyro replaces a masked-out value with a feasible one before the base sees it), gradients
included; ``mask`` broadcasts with the base's batch shape.

The support is the base's where the mask is 1 and the real line where it is 0. A base whose
support ends (Gamma's [0, ∞)) is what tells "masked out" from "scored". NumPyro's Gamma is open
at 0: the binding declares ``support_lower: open`` as Gamma's does.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..core import Arrays, Family, Options, ParamInfo, Support, ValueInfo, vanishing_ratio
from .gamma import SUPPORT_LOWER, exclude_zero, gamma_cdf, gamma_log_density


class MaskedDistribution(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        scored = params["mask"] == 1
        x = np.where(scored, value, 1.0)
        logp = gamma_log_density(params["concentration"], params["rate"], x)
        return np.where(scored, exclude_zero(logp, x, options), 0.0)

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        a, rate = params["concentration"], params["rate"]
        scored = params["mask"] == 1
        x = np.where(scored, value, 1.0)
        grads = {
            "concentration": np.log(rate) + np.log(x) - special.digamma(a),
            "rate": a / rate - x,
            "value": vanishing_ratio(a - 1.0, x) - rate,
        }
        return {k: np.where(scored, g, 0.0) for k, g in grads.items()}

    def support(self, params: Arrays, parametrization: str | None = None) -> Support:
        return Support("real", lower=np.where(params["mask"] == 1, 0.0, -np.inf))

    def _cdf(self, params, value, parametrization, options):
        # Every position draws from the base Gamma, masked out or not.
        return gamma_cdf(params["concentration"], params["rate"], value)

    def draw_log_density(self, params, value, parametrization, options):
        # Every position draws from the base Gamma: so is its density, masked out or not.
        with np.errstate(divide="ignore", invalid="ignore"):
            return gamma_log_density(params["concentration"], params["rate"], value)

    def _sample(self, params, shape, rng, parametrization):
        # Masked-out positions draw from the base too, as NumPyro's sampler does.
        return rng.gamma(params["concentration"], 1.0 / params["rate"], size=shape)


MASKED_DISTRIBUTION = MaskedDistribution(
    name="MaskedDistribution",
    parametrizations={
        "gamma": {
            "concentration": ParamInfo(0, "positive"),
            "rate": ParamInfo(0, "positive"),
            "mask": ParamInfo(0, "boolean", integer=True),
        },
    },
    value=ValueInfo(0, "real"),
    options=dict(SUPPORT_LOWER),
)
