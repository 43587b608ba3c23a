"""ZeroInflatedPoisson(gate | gate_logits, rate) — NumPyro only.

    P(0) = g + (1 - g)·e^(-λ),   P(k) = (1 - g)·Poisson(k | λ) for k ≥ 1

``gate`` is NumPyro's ZeroInflatedPoisson; ``gate_logits`` is its ZeroInflatedDistribution over a
Poisson base (g = σ(gate_logits)). P(0) is a logaddexp of log g and log(1-g) - λ, so neither
g → 0 nor λ → 0 loses it; log g and log(1-g) come from softplus for the logits. NumPyro requires
rate > 0 here (its Poisson alone allows 0).
"""

from __future__ import annotations

import numpy as np

from ..core import Arrays, Family, Options, ParamInfo, ValueInfo
from .binomial import softplus
from .poisson import poisson_log_pmf


def _log_gates(params: Arrays, parametrization: str) -> tuple[np.ndarray, np.ndarray]:
    """(log g, log(1 - g))."""
    if parametrization == "gate":
        g = params["gate"]
        return np.log(g), np.log1p(-g)
    logits = params["gate_logits"]
    return -softplus(-logits), -softplus(logits)


class ZeroInflatedPoisson(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        log_g, log_1mg = _log_gates(params, parametrization)
        rate = params["rate"]
        at_zero = np.logaddexp(log_g, log_1mg - rate)
        return np.where(value == 0, at_zero, log_1mg + poisson_log_pmf(rate, value))

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        log_g, log_1mg = _log_gates(params, parametrization)
        rate = params["rate"]
        g, one_minus_g = np.exp(log_g), np.exp(log_1mg)
        # P(0) = g + (1-g)e^{-λ}; weight of the Poisson part in it:
        poisson_share = np.exp(log_1mg - rate - np.logaddexp(log_g, log_1mg - rate))
        zero = value == 0
        with np.errstate(divide="ignore", invalid="ignore"):
            d_rate = np.where(zero, -poisson_share, value / rate - 1.0)
            # ∂/∂g: (1 - e^{-λ}) / P(0) at 0, -1/(1-g) elsewhere.
            d_gate = np.where(
                zero,
                -np.expm1(-rate) * np.exp(-np.logaddexp(log_g, log_1mg - rate)),
                -1.0 / one_minus_g,
            )
        out = {"rate": d_rate}
        if parametrization == "gate":
            out["gate"] = d_gate
        else:
            out["gate_logits"] = d_gate * g * one_minus_g
        return out

    def _sample(self, params, shape, rng, parametrization):
        log_g, _ = _log_gates(params, parametrization)
        counts = np.asarray(rng.poisson(params["rate"]), np.float64)
        return np.where(rng.random(shape) < np.exp(log_g), 0.0, counts)

    def _mean(self, params, parametrization, options):
        _, log_1mg = _log_gates(params, parametrization)
        return np.exp(log_1mg) * params["rate"]

    def _variance(self, params, parametrization, options):
        # (1 − g)·(λ + λ²) − (1 − g)²·λ² = (1 − g)·λ·(1 + g·λ).
        log_g, log_1mg = _log_gates(params, parametrization)
        rate = params["rate"]
        return np.exp(log_1mg) * rate * (1.0 + np.exp(log_g) * rate)


_RATE = ParamInfo(0, "positive")
ZERO_INFLATED_POISSON = ZeroInflatedPoisson(
    name="ZeroInflatedPoisson",
    parametrizations={
        "gate": {"gate": ParamInfo(0, "unit_interval"), "rate": _RATE},
        "gate_logits": {"gate_logits": ParamInfo(0, "real"), "rate": _RATE},
    },
    value=ValueInfo(0, "nonnegative_integer", discrete=True),
)
