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
