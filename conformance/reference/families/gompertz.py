"""Gompertz(concentration c, rate b) (NumPyro) on [0, ∞):

    log p = log c + log b + b·x − c·expm1(b·x).

Declared convention ``support_lower`` as for Gamma: NumPyro's support is ``positive``, open at
0, so it is held to −inf there (the density itself is c·b at 0).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..core import Arrays, Family, Options, ParamInfo, ValueInfo
from .gamma import SUPPORT_LOWER, exclude_zero

#: From here on e^c·E₁(c) is its asymptotic series (e^c overflows at 709.8; 25 terms reach
#: 25!/600^25 ≈ 5e-45 there).
ASYMPTOTIC_FROM = 600.0
ASYMPTOTIC_TERMS = 25


def scaled_exp1(c: np.ndarray) -> np.ndarray:
    """e^c·E₁(c) for c > 0: the product below 600, Σ_k (−1)^k·k!/c^(k+1) above."""
    c = np.asarray(c, dtype=np.float64)
    big = c >= ASYMPTOTIC_FROM
    cb = np.where(big, c, ASYMPTOTIC_FROM)
    # Horner in 1/c: Σ_k (−1)^k k!/c^(k+1) = (1/c)·(1 − (1/c)·(1 − (2/c)·(1 − (3/c)·…))).
    series = np.ones_like(cb)
    for k in range(ASYMPTOTIC_TERMS, 0, -1):
        series = 1.0 - k / cb * series
    small = np.where(big, 1.0, c)
    return np.where(big, series / cb, np.exp(small) * special.exp1(small))


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

    def _icdf(self, params, q, parametrization, options):
        c, b = params["concentration"], params["rate"]
        return np.log1p(-np.log1p(-q) / c) / b

    def _sample(self, params, shape, rng, parametrization):
        # Inverse CDF: F(x) = 1 − exp(−c·expm1(b·x)).
        c, b = params["concentration"], params["rate"]
        e = rng.exponential(size=shape)
        return np.log1p(e / c) / b

    def _mean(self, params, parametrization, options):
        # e^c·E₁(c)/rate (NumPyro's −e^c·Ei(−c)/rate), with e^c·E₁(c) scaled (see below).
        return scaled_exp1(params["concentration"]) / params["rate"]


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
