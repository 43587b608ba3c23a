"""ZeroInflatedBinomial(gate | gate_logits, total_count, probs) — NumPyro only: its generic
ZeroInflatedDistribution over a BinomialProbs base (class ZeroInflatedProbs by ``gate``,
ZeroInflatedLogits by ``gate_logits``),

    P(0) = g + (1 − g)·(1 − p)^n,   P(k) = (1 − g)·Binomial(k | n, p) for 1 ≤ k ≤ n.

A base whose support ends at total_count, unlike ZeroInflatedPoisson's: the wrapper must carry
that end. P(0) is a logaddexp of log g and log(1 − g) + n·log1p(−p), so neither g → 0 nor
(1 − p)^n below float32's range loses it.
"""

from __future__ import annotations

import numpy as np

from ..core import Arrays, Options, ParamInfo, ValueInfo
from .binomial import CountsUpToTotal, log_binomial_pmf
from .hurdle_poisson import log_gates


def _log_q_power(n: np.ndarray, p: np.ndarray) -> np.ndarray:
    """n·log(1 − p), 0 where n = 0 (also at p = 1)."""
    return np.where(n == 0, 0.0, n * np.log1p(-p))


class ZeroInflatedBinomial(CountsUpToTotal):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        log_g, log_1mg = log_gates(params)
        n, p = params["total_count"], params["probs"]
        at_zero = np.logaddexp(log_g, log_1mg + _log_q_power(n, p))
        base = log_binomial_pmf(n, value, p, 1.0 - p, np.log(p), np.log1p(-p))
        return np.where(value == 0, at_zero, log_1mg + base)

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        log_g, log_1mg = log_gates(params)
        n, p, k = params["total_count"], params["probs"], value
        log_q_n = _log_q_power(n, p)
        log_p0 = np.logaddexp(log_g, log_1mg + log_q_n)
        zero = k == 0
        # At 0: ∂/∂p = −share·n/(1 − p), share = (1 − g)(1 − p)^n / P(0); ∂/∂g = (1 − (1 − p)^n)/P(0).
        share = np.exp(log_1mg + log_q_n - log_p0)
        d_probs_zero = -share * np.where(n == 0, 0.0, n / (1.0 - p))
        d_probs = np.where(k == 0, 0.0, k / p) - np.where(n - k == 0, 0.0, (n - k) / (1.0 - p))
        d_gate = np.where(zero, -np.expm1(log_q_n) * np.exp(-log_p0), -1.0 / np.exp(log_1mg))
        out = {"probs": np.where(zero, d_probs_zero, d_probs)}
        if parametrization == "gate":
            out["gate"] = d_gate
        else:
            out["gate_logits"] = d_gate * np.exp(log_g + log_1mg)
        return out

    def _sample(self, params, shape, rng, parametrization):
        log_g, _ = log_gates(params)
        n = params["total_count"].astype(np.int64)
        counts = np.asarray(rng.binomial(n, params["probs"]), np.float64)
        return np.where(rng.random(shape) < np.exp(log_g), 0.0, counts)

    def _mean(self, params, parametrization, options):
        _, log_1mg = log_gates(params)
        return np.exp(log_1mg) * params["total_count"] * params["probs"]

    def _variance(self, params, parametrization, options):
        # (1 − g)·(σ² + μ²) − (1 − g)²·μ² = (1 − g)·(σ² + g·μ²), μ = np and σ² = np(1 − p).
        log_g, log_1mg = log_gates(params)
        n, p = params["total_count"], params["probs"]
        mean = n * p
        return np.exp(log_1mg) * (mean * (1.0 - p) + np.exp(log_g) * mean * mean)


_BASE = {
    "total_count": ParamInfo(0, "nonnegative_integer", integer=True),
    "probs": ParamInfo(0, "unit_interval"),
}
ZERO_INFLATED_BINOMIAL = ZeroInflatedBinomial(
    name="ZeroInflatedBinomial",
    parametrizations={
        "gate": {"gate": ParamInfo(0, "unit_interval"), **_BASE},
        "gate_logits": {"gate_logits": ParamInfo(0, "real"), **_BASE},
    },
    value=ValueInfo(0, "nonnegative_integer", discrete=True),
)
