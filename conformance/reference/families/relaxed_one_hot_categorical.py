"""RelaxedOneHotCategorical(temperature λ, probs | logits) — the Concrete distribution.

Y = softmax((l + G)/λ) with G standard Gumbel, on the open simplex (every y_k > 0). Its density
with respect to Lebesgue measure on the first K-1 coordinates is

    log p(y) = log Γ(K) + (K-1)·log λ + Σ_k (l_k - (λ+1)·log y_k) - K·logsumexp_k(l_k - λ·log y_k)

(Maddison et al. 2017). Adding a constant to every l_k leaves it unchanged, so whether a
framework normalises ``probs`` makes no difference here. A value on the simplex's boundary
(some y_k = 0) is outside the support.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..core import Arrays, Family, Options, ParamInfo, Projection, Support, ValueInfo


def _logits(params: Arrays, parametrization: str) -> np.ndarray:
    return np.log(params["probs"]) if parametrization == "probs" else params["logits"]


class RelaxedOneHotCategorical(Family):
    def _event_shape(self, params: Arrays, parametrization: str | None) -> tuple[int, ...]:
        key = "probs" if "probs" in params else "logits"
        return (np.shape(params[key])[-1],)

    def support(self, params: Arrays, parametrization: str | None = None) -> Support:
        return Support(self.value.support, interior=True)

    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        lam = params["temperature"]
        k = value.shape[-1]
        logits, log_y = _logits(params, parametrization), np.log(value)
        score = logits - lam[..., None] * log_y
        return (
            special.gammaln(k)
            + (k - 1) * np.log(lam)
            + (logits - (lam[..., None] + 1.0) * log_y).sum(-1)
            - k * special.logsumexp(score, axis=-1)
        )

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        lam = params["temperature"]
        k = value.shape[-1]
        logits, log_y = _logits(params, parametrization), np.log(value)
        soft = special.softmax(logits - lam[..., None] * log_y, axis=-1)
        d_logits = 1.0 - k * soft
        out = {
            "temperature": (k - 1) / lam - log_y.sum(-1) + k * (soft * log_y).sum(-1),
            "value": (-(lam[..., None] + 1.0) + k * soft * lam[..., None]) / value,
        }
        if parametrization == "probs":
            out["probs"] = d_logits / params["probs"]
        else:
            out["logits"] = d_logits
        return out

    def _projections(self, params, parametrization, options):
        # log y_0 − log y_1 = (l_0 − l_1 + G_0 − G_1)/λ, and a difference of standard Gumbels is
        # standard logistic.
        logits = _logits(params, parametrization)
        lam = params["temperature"]
        loc = (logits[..., 0] - logits[..., 1]) / lam

        def cdf(t):
            return special.expit(lam * (t - loc))

        return [
            Projection("log y[0] − log y[1]", lambda y: np.log(y[..., 0]) - np.log(y[..., 1]), cdf)
        ]

    def _pathwise(self, params, draws, weights, parametrization, options):
        """y = softmax(s), s = (l + G)/λ (torch's map: Gumbel noise, its ExpRelaxedCategorical
        in log space, then exp). With a = Jᵀw = y ⊙ (w − w·y), ∂(w·y)/∂l = a/λ and
        ∂/∂λ = −a·s/λ; s is log y up to a constant that a, summing to 0, does not see, so the
        draw determines both. The frameworks normalise the logits (l − logsumexp l) or the
        probs (p/Σp) first, which adds −softmax(l)·Σ_k ∂/∂l_k (by probs, ∂/∂l_k/p_k − Σ_k
        ∂/∂l_k/Σp): zero where a sums to 0, and kept so that the tolerance sees the rounding of
        what cancels there (a float32 draw's coordinates sum to 1 only to its rounding, and the
        sensitivity moves them apart). A coordinate rounded to 0 loses s: that draw's
        temperature derivative is not judged (it is NaN)."""
        lam = params["temperature"][..., None]
        with np.errstate(all="ignore"):
            log_y = np.log(draws)
            a = draws * (weights - (weights * draws).sum(-1, keepdims=True))
            d_logits = a / lam
            total = d_logits.sum(-1, keepdims=True)
            found = {"temperature": -(a * log_y).sum(-1) / lam[..., 0]}
            if parametrization == "probs":
                probs = params["probs"]
                found["probs"] = d_logits / probs - total / probs.sum(-1, keepdims=True)
            else:
                found["logits"] = d_logits - special.softmax(params["logits"], axis=-1) * total
        return found

    def _sample(self, params, shape, rng, parametrization):
        logits = _logits(params, parametrization)
        gumbel = -np.log(-np.log(rng.random(logits.shape)))
        return special.softmax((logits + gumbel) / params["temperature"][..., None], axis=-1)


_TEMPERATURE = ParamInfo(0, "positive")
RELAXED_ONE_HOT_CATEGORICAL = RelaxedOneHotCategorical(
    name="RelaxedOneHotCategorical",
    parametrizations={
        "probs": {"temperature": _TEMPERATURE, "probs": ParamInfo(1, "simplex")},
        "logits": {"temperature": _TEMPERATURE, "logits": ParamInfo(1, "real_vector")},
    },
    value=ValueInfo(1, "simplex"),
)
