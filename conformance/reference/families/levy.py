"""Levy(loc, scale c) (NumPyro) on (loc, ∞), with y = x − loc:

    log p = ½·log(c/(2π)) − c/(2y) − (3/2)·log y.

The support is open at loc (the density tends to 0 there; NumPyro's support is
``greater_than(loc)``).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..constants import LOG_2PI
from ..core import Arrays, Family, Options, ParamInfo, Support, ValueInfo

ENTROPY_AT_SCALE_1 = 0.5 + 1.5 * float(np.euler_gamma) + 0.5 * np.log(16.0 * np.pi)


class Levy(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        c, y = params["scale"], value - params["loc"]
        return 0.5 * (np.log(c) - LOG_2PI) - c / (2.0 * y) - 1.5 * np.log(y)

    def support(self, params: Arrays, parametrization: str | None = None) -> Support:
        return Support(self.value.support, lower=params["loc"], lower_open=True)

    def _grad(self, params, value, parametrization, options):
        c, y = params["scale"], value - params["loc"]
        d_value = c / (2.0 * y * y) - 1.5 / y
        return {"loc": -d_value, "scale": 0.5 / c - 0.5 / y, "value": d_value}

    def _cdf(self, params, value, parametrization, options):
        y = value - params["loc"]
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(y > 0.0, special.erfc(np.sqrt(params["scale"] / (2.0 * y))), 0.0)

    def _icdf(self, params, q, parametrization, options):
        p = 1.0 - q  # exact for q ≥ ½: the upper tail from its own probability
        # F = erfc(√(c/2y)): √(c/2y) = erfcinv(q), as erfinv(1 − q) for the upper half.
        r = np.where(q > 0.5, special.erfinv(p), special.erfcinv(q))
        return params["loc"] + params["scale"] / (2.0 * r * r)

    def _sample(self, params, shape, rng, parametrization):
        # c / Z² for a standard normal Z.
        z = rng.standard_normal(size=shape)
        return params["loc"] + params["scale"] / (z * z)

    def _mean(self, params, parametrization, options):
        """+inf: the tail ~y^(−3/2) has an infinite first moment."""
        return np.full(np.shape(params["loc"]), np.inf)

    def _variance(self, params, parametrization, options):
        """+inf: E[(X − μ)²] with μ = +inf."""
        return np.full(np.shape(params["loc"]), np.inf)

    def _entropy(self, params, parametrization, options):
        # ½·(1 + 3γ + log(16π·c²))
        return ENTROPY_AT_SCALE_1 + np.log(params["scale"])


LEVY = Levy(
    name="Levy",
    parametrizations={
        "loc_scale": {"loc": ParamInfo(0, "real"), "scale": ParamInfo(0, "positive")}
    },
    value=ValueInfo(0, "real"),
)
