"""InverseGamma(concentration a, rate b) on (0, ∞): the law of 1/X for X ~ Gamma(a, b).

log p = a·log b − log Γ(a) − (a + 1)·log x − b/x, evaluated as the Gamma kernel in λ = b/x:
log(λ^a·e^{−λ}/Γ(a)) − log x, so large concentrations do not cancel (see ``gamma``). The
density tends to 0 at 0, which both frameworks leave outside the support.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..constants import HALF_LOG_2PI
from ..core import Arrays, Family, Options, ParamInfo, ValueInfo
from .binomial import log_minus_digamma
from .gamma import gamma_log_density, stirlerr


class InverseGamma(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        a, lam = params["concentration"], params["rate"] / value
        return gamma_log_density(a, np.ones_like(lam), lam) + np.log(lam) - np.log(value)

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        a, rate = params["concentration"], params["rate"]
        return {
            "concentration": _concentration_partial(a, rate, value),
            "rate": a / rate - 1.0 / value,
            "value": (rate / value - (a + 1.0)) / value,
        }

    def _cdf(self, params, value, parametrization, options):
        x = np.maximum(value, 0.0)
        with np.errstate(divide="ignore"):
            return np.where(
                x > 0.0, special.gammaincc(params["concentration"], params["rate"] / x), 0.0
            )

    def _icdf(self, params, q, parametrization, options):
        p = 1.0 - q  # exact for q ≥ ½: the upper tail from its own probability
        # F = Q(a, rate/x): rate/x is the upper-regularised inverse at q.
        a = params["concentration"]
        y = np.where(q > 0.5, special.gammaincinv(a, p), special.gammainccinv(a, q))
        return params["rate"] / y

    def _sample(self, params, shape, rng, parametrization):
        return params["rate"] / rng.gamma(params["concentration"], size=shape)

    def _mean(self, params, parametrization, options):
        """rate/(a − 1); +inf for a ≤ 1 (the tail ~x^(−a−1))."""
        a, rate = params["concentration"], params["rate"]
        return np.where(a > 1.0, rate / (a - 1.0), np.inf)

    def _variance(self, params, parametrization, options):
        """rate²/((a − 1)²(a − 2)); +inf for a ≤ 2."""
        a, rate = params["concentration"], params["rate"]
        spread = rate / (a - 1.0)
        return np.where(a > 2.0, spread * spread / (a - 2.0), np.inf)

    def _mode(self, params, parametrization, options):
        return params["rate"] / (params["concentration"] + 1.0)

    def _entropy(self, params, parametrization, options):
        # a + log rate + log Γ(a) − (1 + a)·ψ(a), with log Γ(a) by Stirling and ψ(a) = log a −
        # (log a − ψ(a)): the a·log a terms cancel analytically (each ~1.4e7 at a = 1e6).
        a = params["concentration"]
        return (
            np.log(params["rate"])
            - 1.5 * np.log(a)
            + HALF_LOG_2PI
            + stirlerr(a)
            + (a + 1.0) * log_minus_digamma(a)
        )


def _concentration_partial(a: np.ndarray, rate: np.ndarray, x: np.ndarray) -> np.ndarray:
    """log(rate/x) − ψ(a). At a ≥ 10 as log(rate/(a·x)) + (log a − ψ(a)): in the bulk
    rate/x ≈ a, and log(rate/x) and ψ(a) (each ~14 at a = 1e6) would cancel to 1e-5."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        direct = np.log(rate) - special.digamma(a) - np.log(x)
        joined = np.log(rate / a / x) + log_minus_digamma(a)
    return np.where((a >= 10.0) & np.isfinite(joined), joined, direct)


INVERSE_GAMMA = InverseGamma(
    name="InverseGamma",
    parametrizations={
        "concentration_rate": {
            "concentration": ParamInfo(0, "positive"),
            "rate": ParamInfo(0, "positive"),
        },
    },
    value=ValueInfo(0, "positive"),
)
