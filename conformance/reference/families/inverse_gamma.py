"""InverseGamma(concentration a, rate b) on (0, ∞): the law of 1/X for X ~ Gamma(a, b).

log p = a·log b − log Γ(a) − (a + 1)·log x − b/x, evaluated as the Gamma kernel in λ = b/x:
log(λ^a·e^{−λ}/Γ(a)) − log x, so large concentrations do not cancel (see ``gamma``). The
density tends to 0 at 0, which both frameworks leave outside the support.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..core import Arrays, Family, Options, ParamInfo, ValueInfo
from .gamma import gamma_log_density


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
            "concentration": np.log(rate) - special.digamma(a) - np.log(value),
            "rate": a / rate - 1.0 / value,
            "value": (rate / value - (a + 1.0)) / value,
        }

    def _cdf(self, params, value, parametrization, options):
        x = np.maximum(value, 0.0)
        with np.errstate(divide="ignore"):
            return np.where(
                x > 0.0, special.gammaincc(params["concentration"], params["rate"] / x), 0.0
            )

    def _sample(self, params, shape, rng, parametrization):
        return params["rate"] / rng.gamma(params["concentration"], size=shape)


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
