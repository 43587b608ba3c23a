"""Uniform(low, high) on the closed interval [low, high]; parameters need low < high.

Declared convention ``support_upper``: torch's ``support`` is the closed interval (so x = high
passes validation) but its log_prob tests ``high > x`` and returns -inf at x = high (``open``);
NumPyro returns −log(high − low) there (``closed``, the default).
"""

from __future__ import annotations

import numpy as np

from ..core import Arrays, Family, Options, ParamInfo, Support, ValueInfo


class Uniform(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        high = params["high"]
        logp = -np.log(high - params["low"]) + np.zeros_like(value)
        if options.get("support_upper", "closed") == "open":
            logp = np.where(value == high, -np.inf, logp)
        return logp

    def support(self, params: Arrays, parametrization: str | None = None) -> Support:
        return Support(self.value.support, lower=params["low"], upper=params["high"])

    def _params_valid(self, params: Arrays, parametrization: str, options: Options) -> np.ndarray:
        return super()._params_valid(params, parametrization, options) & (
            params["low"] < params["high"]
        )

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        inv_width = 1.0 / (params["high"] - params["low"])
        return {"low": inv_width, "high": -inv_width, "value": np.zeros_like(value)}

    def _cdf(self, params, value, parametrization, options):
        low, high = params["low"], params["high"]
        return np.clip((value - low) / (high - low), 0.0, 1.0)

    def _icdf(self, params, q, parametrization, options):
        low, high = params["low"], params["high"]
        return low + q * (high - low)

    def _sample(self, params, shape, rng, parametrization):
        return rng.uniform(params["low"], params["high"], size=shape)

    def _mean(self, params, parametrization, options):
        return 0.5 * params["low"] + 0.5 * params["high"]  # no overflow of low + high

    def _variance(self, params, parametrization, options):
        return (params["high"] - params["low"]) ** 2 / 12.0

    def _mode(self, params, parametrization, options):
        """NaN: every point of [low, high] is a maximiser."""
        return np.full(np.shape(params["low"]), np.nan)

    def _entropy(self, params, parametrization, options):
        return np.log(params["high"] - params["low"])


UNIFORM = Uniform(
    name="Uniform",
    parametrizations={"low_high": {"low": ParamInfo(0, "real"), "high": ParamInfo(0, "real")}},
    value=ValueInfo(0, "real"),
    options={"support_upper": ("closed", "open")},
)
