"""LowerTruncatedPowerLaw(alpha α < −1, low) (NumPyro) on [low, ∞):

    log p = log(−1 − α) − log low + α·log(x/low),

the Pareto with scale = low and index −1 − α. log(x/low) is log1p((x − low)/low), exact near
the lower end. Declared convention ``support_lower`` as for Pareto: NumPyro's support is
``greater_than(low)``, open at low, so it is held to −inf there (the density is (−1 − α)/low).
"""

from __future__ import annotations

import numpy as np

from ..core import Arrays, Family, Options, ParamInfo, Support, ValueInfo
from .pareto import log_ratio


class LowerTruncatedPowerLaw(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        alpha, low = params["alpha"], params["low"]
        logp = np.log(-1.0 - alpha) - np.log(low) + alpha * log_ratio(value, low)
        if options.get("support_lower", "closed") == "open":
            logp = np.where(value == low, -np.inf, logp)
        return logp

    def support(self, params: Arrays, parametrization: str | None = None) -> Support:
        return Support(self.value.support, lower=params["low"])

    def _grad(self, params, value, parametrization, options):
        alpha, low = params["alpha"], params["low"]
        return {
            "alpha": 1.0 / (1.0 + alpha) + log_ratio(value, low),
            "low": -(1.0 + alpha) / low,
            "value": alpha / value,
        }

    def _cdf(self, params, value, parametrization, options):
        alpha, low = params["alpha"], params["low"]
        x = np.maximum(value, low)
        return -np.expm1((1.0 + alpha) * log_ratio(x, low))

    def _sample(self, params, shape, rng, parametrization):
        # low·(1 − u)^{1/(1 + α)}: the inverse of F(x) = 1 − (x/low)^{1 + α}.
        e = rng.exponential(size=shape)  # −log(1 − u)
        return params["low"] * np.exp(-e / (1.0 + params["alpha"]))


LOWER_TRUNCATED_POWER_LAW = LowerTruncatedPowerLaw(
    name="LowerTruncatedPowerLaw",
    parametrizations={
        "alpha_low": {
            "alpha": ParamInfo(0, "open_interval:-inf,-1"),
            "low": ParamInfo(0, "positive"),
        }
    },
    value=ValueInfo(0, "positive"),
    options={"support_lower": ("closed", "open")},
)
