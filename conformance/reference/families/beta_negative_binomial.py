"""BetaNegativeBinomial(concentration1 α, concentration0 β, n) (NumPyro): the NegativeBinomial
(successes of probability p before n failures, the suite's NegativeBinomial convention) with
p ~ Beta(α, β) integrated out,

    P(k) = Γ(n + k)/(Γ(n) k!) · B(α + k, β + n)/B(α, β),   k = 0, 1, …

(scipy's ``betanbinom(n, a=β, b=α)``: scipy's first concentration is the failures'). Written
as differences of log Γ paired into rising factorials
(:func:`~conformance.reference.families.binomial.log_rising`), the pairing chosen by which
inputs are small (n + k, α + β, α + k or β + n), so no two log Γ of a large argument are
differenced. n is real and positive (NumPyro's constraint), as NegativeBinomial's total_count.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..core import Arrays, Family, Options, ParamInfo, ValueInfo
from .binomial import digamma_diff_of_diffs, log_rising
from .negative_binomial import log_nb_coefficient


class BetaNegativeBinomial(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        a, b, n = params["concentration1"], params["concentration0"], params["n"]
        k = value
        with np.errstate(divide="ignore", invalid="ignore"):
            # log Γ(n+k) − log Γ(n) − log Γ(k+1) + log Γ(α+k) − log Γ(α) + log Γ(β+n) − log Γ(β)
            # − log Γ(α+β+n+k) + log Γ(α+β), paired into rising factorials over the shortest
            # stretches: by the counts where n + k is smallest, else by the concentrations
            # (α + β) or by α + k; each pairing's rounding grows with the stretches it spans.
            by_counts = (
                log_nb_coefficient(n, k)
                + log_rising(a, k)
                - log_rising(a + b + n, k)
                + log_rising(b, n)
                - log_rising(a + b, n)
            )
            by_concentrations = (
                log_rising(k + 1.0, a - 1.0)
                - log_rising(n + k, a + b)
                + log_rising(n, b)
                + log_rising(a, b)
                - special.gammaln(b)
            )
            by_a_and_k = (
                log_rising(n, k)
                - log_rising(b + n, a + k)
                + log_rising(a, k)
                - special.gammaln(k + 1.0)
                + log_rising(b, a)
            )
            # By the failures' stretches β, n and β + n: at a huge α the bulk's k is huge too,
            # and every other pairing spans one of them (terms of 1e7 cancelling to −14).
            by_b_and_n = (
                log_nb_coefficient(n, k)
                + log_rising(b, n)
                + log_rising(a, b)
                - log_rising(a + k, b + n)
            )
            sizes = np.broadcast_arrays(n + k, a + b, a + k, b + n)
            best = np.argmin(np.stack(sizes), axis=0)
            pairings = (by_counts, by_concentrations, by_a_and_k, by_b_and_n)
            return np.choose(best, np.broadcast_arrays(*pairings))

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        a, b, n = params["concentration1"], params["concentration0"], params["n"]
        k = value
        return {
            # ψ(α+k) − ψ(α) − ψ(α+β+n+k) + ψ(α+β)
            "concentration1": digamma_diff_of_diffs(a, k, b, n),
            # ψ(β+n) − ψ(β) − ψ(α+β+n+k) + ψ(α+β)
            "concentration0": digamma_diff_of_diffs(b, n, a, k),
            # ψ(n+k) − ψ(n) − ψ(α+β+n+k) + ψ(β+n)
            "n": digamma_diff_of_diffs(n, k, b, a),
        }

    def _sample(self, params, shape, rng, parametrization):
        p = rng.beta(params["concentration1"], params["concentration0"])
        with np.errstate(divide="ignore"):
            odds = p / (1.0 - p)
        lam = rng.gamma(params["n"], np.minimum(odds, 1e300))
        return np.asarray(rng.poisson(np.minimum(lam, 1e15)), np.float64)

    def _mean(self, params, parametrization, options):
        # n·α/(β − 1) for β > 1; the count's tail is heavy below: +inf.
        a, b, n = params["concentration1"], params["concentration0"], params["n"]
        return np.where(b > 1.0, n * a / (b - 1.0), np.inf)

    def _variance(self, params, parametrization, options):
        # n·α·(n + β − 1)·(α + β − 1) / ((β − 1)²·(β − 2)) for β > 2; +inf below (NumPyro's
        # +inf at β ≤ 1 too, where the mean is already infinite).
        a, b, n = params["concentration1"], params["concentration0"], params["n"]
        bm1 = b - 1.0
        found = n * a * (n + bm1) * (a + bm1) / (bm1 * bm1 * (b - 2.0))
        return np.where(b > 2.0, found, np.inf)


BETA_NEGATIVE_BINOMIAL = BetaNegativeBinomial(
    name="BetaNegativeBinomial",
    parametrizations={
        "concentration": {
            "concentration1": ParamInfo(0, "positive"),
            "concentration0": ParamInfo(0, "positive"),
            "n": ParamInfo(0, "positive"),
        }
    },
    value=ValueInfo(0, "nonnegative_integer", discrete=True),
)
