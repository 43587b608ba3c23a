"""FisherSnedecor(df1, df2) (the F distribution) on (0, ∞), torch's support.

For large degrees of freedom the textbook log density subtracts terms of size df·log df, so it
is written as R's ``df`` does: with q = df2/(df2 + df1·x) and p = 1 − q (each computed
directly), p(x) = (df1·q/2)·kernel(k = (df1 − 2)/2 successes, df2/2 failures; p, q) for
df1 ≥ 2 and df1²·q/(2p·(df1 + df2))·kernel(df1/2, df2/2; p, q) below, with Loader's
cancellation-free binomial kernel.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..core import Arrays, Family, Options, ParamInfo, ValueInfo
from .beta import LARGE, digamma_gap, f_gap, log_binomial_kernel, log_minus_offset
from .binomial import digamma_log_gap


class FisherSnedecor(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        m, n = params["df1"], params["df2"]
        f = 1.0 / (n + value * m)
        q, p = n * f, value * m * f
        upper = m >= 2.0
        k = np.where(upper, 0.5 * (m - 2.0), 0.5 * m)
        log_front = np.where(
            upper, np.log(0.5 * m * q), np.log(m * m * q) - np.log(2.0 * p * (m + n))
        )
        return log_front + log_binomial_kernel(k, 0.5 * n, p, q)

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        # With a = df1/2, b = df2/2, y = df1·x/df2, q = y/(1 + y), f(t) = t/(1+t) − log1p(t):
        #   ∂/∂df1 = ½·f(1/y) + ½·[ψ(a+b) − ψ(a)] − b·q/df1
        #   ∂/∂df2 = ½·f(y) + ½·[ψ(a+b) − ψ(b)] − a·(1 − q)/df2
        #   ∂/∂x = ((a − 1) − a·x − y)/((1 + y)·x)
        # For a ≥ 10 and b ≤ a the ψ difference of ∂/∂df1 is ≈ b/a and cancels against b·q/df1
        # (both O(1/df1), the sum O(1/df1²)): it is regrouped around digamma_gap = ψ(x + d) −
        # ψ(x) − d/x as ½·digamma_gap(a, b) + b·(1 − q)/df1; likewise ∂/∂df2 for b ≥ 10, a ≤ b.
        df1, df2 = params["df1"], params["df2"]
        a, b = 0.5 * df1, 0.5 * df2
        y = df1 * value / df2
        q, one_minus_q = y / (1.0 + y), 1.0 / (1.0 + y)
        psi_ab = special.digamma(a + b)
        g1 = np.where(
            (a >= LARGE) & (b <= a),
            0.5 * digamma_gap(a, b) + b * one_minus_q / df1,
            0.5 * (psi_ab - special.digamma(a)) - b * q / df1,
        )
        g2 = np.where(
            (b >= LARGE) & (a <= b),
            0.5 * digamma_gap(b, a) + a * q / df2,
            0.5 * (psi_ab - special.digamma(b)) - a * one_minus_q / df2,
        )
        # Both large (df1 = df2 = 1e6): each regrouping still cancels terms of ~0.3 to 1e-7.
        both = (a >= LARGE) & (b >= LARGE)
        g1_both, g2_both = _large_df_partials(
            np.where(both, a, LARGE), np.where(both, b, LARGE), value
        )
        return {
            "df1": np.where(both, g1_both, 0.5 * f_gap(1.0 / y) + g1),
            "df2": np.where(both, g2_both, 0.5 * f_gap(y) + g2),
            "value": ((a - 1.0) - a * value - y) / ((1.0 + y) * value),
        }

    def _cdf(self, params, value, parametrization, options):
        return special.fdtr(params["df1"], params["df2"], np.maximum(value, 0.0))

    def _sample(self, params, shape, rng, parametrization):
        return rng.f(params["df1"], params["df2"], size=shape)

    def _mean(self, params, parametrization, options):
        """df2/(df2 − 2) for df2 > 2; +inf for df2 ≤ 2 (the tail ~x^(−df2/2−1))."""
        df2 = params["df2"]
        return np.where(df2 > 2.0, df2 / (df2 - 2.0), np.inf)

    def _variance(self, params, parametrization, options):
        """2·df2²·(df1 + df2 − 2)/(df1·(df2 − 2)²·(df2 − 4)) for df2 > 4; +inf for df2 ≤ 4."""
        df1, df2 = params["df1"], params["df2"]
        ratio = df2 / (df2 - 2.0)
        finite = 2.0 * ratio * ratio * ((df1 + df2 - 2.0) / df1) / (df2 - 4.0)
        return np.where(df2 > 4.0, finite, np.inf)

    def _mode(self, params, parametrization, options):
        """(df1 − 2)/df1·df2/(df2 + 2) for df1 > 2; 0 for df1 ≤ 2, where the density decreases
        from its supremum at 0 (+inf below df1 = 2)."""
        df1, df2 = params["df1"], params["df2"]
        return np.where(df1 > 2.0, (df1 - 2.0) / df1 * (df2 / (df2 + 2.0)), 0.0)


def _large_df_partials(
    a: np.ndarray, b: np.ndarray, x: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """∂/∂df1 and ∂/∂df2 as ½·[log u − (u − 1) + ψ(a + b) − ψ(a) − log1p(b/a)] and its mirror,
    u = x(a + b)/(b + a·x) and u' = (a + b)/(b + a·x): every log of the density's terms joined
    into log u, so only what log u − (u − 1) and the ψ differences' gaps (digamma_log_gap)
    leave is summed, each to a few ulps of itself."""
    with np.errstate(divide="ignore", invalid="ignore"):
        den = b + a * x
        d1 = log_minus_offset(x * (a + b) / den, b * (x - 1.0) / den) + digamma_log_gap(a, b)
        d2 = log_minus_offset((a + b) / den, a * (1.0 - x) / den) + digamma_log_gap(b, a)
    return 0.5 * d1, 0.5 * d2


FISHER_SNEDECOR = FisherSnedecor(
    name="FisherSnedecor",
    parametrizations={
        "df1_df2": {"df1": ParamInfo(0, "positive"), "df2": ParamInfo(0, "positive")},
    },
    value=ValueInfo(0, "positive"),
)
