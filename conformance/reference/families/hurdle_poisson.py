"""HurdlePoisson(gate | gate_logits, rate) — NumPyro only: a structural zero with probability
g, and otherwise a zero-truncated Poisson,

    P(0) = g,   P(k) = (1 − g)·Poisson(k | λ)/(1 − e^(−λ)) for k ≥ 1.

``gate`` is NumPyro's HurdlePoisson; ``gate_logits`` its generic HurdleDistribution over a
Poisson base (HurdleLogits, g = σ(gate_logits)). log(1 − e^(−λ)) is log(−expm1(−λ)), exact
for tiny rates, and its derivative 1/expm1(λ) is taken with 1/λ by series there (they cancel).
The gate helpers here serve every hurdle family (:mod:`.hurdle_gamma`, :mod:`.hurdle_log_normal`).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..core import Arrays, Family, Options, ParamInfo, ValueInfo
from .binomial import softplus
from .poisson import poisson_log_pmf


def log_gates(params: Arrays) -> tuple[np.ndarray, np.ndarray]:
    """(log g, log(1 − g)) from ``gate`` or ``gate_logits`` (softplus: exact for any logit)."""
    if "gate" in params:
        g = params["gate"]
        return np.log(g), np.log1p(-g)
    logits = params["gate_logits"]
    return -softplus(-logits), -softplus(logits)


def hurdle_gate_grad(params: Arrays, zero: np.ndarray) -> dict[str, np.ndarray]:
    """∂ log p/∂gate (or ∂/∂gate_logits) of a hurdle: log g at 0, log(1 − g) elsewhere."""
    if "gate" in params:
        g = params["gate"]
        return {"gate": np.where(zero, 1.0 / g, -1.0 / (1.0 - g))}
    logits = params["gate_logits"]
    return {"gate_logits": np.where(zero, special.expit(-logits), -special.expit(logits))}


def sample_gate(params: Arrays, drawn: np.ndarray, shape, rng) -> np.ndarray:
    """0 with probability g, else the base's draw."""
    log_g, _ = log_gates(params)
    return np.where(rng.random(shape) < np.exp(log_g), 0.0, drawn)


def one_over_lambda_minus_one_over_expm1(lam: np.ndarray) -> np.ndarray:
    """1/λ − 1/expm1(λ) (→ ½ as λ → 0): a series below 0.01, where the two terms cancel."""
    small = lam < 0.01
    ls = np.where(small, lam, 1.0)
    series = 0.5 - ls / 12.0 + ls**3 / 720.0 - ls**5 / 30240.0
    lb = np.where(small, 1.0, lam)
    return np.where(small, series, 1.0 / lb - 1.0 / np.expm1(lb))


def log_truncation(rate: np.ndarray) -> np.ndarray:
    """log P(Poisson(λ) ≥ 1) = log(1 − e^(−λ))."""
    return np.log(-np.expm1(-rate))


class HurdlePoisson(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        log_g, log_1mg = log_gates(params)
        rate = params["rate"]
        positive = log_1mg + poisson_log_pmf(rate, value) - log_truncation(rate)
        return np.where(value == 0, log_g, positive)

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        rate = params["rate"]
        zero = value == 0
        # k/λ − 1 − 1/expm1(λ) = (k − 1)/λ + (1/λ − 1/expm1(λ)) − 1
        d_rate = (value - 1.0) / rate + one_over_lambda_minus_one_over_expm1(rate) - 1.0
        return {"rate": np.where(zero, 0.0, d_rate), **hurdle_gate_grad(params, zero)}

    def _sample(self, params, shape, rng, parametrization):
        from scipy import stats

        rate = params["rate"]
        # Zero-truncated Poisson by inversion: u uniform on (P(0), 1].
        p0 = np.exp(-rate)
        u = p0 + (1.0 - p0) * (1.0 - rng.random(shape))
        counts = np.maximum(stats.poisson.ppf(u, rate), 1.0)
        return sample_gate(params, counts, shape, rng)

    def _mean(self, params, parametrization, options):
        _, log_1mg = log_gates(params)
        return np.exp(log_1mg) * _truncated_mean(params["rate"])

    def _variance(self, params, parametrization, options):
        # (1 − g)·v + g·(1 − g)·m² with m and v the zero-truncated Poisson's mean and variance,
        # v = m·(1 + λ − m) = m·λ·(1/λ − 1/expm1(λ)): 1 + λ − m cancels at a small λ.
        log_g, log_1mg = log_gates(params)
        rate = params["rate"]
        m = _truncated_mean(rate)
        v = m * rate * one_over_lambda_minus_one_over_expm1(rate)
        return np.exp(log_1mg) * (v + np.exp(log_g) * m * m)


def _truncated_mean(rate: np.ndarray) -> np.ndarray:
    """λ/(1 − e^(−λ)), the mean of a Poisson conditioned on ≥ 1 (→ 1 as λ → 0)."""
    return rate / -np.expm1(-rate)


_RATE = ParamInfo(0, "positive")
HURDLE_POISSON = HurdlePoisson(
    name="HurdlePoisson",
    parametrizations={
        "gate": {"gate": ParamInfo(0, "unit_interval"), "rate": _RATE},
        "gate_logits": {"gate_logits": ParamInfo(0, "real"), "rate": _RATE},
    },
    value=ValueInfo(0, "nonnegative_integer", discrete=True),
)
