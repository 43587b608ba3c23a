"""Gompertz(concentration c, rate b) (NumPyro) on [0, ∞):

    log p = log c + log b + b·x − c·expm1(b·x).

Declared convention ``support_lower`` as for Gamma: NumPyro's support is ``positive``, open at
0, so it is held to −inf there (the density itself is c·b at 0).
"""

from __future__ import annotations

import numpy as np

from ..core import Arrays, Family, Options, ParamInfo, ValueInfo
from .gamma import SUPPORT_LOWER, exclude_zero


class Gompertz(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        c, b = params["concentration"], params["rate"]
        bx = b * value
        return exclude_zero(np.log(c) + np.log(b) + bx - c * np.expm1(bx), value, options)

    def _grad(self, params, value, parametrization, options):
        c, b = params["concentration"], params["rate"]
        bx = b * value
        grow = np.exp(bx)
        return {
            "concentration": 1.0 / c - np.expm1(bx),
            "rate": 1.0 / b + value - c * value * grow,
            "value": b - c * b * grow,
        }

    def _cdf(self, params, value, parametrization, options):
        c, b = params["concentration"], params["rate"]
        return -np.expm1(-c * np.expm1(b * np.maximum(value, 0.0)))

    def _sample(self, params, shape, rng, parametrization):
        # Inverse CDF: F(x) = 1 − exp(−c·expm1(b·x)).
        c, b = params["concentration"], params["rate"]
        e = rng.exponential(size=shape)
        return np.log1p(e / c) / b


GOMPERTZ = Gompertz(
    name="Gompertz",
    parametrizations={
        "concentration_rate": {
            "concentration": ParamInfo(0, "positive"),
            "rate": ParamInfo(0, "positive"),
        }
    },
    value=ValueInfo(0, "nonnegative"),
    options=dict(SUPPORT_LOWER),
)
