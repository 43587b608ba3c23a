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
from .beta import log_beta
from .gamma import lgamma_second_difference, log_expm1
from .pareto import log_of_ratio


def _softplus(t: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, t)


def _t(params: Arrays, value: np.ndarray) -> np.ndarray:
    """a·log(x/b), the log by log1p where x is near b (a large a multiplies its rounding)."""
    return params["sharpness"] * log_of_ratio(value, params["scale"])


def _log_mean(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """log E[X] = log(b·p) + log B(1 − 1/a, p + 1/a) (for a > 1; NaN otherwise)."""
    t = 1.0 / a
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.log(b) + np.log(p) + log_beta(1.0 - t, p + t)


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

    def _icdf(self, params, q, parametrization, options):
        p, a, b = params["concentration"], params["sharpness"], params["scale"]
        # b·(q^(−1/p) − 1)^(−1/a), the power in logs: q^(−1/p) overflows in the far lower tail.
        return b * np.exp(-log_expm1(-np.log(q) / p) / a)

    def _sample(self, params, shape, rng, parametrization):
        # Inverse CDF: F(x) = (1 + (x/b)^−a)^−p, so x = b·(u^{−1/p} − 1)^{−1/a}.
        p, a, b = params["concentration"], params["sharpness"], params["scale"]
        u = rng.uniform(size=shape)
        return b * np.expm1(-np.log(u) / p) ** (-1.0 / a)

    def _mean(self, params, parametrization, options):
        """scale·p·B(1 − 1/a, p + 1/a) for a > 1; +inf for a ≤ 1 (the tail ~x^(−a−1))."""
        p, a, b = params["concentration"], params["sharpness"], params["scale"]
        return np.where(a > 1.0, np.exp(_log_mean(p, a, b)), np.inf)

    def _variance(self, params, parametrization, options):
        """E[X]²·expm1(D) for a > 2, D = log E[X²] − 2·log E[X]; +inf for a ≤ 2."""
        p, a, b = params["concentration"], params["sharpness"], params["scale"]
        t = 1.0 / np.where(a > 2.0, a, 4.0)
        # D = Δ(p, t) + Δ(1, −t), Δ(c, h) = log Γ(c + 2h) − 2·log Γ(c + h) + log Γ(c): O(t²)
        # at a large a, where E[X²] − E[X]² would keep nothing of it.
        gap = lgamma_second_difference(p, t) + lgamma_second_difference(1.0, -t)
        finite = np.exp(2.0 * _log_mean(p, 1.0 / t, b) + log_expm1(gap))
        return np.where(a > 2.0, finite, np.inf)


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
