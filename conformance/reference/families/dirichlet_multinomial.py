"""DirichletMultinomial(concentration α, total_count n) — NumPyro only.

    P(x) = n! Γ(α₀) / Γ(n + α₀) · Π_k Γ(x_k + α_k) / (x_k! Γ(α_k)),  Σ x_k = n, α₀ = Σ α_k

(scipy's ``dirichlet_multinomial``), written as a multinomial coefficient times rising
factorials, log n!/Πx_k! + Σ log (α_k)_(x_k) - log (α₀)_n, so no difference of large log-gammas
cancels (see :mod:`conformance.reference.families.binomial`). ``total_count`` may be batched (NumPyro takes
an array).
"""

from __future__ import annotations

import numpy as np

from .. import projections
from ..core import Arrays, Family, Options, ParamInfo, Projection, Support, ValueInfo
from .beta_binomial import BETA_BINOMIAL
from .binomial import digamma_diff, log_rising
from .dirichlet import others_sum
from .multinomial import log_multinomial_coefficient


class DirichletMultinomial(Family):
    def _event_shape(self, params: Arrays, parametrization: str | None) -> tuple[int, ...]:
        return (np.shape(params["concentration"])[-1],)

    def support(self, params: Arrays, parametrization: str | None = None) -> Support:
        return Support(self.value.support, event_total=params["total_count"])

    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        alpha, n = params["concentration"], params["total_count"]
        with np.errstate(divide="ignore", invalid="ignore"):
            rising = log_rising(alpha, value).sum(-1) - log_rising(alpha.sum(-1), n)
        return log_multinomial_coefficient(value) + rising

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        alpha, n = params["concentration"], params["total_count"]
        total = alpha.sum(-1, keepdims=True)
        d = digamma_diff(alpha, value) - digamma_diff(total, n[..., None])
        return {"concentration": d}

    def _projections(self, params, parametrization, options) -> list[Projection]:
        # Counts in a set S of categories ~ BetaBinomial(n, α_S, α₀ − α_S): the Dirichlet's
        # aggregation property, then the Multinomial's.
        alpha, total = params["concentration"], params["total_count"]
        alpha_0 = alpha.sum(-1)
        found = []
        top = int(np.max(total)) if np.size(total) else 0
        counts = np.arange(top + 1, dtype=np.float64).reshape((-1,) + (1,) * np.ndim(total))
        for name, chosen in projections.count_groups(alpha.shape[-1]):
            a = alpha[..., chosen].sum(-1)
            law = {"concentration1": a, "concentration0": alpha_0 - a, "total_count": total}
            # The pmf on 0 … max(total) (0 above each element's own total), from BetaBinomial's
            # log_prob, whose pairing of rising factorials keeps its digits.
            log_pmf = BETA_BINOMIAL._log_prob(law, counts, "concentration", {})
            pmf = np.where(counts <= total, np.exp(log_pmf), 0.0)
            cdf = projections.tabulated_cdf(pmf)
            found.append(Projection(name, projections.counts_in(chosen), cdf, discrete=True))
        return found

    def _mean(self, params, parametrization, options):
        alpha, n = params["concentration"], params["total_count"]
        return n[..., None] * alpha / alpha.sum(-1, keepdims=True)

    def _variance(self, params, parametrization, options):
        # n·q_k·(1 − q_k)·(n + α₀)/(1 + α₀), q = α/α₀, 1 − q_k summed from the others.
        alpha, n = params["concentration"], params["total_count"][..., None]
        total = alpha.sum(-1, keepdims=True)
        return n * (alpha / total) * (others_sum(alpha) / total) * (n + total) / (1.0 + total)

    def _sample(self, params, shape, rng, parametrization):
        g = rng.gamma(params["concentration"])
        p = g / g.sum(-1, keepdims=True)
        n = params["total_count"].astype(np.int64)
        out = np.empty(p.shape)
        for idx in np.ndindex(*shape):
            out[idx] = rng.multinomial(n[idx], p[idx])
        return out


DIRICHLET_MULTINOMIAL = DirichletMultinomial(
    name="DirichletMultinomial",
    parametrizations={
        "concentration": {
            "concentration": ParamInfo(1, "positive"),
            "total_count": ParamInfo(0, "nonnegative_integer", integer=True),
        }
    },
    value=ValueInfo(1, "nonnegative_integer", discrete=True),
)
