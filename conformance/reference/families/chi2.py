"""Chi2(df) = Gamma(df/2, rate 1/2) on [0, ∞); ``support_lower`` as for Gamma (NumPyro: open)."""

from __future__ import annotations

import numpy as np
from scipy import special

from ..constants import LOG_2
from ..core import Arrays, Family, Options, ParamInfo, ValueInfo, vanishing_ratio
from .gamma import SUPPORT_LOWER, exclude_zero, gamma_entropy, gamma_log_density

LOG_HALF = np.log(0.5)


class Chi2(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        logp = gamma_log_density(0.5 * params["df"], np.full_like(value, 0.5), value)
        return exclude_zero(logp, value, options)

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        half_df = 0.5 * params["df"]
        return {
            "df": 0.5 * (np.log(value) + LOG_HALF - special.digamma(half_df)),
            "value": vanishing_ratio(half_df - 1.0, value) - 0.5,
        }

    def _cdf(self, params, value, parametrization, options):
        return special.gammainc(0.5 * params["df"], 0.5 * np.maximum(value, 0.0))

    def _icdf(self, params, q, parametrization, options):
        p = 1.0 - q  # exact for q ≥ ½: the upper tail from its own probability
        a = 0.5 * params["df"]
        return 2.0 * np.where(q > 0.5, special.gammainccinv(a, p), special.gammaincinv(a, q))

    def _sample(self, params, shape, rng, parametrization):
        return rng.chisquare(params["df"], size=shape)

    def _mean(self, params, parametrization, options):
        return params["df"]

    def _variance(self, params, parametrization, options):
        return 2.0 * params["df"]

    def _mode(self, params, parametrization, options):
        """df − 2 for df ≥ 2; 0 below, where the density is unbounded at 0 and decreasing."""
        return np.maximum(params["df"] - 2.0, 0.0)

    def _entropy(self, params, parametrization, options):
        # Gamma(df/2, rate ½): its entropy at rate 1, plus log 2.
        return gamma_entropy(0.5 * params["df"]) + LOG_2


CHI2 = Chi2(
    name="Chi2",
    parametrizations={"df": {"df": ParamInfo(0, "positive", form_changes=(2.0,))}},
    value=ValueInfo(0, "nonnegative"),
    options=dict(SUPPORT_LOWER),
)
