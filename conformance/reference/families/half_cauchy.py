"""HalfCauchy(scale) on [0, ∞): twice the Cauchy(0, scale) density.

Declared convention ``support_lower``: torch's support is ``[0, ∞)`` (``closed``); NumPyro's is
``(0, ∞)`` and it returns -inf at 0 (``open``).
"""

from __future__ import annotations

import numpy as np

from ..constants import LOG_2_OVER_PI, LOG_2PI
from ..core import Arrays, Family, Options, ParamInfo, ValueInfo
from .cauchy import cauchy_scale_score, cauchy_score, log1p_square
from .gamma import SUPPORT_LOWER, exclude_zero


class HalfCauchy(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        scale = params["scale"]
        logp = LOG_2_OVER_PI - np.log(scale) - log1p_square(value, scale)
        return exclude_zero(logp, value, options)

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        scale = params["scale"]
        z = value / scale
        return {"scale": cauchy_scale_score(z) / scale, "value": -cauchy_score(z) / scale}

    def _cdf(self, params, value, parametrization, options):
        return 2.0 / np.pi * np.arctan(np.maximum(value, 0.0) / params["scale"])

    def _icdf(self, params, q, parametrization, options):
        p = 1.0 - q  # exact for q ≥ ½: the upper tail from its own probability
        z = np.where(q > 0.5, 1.0 / np.tan(0.5 * np.pi * p), np.tan(0.5 * np.pi * q))
        return params["scale"] * z

    def _sample(self, params, shape, rng, parametrization):
        return np.abs(params["scale"] * rng.standard_cauchy(size=shape))

    def _mean(self, params, parametrization, options):
        """+inf: the tail ~1/x² has an infinite first moment."""
        return np.full(np.shape(params["scale"]), np.inf)

    def _variance(self, params, parametrization, options):
        """+inf: E[(X − μ)²] with μ = +inf (the convention of every infinite mean here)."""
        return np.full(np.shape(params["scale"]), np.inf)

    def _mode(self, params, parametrization, options):
        return np.zeros_like(params["scale"])

    def _entropy(self, params, parametrization, options):
        return LOG_2PI + np.log(params["scale"])


HALF_CAUCHY = HalfCauchy(
    name="HalfCauchy",
    parametrizations={"scale": {"scale": ParamInfo(0, "positive")}},
    value=ValueInfo(0, "nonnegative"),
    options=dict(SUPPORT_LOWER),
)
