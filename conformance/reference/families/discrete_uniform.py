"""DiscreteUniform(low, high) (NumPyro) on the integers low, …, high:

    log p = −log(high − low + 1).

Its bounds are integers and its value discrete: nothing is differentiated.
"""

from __future__ import annotations

import numpy as np

from ..core import Arrays, Family, Options, ParamInfo, Support, ValueInfo


class DiscreteUniform(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        return -np.log(params["high"] - params["low"] + 1.0) + np.zeros_like(value)

    def support(self, params: Arrays, parametrization: str | None = None) -> Support:
        return Support(self.value.support, lower=params["low"], upper=params["high"])

    def _params_valid(self, params: Arrays, parametrization: str, options: Options) -> np.ndarray:
        return super()._params_valid(params, parametrization, options) & (
            params["low"] <= params["high"]
        )

    def _grad(self, params, value, parametrization, options):
        return {}

    def _sample(self, params, shape, rng, parametrization):
        low, high = params["low"], params["high"]
        return np.floor(low + rng.random(size=shape) * (high - low + 1.0))

    def _mean(self, params, parametrization, options):
        return params["low"] + 0.5 * (params["high"] - params["low"])

    def _variance(self, params, parametrization, options):
        # ((h − l + 1)² − 1)/12 = (h − l)(h − l + 2)/12, exact for whole bounds.
        width = params["high"] - params["low"]
        return width * (width + 2.0) / 12.0

    def _entropy(self, params, parametrization, options):
        return np.log1p(params["high"] - params["low"])


DISCRETE_UNIFORM = DiscreteUniform(
    name="DiscreteUniform",
    parametrizations={
        "low_high": {
            "low": ParamInfo(0, "integer", integer=True),
            "high": ParamInfo(0, "integer", integer=True),
        }
    },
    value=ValueInfo(0, "integer", discrete=True),
)
