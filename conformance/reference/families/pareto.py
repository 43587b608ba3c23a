"""Pareto(scale, alpha) on [scale, ∞): log p = log α − log x − α·log(x/scale).

``log(x/scale)`` is computed as ``log1p((x − scale)/scale)``: near the lower end x − scale is
exact (Sterbenz), where ``α·(log scale − log x)`` would cancel. Declared convention
``support_lower``: torch's support is ``[scale, ∞)`` (``closed``); NumPyro's is ``(scale, ∞)``
and it returns -inf at x = scale (``open``).
"""

from __future__ import annotations

import numpy as np

from ..core import Arrays, Family, Options, ParamInfo, Support, ValueInfo


def log_ratio(value: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """log(value/scale) without cancellation for value near scale."""
    return np.log1p((value - scale) / scale)


def log_of_ratio(x: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """log(x/ref) for any positive x: :func:`log_ratio` near ref, the quotient's log elsewhere
    (log1p of an argument near −1 would lose the digits its rounding took). A large factor
    times it (a power of 1e6) keeps its digits either way."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.abs(x - ref) < 0.5 * ref, log_ratio(x, ref), np.log(x / ref))


class Pareto(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        alpha, scale = params["alpha"], params["scale"]
        logp = np.log(alpha) - np.log(value) - alpha * log_ratio(value, scale)
        if options.get("support_lower", "closed") == "open":
            logp = np.where(value == scale, -np.inf, logp)
        return logp

    def support(self, params: Arrays, parametrization: str | None = None) -> Support:
        return Support(self.value.support, lower=params["scale"])

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        alpha, scale = params["alpha"], params["scale"]
        return {
            "scale": alpha / scale,
            "alpha": 1.0 / alpha - log_ratio(value, scale),
            "value": -(alpha + 1.0) / value,
        }

    def _cdf(self, params, value, parametrization, options):
        scale, alpha = params["scale"], params["alpha"]
        x = np.maximum(value, scale)
        return -np.expm1(-alpha * log_ratio(x, scale))

    def _icdf(self, params, q, parametrization, options):
        return params["scale"] * np.exp(-np.log1p(-q) / params["alpha"])

    def _sample(self, params, shape, rng, parametrization):
        # scale·e^E with E ~ Exponential(alpha): the construction both frameworks use.
        return params["scale"] * np.exp(rng.exponential(1.0 / params["alpha"], size=shape))

    def _mean(self, params, parametrization, options):
        """scale·α/(α − 1); +inf for α ≤ 1."""
        alpha, scale = params["alpha"], params["scale"]
        return np.where(alpha > 1.0, scale * (alpha / (alpha - 1.0)), np.inf)

    def _variance(self, params, parametrization, options):
        """scale²·α/((α − 1)²(α − 2)); +inf for α ≤ 2 (the mean's convention below α = 1)."""
        alpha, scale = params["alpha"], params["scale"]
        spread = scale / (alpha - 1.0)
        return np.where(alpha > 2.0, spread * spread * (alpha / (alpha - 2.0)), np.inf)

    def _mode(self, params, parametrization, options):
        return params["scale"]

    def _entropy(self, params, parametrization, options):
        alpha = params["alpha"]
        return np.log(params["scale"]) - np.log(alpha) + 1.0 + 1.0 / alpha


PARETO = Pareto(
    name="Pareto",
    parametrizations={
        "scale_alpha": {"scale": ParamInfo(0, "positive"), "alpha": ParamInfo(0, "positive")},
    },
    value=ValueInfo(0, "positive"),
    options={"support_lower": ("closed", "open")},
)
