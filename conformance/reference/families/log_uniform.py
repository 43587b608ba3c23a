"""LogUniform(low, high) (NumPyro) on [low, high], 0 < low < high: log x is uniform, so

    log p = −log x − log(log high − log low),

with log(high/low) taken as log1p((high − low)/low), exact when the bounds are close.
"""

from __future__ import annotations

import numpy as np

from ..core import Arrays, Family, Options, ParamInfo, Support, ValueInfo


def _log_ratio(params: Arrays) -> np.ndarray:
    low = params["low"]
    return np.log1p((params["high"] - low) / low)


class LogUniform(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        return -np.log(value) - np.log(_log_ratio(params))

    def support(self, params: Arrays, parametrization: str | None = None) -> Support:
        return Support(self.value.support, lower=params["low"], upper=params["high"])

    def _params_valid(self, params: Arrays, parametrization: str, options: Options) -> np.ndarray:
        return super()._params_valid(params, parametrization, options) & (
            params["low"] < params["high"]
        )

    def _grad(self, params, value, parametrization, options):
        ratio = _log_ratio(params)
        return {
            "low": 1.0 / (params["low"] * ratio),
            "high": -1.0 / (params["high"] * ratio),
            "value": -1.0 / value,
        }

    def _cdf(self, params, value, parametrization, options):
        low = params["low"]
        x = np.clip(value, low, params["high"])
        return np.clip(np.log1p((x - low) / low) / _log_ratio(params), 0.0, 1.0)

    def _sample(self, params, shape, rng, parametrization):
        low = params["low"]
        return low * np.exp(rng.random(size=shape) * _log_ratio(params))


LOG_UNIFORM = LogUniform(
    name="LogUniform",
    parametrizations={
        "low_high": {"low": ParamInfo(0, "positive"), "high": ParamInfo(0, "positive")}
    },
    value=ValueInfo(0, "positive"),
)
