"""HalfNormal(scale) on [0, ∞): twice the Normal(0, scale) density.

Declared convention ``support_lower``: torch's support is ``[0, ∞)`` (``closed``); NumPyro's is
``(0, ∞)`` and it returns -inf at 0 (``open``).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..core import Arrays, Family, Options, ParamInfo, ValueInfo
from .gamma import SUPPORT_LOWER, exclude_zero

HALF_LOG_2_OVER_PI = 0.5 * np.log(2.0 / np.pi)
SQRT_2_OVER_PI = np.sqrt(2.0 / np.pi)
ONE_MINUS_2_OVER_PI = 1.0 - 2.0 / np.pi


class HalfNormal(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        scale = params["scale"]
        z = value / scale
        return exclude_zero(HALF_LOG_2_OVER_PI - np.log(scale) - 0.5 * z * z, value, options)

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        scale = params["scale"]
        z = value / scale
        return {"scale": (z * z - 1.0) / scale, "value": -z / scale}

    def _cdf(self, params, value, parametrization, options):
        return special.erf(np.maximum(value, 0.0) / (params["scale"] * np.sqrt(2.0)))

    def _icdf(self, params, q, parametrization, options):
        p = 1.0 - q  # exact for q ≥ ½: the upper tail from its own probability
        z = np.where(q > 0.5, special.erfcinv(p), special.erfinv(q))
        return params["scale"] * np.sqrt(2.0) * z

    def _sample(self, params, shape, rng, parametrization):
        return np.abs(params["scale"] * rng.standard_normal(shape))

    def _mean(self, params, parametrization, options):
        return SQRT_2_OVER_PI * params["scale"]

    def _variance(self, params, parametrization, options):
        return ONE_MINUS_2_OVER_PI * params["scale"] ** 2

    def _mode(self, params, parametrization, options):
        return np.zeros_like(params["scale"])

    def _entropy(self, params, parametrization, options):
        # ½·log(π·e·scale²/2)
        return 0.5 - HALF_LOG_2_OVER_PI + np.log(params["scale"])


HALF_NORMAL = HalfNormal(
    name="HalfNormal",
    parametrizations={"scale": {"scale": ParamInfo(0, "positive")}},
    value=ValueInfo(0, "nonnegative"),
    options=dict(SUPPORT_LOWER),
)
