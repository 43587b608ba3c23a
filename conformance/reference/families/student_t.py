"""StudentT(df, loc, scale) on the real line.

The normaliser is written ``−log B(df/2, 1/2) − log(df)/2`` rather than
``lgamma((df+1)/2) − lgamma(df/2) − log(df·π)/2``: the two lgammas are huge and nearly equal for
large df, and their difference loses every digit. :func:`~conformance.reference.families.beta.log_beta`
does not cancel (``scipy.special.betaln`` does, there: 6e-11 relative at df = 6e5).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..core import Arrays, Family, Options, ParamInfo, ValueInfo
from .beta import digamma_gap, f_gap, log_beta


def log1p_square_over(z: np.ndarray, df: np.ndarray) -> np.ndarray:
    """log(1 + z²/df), finite for every finite z (above 1e17, log1p(t) = log t to the last bit)."""
    az = np.abs(z)
    t = az * az / df
    big = ~(t < 1e17)
    safe = np.where(big, 1.0, t)
    return np.where(big, 2.0 * np.log(az) - np.log(df), np.log1p(safe))


class StudentT(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        df, scale = params["df"], params["scale"]
        z = (value - params["loc"]) / scale
        return (
            -log_beta(0.5 * df, 0.5)
            - 0.5 * np.log(df)
            - np.log(scale)
            - 0.5 * (df + 1.0) * log1p_square_over(z, df)
        )

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        df, scale = params["df"], params["scale"]
        z = (value - params["loc"]) / scale
        az = np.abs(z)
        w = (df + 1.0) / (df + z * z)  # −∂/∂(z²/2) of the kernel, per unit z²
        # ∂/∂df = ½·[ψ((df+1)/2) − ψ(df/2) − 1/df] + ½·[q − log1p(t)] + ½·q/df with t = z²/df
        # and q = t/(1 + t): for large df an O(1/df²) sum of O(1/df) terms, so each bracket is
        # computed as a whole (digamma_gap, f_gap) instead of term by term.
        t = az * az / df
        q = 1.0 / (1.0 + (df / np.maximum(az, 1e-300)) / np.maximum(az, 1e-300))
        gap_t = np.where(t < 1.0, f_gap(np.minimum(t, 1.0)), q - log1p_square_over(z, df))
        g_df = 0.5 * digamma_gap(0.5 * df, 0.5) + 0.5 * gap_t + 0.5 * q / df
        return {
            "df": g_df,
            "loc": w * z / scale,
            "scale": (w * z * z - 1.0) / scale,
            "value": -w * z / scale,
        }

    def _cdf(self, params, value, parametrization, options):
        return special.stdtr(params["df"], (value - params["loc"]) / params["scale"])

    def _icdf(self, params, q, parametrization, options):
        p = 1.0 - q  # exact for q ≥ ½: the upper tail from its own probability
        df = params["df"]
        z = np.where(q > 0.5, -special.stdtrit(df, p), special.stdtrit(df, q))
        # In the tails stdtrit fails (+inf at q = 1e-300): there 2·min(q, p) = I_x(df/2, ½)
        # at x = df/(df + t²), so |t| = √(df·(1/x − 1)).
        x = special.betaincinv(0.5 * df, 0.5, 2.0 * np.minimum(q, p))
        with np.errstate(divide="ignore"):
            far = np.sqrt(df * (1.0 / x - 1.0))
        z = np.where(np.minimum(q, p) < 0.05, np.where(q > 0.5, far, -far), z)
        return params["loc"] + params["scale"] * z

    def _sample(self, params, shape, rng, parametrization):
        return params["loc"] + params["scale"] * rng.standard_t(params["df"], size=shape)

    def _mean(self, params, parametrization, options):
        """loc for df > 1; NaN for df ≤ 1, where E|X| is infinite on both sides (undefined)."""
        return np.where(params["df"] > 1.0, params["loc"], np.nan)

    def _variance(self, params, parametrization, options):
        """scale²·df/(df − 2) for df > 2; +inf for 1 < df ≤ 2; NaN for df ≤ 1 (no mean)."""
        df, scale = params["df"], params["scale"]
        finite = scale * scale * (df / (df - 2.0))
        return np.where(df > 2.0, finite, np.where(df > 1.0, np.inf, np.nan))

    def _mode(self, params, parametrization, options):
        return params["loc"]

    def _entropy(self, params, parametrization, options):
        # (df + 1)/2·[ψ((df + 1)/2) − ψ(df/2)] + ½·log df + log B(df/2, ½) + log scale, the ψ
        # difference as digamma_gap + 1/df (two ψ of 1e6 would keep eps·14 of its 1e-6).
        df = params["df"]
        half = 0.5 * df
        psi_gap = digamma_gap(half, 0.5) + 1.0 / df
        return (
            0.5 * (df + 1.0) * psi_gap
            + 0.5 * np.log(df)
            + log_beta(half, 0.5)
            + np.log(params["scale"])
        )


STUDENT_T = StudentT(
    name="StudentT",
    parametrizations={
        "df_loc_scale": {
            "df": ParamInfo(0, "positive"),
            "loc": ParamInfo(0, "real"),
            "scale": ParamInfo(0, "positive"),
        },
    },
    value=ValueInfo(0, "real"),
)
