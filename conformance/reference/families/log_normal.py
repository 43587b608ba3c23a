"""LogNormal(loc, scale): exp of Normal(loc, scale); support (0, ∞) in both frameworks (the
density tends to 0 at 0, and x = 0 is outside the support, not a boundary point)."""

from __future__ import annotations

import numpy as np
from scipy import special

from ..constants import HALF_LOG_2PI
from ..core import Arrays, Family, Options, ParamInfo, ValueInfo
from .gamma import log_expm1


class LogNormal(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        scale = params["scale"]
        log_x = np.log(value)
        z = (log_x - params["loc"]) / scale
        return -0.5 * z * z - np.log(scale) - HALF_LOG_2PI - log_x

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        scale = params["scale"]
        z = (np.log(value) - params["loc"]) / scale
        return {
            "loc": z / scale,
            "scale": (z * z - 1.0) / scale,
            "value": -(1.0 + z / scale) / value,
        }

    def _cdf(self, params, value, parametrization, options):
        with np.errstate(divide="ignore"):
            z = (np.log(np.maximum(value, 0.0)) - params["loc"]) / params["scale"]
        return special.ndtr(z)

    def _icdf(self, params, q, parametrization, options):
        p = 1.0 - q  # exact for q ≥ ½: the upper tail from its own probability
        z = np.where(q > 0.5, -special.ndtri(p), special.ndtri(q))
        return np.exp(params["loc"] + params["scale"] * z)

    def _sample(self, params, shape, rng, parametrization):
        return np.exp(params["loc"] + params["scale"] * rng.standard_normal(shape))

    def _mean(self, params, parametrization, options):
        return np.exp(params["loc"] + 0.5 * params["scale"] ** 2)

    def _variance(self, params, parametrization, options):
        # expm1(σ²)·e^{2μ + σ²}, in logs: neither factor overflows alone.
        s2 = params["scale"] ** 2
        return np.exp(log_expm1(s2) + 2.0 * params["loc"] + s2)

    def _mode(self, params, parametrization, options):
        return np.exp(params["loc"] - params["scale"] ** 2)

    def _entropy(self, params, parametrization, options):
        return params["loc"] + 0.5 + HALF_LOG_2PI + np.log(params["scale"])


LOG_NORMAL = LogNormal(
    name="LogNormal",
    parametrizations={
        "loc_scale": {"loc": ParamInfo(0, "real"), "scale": ParamInfo(0, "positive")},
    },
    value=ValueInfo(0, "positive"),
)
