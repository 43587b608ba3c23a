"""Dagum(concentration p, sharpness a, scale b) (NumPyro) on (0, ∞):

    log p(x) = log a + log p − log x − p·softplus(−t) − softplus(t),   t = a·log(x/b),

i.e. (a·p/x)·(x/b)^{a·p} / ((x/b)^a + 1)^{p+1}, scipy's ``burr(c=a, d=p, scale=b)`` (Burr
type III). Written with softplus so neither tail overflows, and with p·t − (p + 1)·softplus(t)
rearranged so a large p multiplies only the bulk's small softplus(−t): nothing cancels.
NumPyro's support is ``positive`` (open at 0), and so is the oracle's: the density at 0 is 0,
a·p/b or +inf as a·p is above, at or below 1.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..core import Arrays, Family, Options, ParamInfo, ValueInfo
from .pareto import log_of_ratio


def _softplus(t: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, t)


def _t(params: Arrays, value: np.ndarray) -> np.ndarray:
    """a·log(x/b), the log by log1p where x is near b (a large a multiplies its rounding)."""
    return params["sharpness"] * log_of_ratio(value, params["scale"])


class Dagum(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        p, a = params["concentration"], params["sharpness"]
        t = _t(params, value)
        # p·t − (p + 1)·softplus(t) = −p·softplus(−t) − softplus(t): at a large p the left
        # side's terms are p·t each (1e7 at p = 1e6) and cancel to order 1.
        return np.log(a) + np.log(p) - np.log(value) - p * _softplus(-t) - _softplus(t)

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        p, a, b = params["concentration"], params["sharpness"], params["scale"]
        t = _t(params, value)
        # ∂/∂t of p·t − (p + 1)·softplus(t): p − (p + 1)·σ(t) = p·σ(−t) − σ(t).
        d_t = p * special.expit(-t) - special.expit(t)
        return {
            "concentration": 1.0 / p - _softplus(-t),
            "sharpness": 1.0 / a + d_t * t / a,
            "scale": -d_t * a / b,
            "value": (a * d_t - 1.0) / value,
        }

    def _cdf(self, params, value, parametrization, options):
        # (1 + (x/b)^−a)^−p = exp(−p·log1p((x/b)^−a)).
        p, a, b = params["concentration"], params["sharpness"], params["scale"]
        x = np.maximum(value, 0.0)
        with np.errstate(divide="ignore", over="ignore"):
            return np.exp(-p * np.log1p((x / b) ** -a))

    def _sample(self, params, shape, rng, parametrization):
        # Inverse CDF: F(x) = (1 + (x/b)^−a)^−p, so x = b·(u^{−1/p} − 1)^{−1/a}.
        p, a, b = params["concentration"], params["sharpness"], params["scale"]
        u = rng.uniform(size=shape)
        return b * np.expm1(-np.log(u) / p) ** (-1.0 / a)


DAGUM = Dagum(
    name="Dagum",
    parametrizations={
        "concentration_sharpness_scale": {
            "concentration": ParamInfo(0, "positive"),
            "sharpness": ParamInfo(0, "positive"),
            "scale": ParamInfo(0, "positive"),
        }
    },
    value=ValueInfo(0, "positive"),
)
