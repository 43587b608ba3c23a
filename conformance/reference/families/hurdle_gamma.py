"""HurdleGamma(gate, concentration, rate) — NumPyro only: an atom of mass g at 0 and the
Gamma density scaled by 1 − g on (0, ∞),

    log p(0) = log g,   log p(x) = log(1 − g) + log Gamma(x | α, λ) for x > 0,

a density with respect to (point mass at 0) + Lebesgue measure, so the support is [0, ∞) and 0
belongs to it. ``gate`` is NumPyro's HurdleGamma; ``generic_gate`` its generic
HurdleDistribution(Gamma(α, λ), gate=g) (class HurdleProbs), which is the same distribution.
At x = 0 log p does not depend on x smoothly (an atom): no ∂/∂x there (NaN).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..core import Arrays, Family, Options, ParamInfo, ValueInfo
from .gamma import gamma_cdf, gamma_log_density
from .hurdle_poisson import hurdle_gate_grad, log_gates, sample_gate


class HurdleGamma(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        log_g, log_1mg = log_gates(params)
        a, rate = params["concentration"], params["rate"]
        x = np.where(value == 0, 1.0, value)
        return np.where(value == 0, log_g, log_1mg + gamma_log_density(a, rate, x))

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        a, rate = params["concentration"], params["rate"]
        zero = value == 0
        x = np.where(zero, 1.0, value)
        return {
            "concentration": np.where(zero, 0.0, np.log(rate * x) - special.digamma(a)),
            "rate": np.where(zero, 0.0, a / rate - x),
            "value": np.where(zero, np.nan, (a - 1.0) / x - rate),
            **hurdle_gate_grad(params, zero),
        }

    def _cdf(self, params, value, parametrization, options):
        # The atom g at 0, then (1 − g)·P(α, λx).
        log_g, log_1mg = log_gates(params)
        x = np.maximum(value, 0.0)
        base = gamma_cdf(params["concentration"], params["rate"], x)
        return np.where(value < 0.0, 0.0, np.exp(log_g) + np.exp(log_1mg) * base)

    def _sample(self, params, shape, rng, parametrization):
        drawn = rng.gamma(params["concentration"], 1.0 / params["rate"], size=shape)
        return sample_gate(params, drawn, shape, rng)

    def _mean(self, params, parametrization, options):
        _, log_1mg = log_gates(params)
        return np.exp(log_1mg) * (params["concentration"] / params["rate"])

    def _variance(self, params, parametrization, options):
        # (1 − g)·E[Y²] − (1 − g)²·E[Y]² = (1 − g)·α·(1 + g·α)/λ²: no difference formed.
        log_g, log_1mg = log_gates(params)
        a, rate = params["concentration"], params["rate"]
        return np.exp(log_1mg) * a * (1.0 + np.exp(log_g) * a) / rate / rate


_GAMMA = {"concentration": ParamInfo(0, "positive"), "rate": ParamInfo(0, "positive")}
HURDLE_GAMMA = HurdleGamma(
    name="HurdleGamma",
    parametrizations={
        "gate": {"gate": ParamInfo(0, "unit_interval"), **_GAMMA},
        "generic_gate": {"gate": ParamInfo(0, "unit_interval"), **_GAMMA},
    },
    value=ValueInfo(0, "nonnegative"),
)
