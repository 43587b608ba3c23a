"""Weibull(scale λ, concentration k) on (0, ∞), the support both frameworks declare (the
density's limit at 0 is +inf, 1/λ or 0 as k <, =, > 1, but x = 0 is outside the support).

log p = log k − log λ + (k − 1)·log t − t^k with t = x/λ; log t falls back to log x − log λ
where x/λ would underflow or overflow.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..core import Arrays, Family, Options, ParamInfo, ValueInfo
from .gamma import lgamma_second_difference, log_expm1

EULER_GAMMA = float(np.euler_gamma)


def _log_t(value: np.ndarray, scale: np.ndarray) -> np.ndarray:
    t = value / scale
    normal = (t > 1e-300) & (t < 1e300)
    return np.where(normal, np.log(np.where(normal, t, 1.0)), np.log(value) - np.log(scale))


class Weibull(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        k, scale = params["concentration"], params["scale"]
        log_t = _log_t(value, scale)
        return np.log(k) - np.log(scale) + (k - 1.0) * log_t - np.exp(k * log_t)

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        k, scale = params["concentration"], params["scale"]
        log_t = _log_t(value, scale)
        tk_minus_1 = np.expm1(k * log_t)  # t^k − 1, exact near t = 1
        return {
            "scale": k * tk_minus_1 / scale,
            "concentration": 1.0 / k - log_t * tk_minus_1,
            # (k − 1)/x − k·t^k/x; at x = 0 with k = 1 its limit −1/scale (not −0/0).
            "value": np.where(
                (value == 0.0) & (k == 1.0), -1.0 / scale, (-1.0 - k * tk_minus_1) / value
            ),
        }

    def _cdf(self, params, value, parametrization, options):
        x = np.maximum(value, 0.0)
        return -np.expm1(-((x / params["scale"]) ** params["concentration"]))

    def _icdf(self, params, q, parametrization, options):
        return params["scale"] * (-np.log1p(-q)) ** (1.0 / params["concentration"])

    def _sample(self, params, shape, rng, parametrization):
        return params["scale"] * rng.weibull(params["concentration"], size=shape)

    def _mean(self, params, parametrization, options):
        # scale·Γ(1 + 1/k), in logs (Γ overflows below k ≈ 1/170 while the mean may not).
        k, scale = params["concentration"], params["scale"]
        return np.exp(np.log(scale) + special.gammaln(1.0 + 1.0 / k))

    def _variance(self, params, parametrization, options):
        # scale²·[Γ(1 + 2t) − Γ(1 + t)²] with t = 1/k is the squared mean times expm1(D),
        # D = log Γ(1 + 2t) − 2·log Γ(1 + t): O(t²) for a large k, where the difference of the
        # Γ's keeps nothing of it (lgamma_second_difference sums its series).
        k, scale = params["concentration"], params["scale"]
        t = 1.0 / k
        log_mean = np.log(scale) + special.gammaln(1.0 + t)
        return np.exp(2.0 * log_mean + log_expm1(lgamma_second_difference(1.0, t)))

    def _mode(self, params, parametrization, options):
        """scale·(1 − 1/k)^(1/k) for k > 1; 0 for k ≤ 1, where the density decreases from 0."""
        k, scale = params["concentration"], params["scale"]
        t = 1.0 / k
        with np.errstate(divide="ignore", invalid="ignore"):
            inner = scale * np.exp(t * np.log1p(-t))
        return np.where(k > 1.0, inner, 0.0)

    def _entropy(self, params, parametrization, options):
        k = params["concentration"]
        return EULER_GAMMA * (1.0 - 1.0 / k) + np.log(params["scale"]) - np.log(k) + 1.0


WEIBULL = Weibull(
    name="Weibull",
    parametrizations={
        "scale_concentration": {
            "scale": ParamInfo(0, "positive"),
            "concentration": ParamInfo(0, "positive", form_changes=(1.0,)),
        },
    },
    value=ValueInfo(0, "positive"),
)
