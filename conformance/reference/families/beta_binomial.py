"""BetaBinomial(concentration1 α, concentration0 β, total_count n) — NumPyro only.

    P(k) = C(n, k) · B(k + α, n - k + β) / B(α, β),  k = 0, …, n

(scipy's ``betabinom(n, a=α, b=β)``), as rising factorials:

    log C(n, k) + log (α)_k + log (β)_(n-k) - log (α+β)_n

each from :func:`~conformance.reference.families.binomial.log_rising`, so α, β in the hundreds do not cost
the eps·lgamma(α) that a difference of betaln values would.
"""

from __future__ import annotations

import numpy as np

from ..core import Arrays, Options, ParamInfo, ValueInfo
from .binomial import (
    CountsUpToTotal,
    digamma_diff,
    log_binomial_coefficient,
    log_rising,
)


class BetaBinomial(CountsUpToTotal):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        a, b, n = params["concentration1"], params["concentration0"], params["total_count"]
        k = value
        with np.errstate(divide="ignore", invalid="ignore"):
            # log Γ(a+k) + log Γ(b+n−k) − log Γ(a+b+n) − log Γ(a) − log Γ(b) + log Γ(a+b),
            # paired into rising factorials whose terms are smallest, since their rounding is
            # what is left: by the counts where the counts are small (the Γs of a and b each
            # meet their own), else the larger count's Γ meets log Γ(a+b+n) — at n = 2²⁴ the
            # first pairing cancels terms of size n·log n (2e-8 off at 38.76), at a = 1e6 the
            # second cancels terms of size a·log a.
            by_counts = log_rising(a, k) + log_rising(b, n - k) - log_rising(a + b, n)
            by_k = log_rising(a, k) - log_rising(b + n - k, a + k) + log_rising(b, a)
            by_rest = log_rising(b, n - k) - log_rising(a + k, b + n - k) + log_rising(a, b)
            sizes = np.broadcast_arrays(n, 2.0 * a + k, 2.0 * b + n - k)
            best = np.argmin(np.stack(sizes), axis=0)
            return log_binomial_coefficient(n, k) + np.choose(best, [by_counts, by_k, by_rest])

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        a, b, n = params["concentration1"], params["concentration0"], params["total_count"]
        k = value
        common = digamma_diff(a + b, n)
        return {
            "concentration1": digamma_diff(a, k) - common,
            "concentration0": digamma_diff(b, n - k) - common,
        }

    def _sample(self, params, shape, rng, parametrization):
        p = rng.beta(params["concentration1"], params["concentration0"])
        return np.asarray(rng.binomial(params["total_count"].astype(np.int64), p), np.float64)

    def _mean(self, params, parametrization, options):
        a, b, n = params["concentration1"], params["concentration0"], params["total_count"]
        return n * a / (a + b)

    def _variance(self, params, parametrization, options):
        # n·αβ·(α + β + n) / ((α + β)²·(α + β + 1)).
        a, b, n = params["concentration1"], params["concentration0"], params["total_count"]
        total = a + b
        return n * (a / total) * (b / total) * (total + n) / (total + 1.0)


BETA_BINOMIAL = BetaBinomial(
    name="BetaBinomial",
    parametrizations={
        "concentration": {
            "concentration1": ParamInfo(0, "positive"),
            "concentration0": ParamInfo(0, "positive"),
            "total_count": ParamInfo(0, "nonnegative_integer", integer=True),
        }
    },
    value=ValueInfo(0, "nonnegative_integer", discrete=True),
)
