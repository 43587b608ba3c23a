"""Gumbel(loc, scale) (maximum convention) on the real line: log p = −log s − z − e^{−z}.

For z below about −709 the true log density (≈ −e^{−z}) is below −1.8e308, so -inf is the
float64 answer, not an overflow artefact.
"""

from __future__ import annotations

import numpy as np

from ..core import Arrays, Family, Options, ParamInfo, ValueInfo

EULER_GAMMA = float(np.euler_gamma)
PI2_OVER_6 = np.pi**2 / 6.0


class Gumbel(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        scale = params["scale"]
        z = (value - params["loc"]) / scale
        return -np.log(scale) - z - np.exp(-z)

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        scale = params["scale"]
        z = (value - params["loc"]) / scale
        one_minus_e = -np.expm1(-z)  # 1 − e^{−z}, exact near z = 0 (the mode)
        return {
            "loc": one_minus_e / scale,
            "scale": (z * one_minus_e - 1.0) / scale,
            "value": -one_minus_e / scale,
        }

    def _cdf(self, params, value, parametrization, options):
        return np.exp(-np.exp(-(value - params["loc"]) / params["scale"]))

    def _icdf(self, params, q, parametrization, options):
        p = 1.0 - q  # exact for q ≥ ½: the upper tail from its own probability
        log_q = np.where(q > 0.5, np.log1p(-p), np.log(q))
        return params["loc"] - params["scale"] * np.log(-log_q)

    def _sample(self, params, shape, rng, parametrization):
        return rng.gumbel(params["loc"], params["scale"], size=shape)

    def _mean(self, params, parametrization, options):
        return params["loc"] + EULER_GAMMA * params["scale"]

    def _variance(self, params, parametrization, options):
        return PI2_OVER_6 * params["scale"] ** 2

    def _mode(self, params, parametrization, options):
        return params["loc"]

    def _entropy(self, params, parametrization, options):
        return np.log(params["scale"]) + (1.0 + EULER_GAMMA)


GUMBEL = Gumbel(
    name="Gumbel",
    parametrizations={
        "loc_scale": {"loc": ParamInfo(0, "real"), "scale": ParamInfo(0, "positive")},
    },
    value=ValueInfo(0, "real"),
)
