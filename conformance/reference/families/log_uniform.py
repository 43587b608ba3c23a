"""LogUniform(low, high) (NumPyro) on [low, high], 0 < low < high: log x is uniform, so

    log p = −log x − log(log high − log low),

with log(high/low) taken as log1p((high − low)/low), exact when the bounds are close.
"""

from __future__ import annotations

import math

import numpy as np

from ..core import Arrays, Family, Options, ParamInfo, Support, ValueInfo
from .doubly_truncated_power_law import log_exprel

#: Terms of the variance's series for r ≤ 2 (the k-th is below (2r)^k/k!: 40 reach 1e-30).
VARIANCE_TERMS = 40


def _log_ratio(params: Arrays) -> np.ndarray:
    """log(high/low), as log1p((high − low)/low), or log high − log low where that overflows."""
    low, high = params["low"], params["high"]
    with np.errstate(over="ignore"):
        q = (high - low) / low
    return np.where(
        np.isfinite(q), np.log1p(np.where(np.isfinite(q), q, 0.0)), np.log(high) - np.log(low)
    )


class LogUniform(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        return -np.log(value) - np.log(_log_ratio(params))

    def support(self, params: Arrays, parametrization: str | None = None) -> Support:
        return Support(self.value.support, lower=params["low"], upper=params["high"])

    def _params_valid(self, params: Arrays, parametrization: str, options: Options) -> np.ndarray:
        return super()._params_valid(params, parametrization, options) & (
            params["low"] < params["high"]
        )

    def _grad(self, params, value, parametrization, options):
        ratio = _log_ratio(params)
        return {
            "low": 1.0 / (params["low"] * ratio),
            "high": -1.0 / (params["high"] * ratio),
            "value": -1.0 / value,
        }

    def _cdf(self, params, value, parametrization, options):
        low = params["low"]
        x = np.clip(value, low, params["high"])
        return np.clip(np.log1p((x - low) / low) / _log_ratio(params), 0.0, 1.0)

    def _icdf(self, params, q, parametrization, options):
        return params["low"] * np.exp(q * _log_ratio(params))

    def _sample(self, params, shape, rng, parametrization):
        low = params["low"]
        return low * np.exp(rng.random(size=shape) * _log_ratio(params))

    def _mean(self, params, parametrization, options):
        # (high − low)/log(high/low): one rounding each.
        return (params["high"] - params["low"]) / _log_ratio(params)

    def _variance(self, params, parametrization, options):
        # X = low·e^{rU}, r = log(high/low): Var = low²·f(r), f(r) = exprel(2r) − exprel(r)²
        # (exprel(u) = (e^u − 1)/u). f = Σ_k [2^k·(k − 2) + 2]/(k + 2)!·r^k from k = 2 on, terms
        # all positive, for r ≤ 2 (r²/12 for close bounds, where the difference keeps nothing);
        # above, log f = log exprel(2r) + log1p(−exprel(r)²/exprel(2r)), in logs throughout.
        low, r = params["low"], _log_ratio(params)
        small = r <= 2.0
        rs = np.where(small, r, 1.0)
        series = np.zeros_like(rs)
        for k in range(VARIANCE_TERMS, 1, -1):
            series = series * rs + (2.0**k * (k - 2) + 2.0) / math.factorial(k + 2)
        log_f_small = np.log(series * rs * rs)
        rb = np.where(small, 4.0, r)
        ratio = np.exp(2.0 * log_exprel(rb) - log_exprel(2.0 * rb))
        log_f_big = log_exprel(2.0 * rb) + np.log1p(-ratio)
        return np.exp(2.0 * np.log(low) + np.where(small, log_f_small, log_f_big))

    def _entropy(self, params, parametrization, options):
        # E[log X] + log r = (log low + log high)/2 + log r.
        return 0.5 * (np.log(params["low"]) + np.log(params["high"])) + np.log(_log_ratio(params))


LOG_UNIFORM = LogUniform(
    name="LogUniform",
    parametrizations={
        "low_high": {"low": ParamInfo(0, "positive"), "high": ParamInfo(0, "positive")}
    },
    value=ValueInfo(0, "positive"),
)
