"""Normal(loc, scale)."""

from __future__ import annotations

import numpy as np
from scipy import special

from ..constants import HALF_LOG_2PI
from ..core import Arrays, Family, ParamInfo, ValueInfo


class Normal(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options
    ) -> np.ndarray:
        loc, scale = params["loc"], params["scale"]
        with np.errstate(divide="ignore", invalid="ignore"):
            z = (value - loc) / scale
            return -0.5 * z * z - np.log(scale) - HALF_LOG_2PI

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options
    ) -> dict[str, np.ndarray]:
        loc, scale = params["loc"], params["scale"]
        z = (value - loc) / scale
        return {"loc": z / scale, "scale": (z * z - 1.0) / scale, "value": -z / scale}

    def _cdf(self, params, value, parametrization, options):
        return special.ndtr((value - params["loc"]) / params["scale"])

    def _icdf(self, params, q, parametrization, options):
        p = 1.0 - q  # exact for q ≥ ½: the upper tail from its own probability
        z = np.where(q > 0.5, -special.ndtri(p), special.ndtri(q))
        return params["loc"] + params["scale"] * z

    def _sample(self, params, shape, rng, parametrization):
        return params["loc"] + params["scale"] * rng.standard_normal(shape)

    def _mean(self, params, parametrization, options):
        return params["loc"]

    def _variance(self, params, parametrization, options):
        return params["scale"] ** 2

    def _mode(self, params, parametrization, options):
        return params["loc"]

    def _entropy(self, params, parametrization, options):
        return 0.5 + HALF_LOG_2PI + np.log(params["scale"])


NORMAL = Normal(
    name="Normal",
    parametrizations={
        "loc_scale": {"loc": ParamInfo(0, "real"), "scale": ParamInfo(0, "positive")},
    },
    value=ValueInfo(0, "real"),
)
