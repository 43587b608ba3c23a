"""Bernoulli by ``probs`` or ``logits``; support {0, 1}."""

from __future__ import annotations

import numpy as np
from scipy import special

from ..core import Arrays, Family, ParamInfo, ValueInfo
from .binomial import success_failure


class Bernoulli(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options
    ) -> np.ndarray:
        if parametrization == "probs":
            p = params["probs"]
            out = special.xlogy(value, p) + special.xlog1py(1.0 - value, -p)
        else:
            # -softplus(∓logits), never x·l - softplus(l): that cancels for large |l|.
            logits = params["logits"]
            out = -np.logaddexp(0.0, np.where(value == 1.0, -logits, logits))
        return out

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options
    ) -> dict[str, np.ndarray]:
        if parametrization == "probs":
            p = params["probs"]
            with np.errstate(divide="ignore", invalid="ignore"):
                g = np.where(value == 1.0, 1.0 / p, -1.0 / (1.0 - p))
            return {"probs": g}
        logits = params["logits"]
        # x − σ(l) without cancellation: σ(−l) for x = 1, −σ(l) for x = 0.
        return {"logits": np.where(value == 1.0, special.expit(-logits), -special.expit(logits))}

    def _sample(self, params, shape, rng, parametrization):
        p = params["probs"] if parametrization == "probs" else special.expit(params["logits"])
        return (rng.random(shape) < p).astype(np.float64)

    def _mean(self, params, parametrization, options):
        return success_failure(params)[0]

    def _variance(self, params, parametrization, options):
        p, q = success_failure(params)
        return p * q

    def _mode(self, params, parametrization, options):
        # 1 − p is exact near p = ½ (Sterbenz), so p = ½ is the only tie; from logits, 0.
        p, q = success_failure(params)
        side = params["logits"] if parametrization == "logits" else p - q
        return np.where(side > 0, 1.0, np.where(side < 0, 0.0, np.nan))

    def _entropy(self, params, parametrization, options):
        if parametrization == "probs":
            p = params["probs"]
            return -special.xlogy(p, p) - special.xlog1py(1.0 - p, -p)
        # p·softplus(−l) + q·softplus(l): two positive terms, exact for any |l|.
        logits = params["logits"]
        p, q = success_failure(params)
        return p * np.logaddexp(0.0, -logits) + q * np.logaddexp(0.0, logits)


BERNOULLI = Bernoulli(
    name="Bernoulli",
    parametrizations={
        "probs": {"probs": ParamInfo(0, "unit_interval")},
        "logits": {"logits": ParamInfo(0, "real")},
    },
    value=ValueInfo(0, "boolean", discrete=True),
)
