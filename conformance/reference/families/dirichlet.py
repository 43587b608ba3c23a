"""Dirichlet(concentration) on the closed simplex.

(α_k - 1)·log x_k is xlogy: at a vertex or edge (x_k = 0) the density is finite for α_k = 1,
+inf for α_k < 1 and 0 for α_k > 1 — the limits of the density, which both frameworks'
closed-simplex support admits.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from .. import projections
from ..core import Arrays, Family, Options, ParamInfo, ValueInfo


def log_dirichlet_normalizer(alpha: np.ndarray) -> np.ndarray:
    """log B(α) = Σ log Γ(α_k) - log Γ(Σ α_k), over the last axis."""
    return special.gammaln(alpha).sum(-1) - special.gammaln(alpha.sum(-1))


class Dirichlet(Family):
    def _event_shape(self, params: Arrays, parametrization: str | None) -> tuple[int, ...]:
        return (np.shape(params["concentration"])[-1],)

    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        alpha = params["concentration"]
        return special.xlogy(alpha - 1.0, value).sum(-1) - log_dirichlet_normalizer(alpha)

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        alpha = params["concentration"]
        psi_total = special.digamma(alpha.sum(-1, keepdims=True))
        with np.errstate(divide="ignore", invalid="ignore"):
            d_value = np.where(alpha == 1.0, 0.0, (alpha - 1.0) / value)
        return {
            "concentration": np.log(value) + psi_total - special.digamma(alpha),
            "value": d_value,
        }

    def _projections(self, params, parametrization, options):
        # x_i ~ Beta(α_i, α_0 − α_i).
        alpha = params["concentration"]
        total = alpha.sum(-1)
        found = []
        for i in projections.coordinates(alpha.shape[-1]):
            a, b = alpha[..., i], total - alpha[..., i]

            def cdf(y, a=a, b=b):
                return special.betainc(a, b, np.clip(y, 0.0, 1.0))

            found.append(projections.coordinate(i, cdf))
        return found

    def _draw_moments(self, params, weights, parametrization, options):
        """With α₀ = Σα, A = Σ w·α and B = Σ w²·α: E[s] = A/α₀ and, as
        E[x_i x_j] = α_i(α_j + δ_ij)/(α₀(α₀ + 1)), E[s²] = (A² + B)/(α₀(α₀ + 1))."""
        alpha = params["concentration"]
        total = alpha.sum(-1)
        a = (weights * alpha).sum(-1)
        b = (weights * weights * alpha).sum(-1)
        return a / total, (a * a + b) / (total * (total + 1.0))

    def _sample(self, params, shape, rng, parametrization):
        g = rng.gamma(params["concentration"])
        return g / g.sum(-1, keepdims=True)

    def _mean(self, params, parametrization, options):
        alpha = params["concentration"]
        return alpha / alpha.sum(-1, keepdims=True)

    def _variance(self, params, parametrization, options):
        # α_k·(α₀ − α_k)/(α₀²·(α₀ + 1)), α₀ − α_k summed from the others (no cancellation).
        alpha = params["concentration"]
        total = alpha.sum(-1, keepdims=True)
        return (alpha / total) * (others_sum(alpha) / total) / (total + 1.0)

    def _mode(self, params, parametrization, options):
        # (α − 1)/(α₀ − K) where every α_k ≥ 1 and some α_k > 1. Where some α_k < 1 the density
        # is unbounded towards the face x_k = 0 and where every α_k = 1 it is flat: no unique
        # maximiser (torch puts a one-hot or the clamped (α − 1)₊ there instead).
        alpha = params["concentration"]
        excess = alpha - 1.0
        unique = np.all(excess >= 0, axis=-1) & np.any(excess > 0, axis=-1)
        found = excess / excess.sum(-1, keepdims=True)
        return np.where(unique[..., None], found, np.nan)

    def _entropy(self, params, parametrization, options):
        # log B(α) + (α₀ − K)·ψ(α₀) − Σ (α_k − 1)·ψ(α_k).
        alpha = params["concentration"]
        total = alpha.sum(-1)
        k = alpha.shape[-1]
        return (
            log_dirichlet_normalizer(alpha)
            + (total - k) * special.digamma(total)
            - ((alpha - 1.0) * special.digamma(alpha)).sum(-1)
        )


def others_sum(x: np.ndarray) -> np.ndarray:
    """Σ_{j ≠ k} x_j for every k along the last axis, summed, not x₀ − x_k (which cancels where
    x_k dominates)."""
    return x @ (1.0 - np.eye(x.shape[-1]))


DIRICHLET = Dirichlet(
    name="Dirichlet",
    parametrizations={
        "concentration": {"concentration": ParamInfo(1, "positive", form_changes=(1.0,))}
    },
    value=ValueInfo(1, "simplex"),
)
