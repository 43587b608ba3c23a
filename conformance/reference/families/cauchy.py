"""Cauchy(loc, scale) on the real line.

``log1p(z²)`` overflows to inf once |z| > 1e154 although the log density is finite; above
|z| = 1e8, ``1 + z²`` rounds to ``z²``, so ``2·log|z|`` is the same number without the overflow
(taken as 2·(log|x − loc| − log scale) where z itself overflows).
"""

from __future__ import annotations

import numpy as np

from ..constants import LOG_2, LOG_PI
from ..core import Arrays, Family, Options, ParamInfo, ValueInfo

LOG_4PI = 2.0 * LOG_2 + LOG_PI


def log1p_square(d: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """log(1 + (d/scale)²) without overflow for any finite d and scale."""
    az = np.abs(d / scale)
    big = ~(az <= 1e8)
    log_az = np.where(np.isfinite(az), np.log(az), np.log(np.abs(d)) - np.log(scale))
    return np.where(big, 2.0 * log_az, np.log1p(az * np.where(big, 0.0, az)))


def cauchy_score(z: np.ndarray) -> np.ndarray:
    """2z / (1 + z²), written as 2 / (z + 1/z) so that it neither overflows nor divides 0 by 0."""
    safe = np.where(z == 0.0, 1.0, z)
    return np.where(z == 0.0, 0.0, 2.0 / (safe + 1.0 / safe))


def cauchy_scale_score(z: np.ndarray) -> np.ndarray:
    """(z² − 1) / (z² + 1) = 1 − 2/(1 + z²): z·∂/∂z of −log1p(z²), negated, minus 1."""
    az = np.abs(z)
    return 1.0 - 2.0 / (1.0 + az * np.minimum(az, 1e154))


class Cauchy(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        scale = params["scale"]
        return -LOG_PI - np.log(scale) - log1p_square(value - params["loc"], scale)

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        scale = params["scale"]
        z = (value - params["loc"]) / scale
        score = cauchy_score(z) / scale
        return {"loc": score, "scale": cauchy_scale_score(z) / scale, "value": -score}

    def _cdf(self, params, value, parametrization, options):
        return 0.5 + np.arctan((value - params["loc"]) / params["scale"]) / np.pi

    def _icdf(self, params, q, parametrization, options):
        p = 1.0 - q  # exact for q ≥ ½: the upper tail from its own probability
        # tan(π(q − ½)) as ∓1/tan(πq) on each side: q − ½ would lose a small q.
        z = np.where(q > 0.5, 1.0 / np.tan(np.pi * p), -1.0 / np.tan(np.pi * q))
        return params["loc"] + params["scale"] * z

    def _sample(self, params, shape, rng, parametrization):
        return params["loc"] + params["scale"] * rng.standard_cauchy(size=shape)

    def _mean(self, params, parametrization, options):
        """NaN: E|X| is infinite on both sides, so the mean is undefined."""
        return np.full(np.shape(params["loc"]), np.nan)

    def _variance(self, params, parametrization, options):
        """NaN: undefined, as the mean is."""
        return np.full(np.shape(params["loc"]), np.nan)

    def _mode(self, params, parametrization, options):
        return params["loc"]

    def _entropy(self, params, parametrization, options):
        return LOG_4PI + np.log(params["scale"])


CAUCHY = Cauchy(
    name="Cauchy",
    parametrizations={
        "loc_scale": {"loc": ParamInfo(0, "real"), "scale": ParamInfo(0, "positive")},
    },
    value=ValueInfo(0, "real"),
)
