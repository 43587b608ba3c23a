"""Exponential(rate) on [0, ∞); ``support_lower`` as for Gamma (NumPyro: open)."""

from __future__ import annotations

import numpy as np

from ..core import Arrays, Family, Options, ParamInfo, ValueInfo
from .gamma import SUPPORT_LOWER, exclude_zero


class Exponential(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        rate = params["rate"]
        return exclude_zero(np.log(rate) - rate * value, value, options)

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        rate = params["rate"]
        return {"rate": 1.0 / rate - value, "value": -rate}

    def _cdf(self, params, value, parametrization, options):
        return -np.expm1(-params["rate"] * np.maximum(value, 0.0))

    def _icdf(self, params, q, parametrization, options):
        return -np.log1p(-q) / params["rate"]

    def _sample(self, params, shape, rng, parametrization):
        return rng.exponential(1.0 / params["rate"], size=shape)

    def _mean(self, params, parametrization, options):
        return 1.0 / params["rate"]

    def _variance(self, params, parametrization, options):
        return 1.0 / params["rate"] / params["rate"]

    def _mode(self, params, parametrization, options):
        return np.zeros_like(params["rate"])

    def _entropy(self, params, parametrization, options):
        return 1.0 - np.log(params["rate"])


EXPONENTIAL = Exponential(
    name="Exponential",
    parametrizations={"rate": {"rate": ParamInfo(0, "positive")}},
    value=ValueInfo(0, "nonnegative"),
    options=dict(SUPPORT_LOWER),
)
