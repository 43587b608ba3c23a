"""RelaxedBernoulli(temperature λ, probs | logits l) — the binary Concrete distribution.

Y = σ((l + L)/λ) with L standard logistic, so Y lies in the open interval (0, 1). With
x = logit(y) and d = l - λx:

    log p(y) = log λ + d - 2·softplus(d) - log y - log(1 - y)

and d - 2·softplus(d) = -|d| - 2·log1p(exp(-|d|)) never overflows. The endpoints are outside
the support: no finite logit maps there, and the density's limit there is 0 or +inf depending on
λ (it behaves like y^(λ-1)), not a number to compare. ``temperature`` is a batched parameter
like the others.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..core import Arrays, Family, Options, ParamInfo, ValueInfo


def _logits(params: Arrays, parametrization: str) -> np.ndarray:
    if parametrization == "probs":
        p = params["probs"]
        return np.log(p) - np.log1p(-p)
    return params["logits"]


class RelaxedBernoulli(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        lam = params["temperature"]
        log_y, log_1my = np.log(value), np.log1p(-value)
        d = _logits(params, parametrization) - lam * (log_y - log_1my)
        core = -np.abs(d) - 2.0 * np.log1p(np.exp(-np.abs(d)))
        return np.log(lam) + core - log_y - log_1my

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        lam, y = params["temperature"], value
        x = np.log(y) - np.log1p(-y)
        d = _logits(params, parametrization) - lam * x
        slope = -np.tanh(0.5 * d)  # d/dd of d - 2 softplus(d) = 1 - 2σ(d)
        out = {
            "temperature": 1.0 / lam - x * slope,
            "value": -lam * slope / (y * (1.0 - y)) - 1.0 / y + 1.0 / (1.0 - y),
        }
        if parametrization == "probs":
            p = params["probs"]
            out["probs"] = slope / (p * (1.0 - p))
        else:
            out["logits"] = slope
        return out

    def _cdf(self, params, value, parametrization, options):
        # x = σ((logit p + L)/T) with L standard logistic: F(x) = σ(T·logit x − logit p).
        x = np.clip(value, 0.0, 1.0)
        with np.errstate(divide="ignore"):
            logit_x = np.log(x) - np.log1p(-x)
            return special.expit(params["temperature"] * logit_x - _logits(params, parametrization))

    def _sample(self, params, shape, rng, parametrization):
        u = rng.random(shape)
        noise = np.log(u) - np.log1p(-u)
        return special.expit((_logits(params, parametrization) + noise) / params["temperature"])


_TEMPERATURE = ParamInfo(0, "positive")
RELAXED_BERNOULLI = RelaxedBernoulli(
    name="RelaxedBernoulli",
    parametrizations={
        "probs": {"temperature": _TEMPERATURE, "probs": ParamInfo(0, "open_unit_interval")},
        "logits": {"temperature": _TEMPERATURE, "logits": ParamInfo(0, "real")},
    },
    value=ValueInfo(0, "open_unit_interval"),
)
