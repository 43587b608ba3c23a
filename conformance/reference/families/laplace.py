"""Laplace(loc, scale) on the real line. At x = loc the value gradient is taken as 0 (the
symmetric difference quotient there), the subgradient every framework's autodiff returns for
|x|."""

from __future__ import annotations

import numpy as np

from ..constants import LOG_2
from ..core import Arrays, Family, Options, ParamInfo, ValueInfo


class Laplace(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        scale = params["scale"]
        return -LOG_2 - np.log(scale) - np.abs(value - params["loc"]) / scale

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        scale = params["scale"]
        d = value - params["loc"]
        sign = np.sign(d) / scale
        return {"loc": sign, "scale": (np.abs(d) / scale - 1.0) / scale, "value": -sign}

    def _cdf(self, params, value, parametrization, options):
        z = (value - params["loc"]) / params["scale"]
        half_tail = 0.5 * np.exp(-np.abs(z))
        return np.where(z < 0.0, half_tail, 1.0 - half_tail)

    def _icdf(self, params, q, parametrization, options):
        p = 1.0 - q  # exact for q ≥ ½: the upper tail from its own probability
        z = np.where(q > 0.5, -np.log(2.0 * p), np.log(2.0 * q))
        return params["loc"] + params["scale"] * z

    def _sample(self, params, shape, rng, parametrization):
        return rng.laplace(params["loc"], params["scale"], size=shape)

    def _mean(self, params, parametrization, options):
        return params["loc"]

    def _variance(self, params, parametrization, options):
        return 2.0 * params["scale"] ** 2

    def _mode(self, params, parametrization, options):
        return params["loc"]

    def _entropy(self, params, parametrization, options):
        return 1.0 + LOG_2 + np.log(params["scale"])


LAPLACE = Laplace(
    name="Laplace",
    parametrizations={
        "loc_scale": {"loc": ParamInfo(0, "real"), "scale": ParamInfo(0, "positive")},
    },
    value=ValueInfo(0, "real", kink_at=("loc",)),
)
