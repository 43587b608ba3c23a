"""Geometric(probs | logits): the number of failures before the first success, support {0, 1, …}.

Both torch and NumPyro count failures (scipy's ``geom`` counts trials: k + 1). ``probs`` lies
in (0, 1]: p = 0 is no distribution (no success ever, no mass anywhere) and torch rejects it;
p = 1 is a point mass at 0.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..core import Arrays, Family, Options, ParamInfo, ValueInfo
from .binomial import softplus, success_failure


class Geometric(Family):
    def _params_valid(self, params: Arrays, parametrization: str, options: Options) -> np.ndarray:
        ok = super()._params_valid(params, parametrization, options)
        return ok & (params["probs"] > 0) if parametrization == "probs" else ok

    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        if parametrization == "probs":
            p = params["probs"]
            return np.log(p) + special.xlog1py(value, -p)
        logits = params["logits"]
        return -softplus(-logits) - value * softplus(logits)

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        if parametrization == "probs":
            p = params["probs"]
            with np.errstate(divide="ignore", invalid="ignore"):
                return {"probs": 1.0 / p - np.where(value == 0, 0.0, value / (1.0 - p))}
        logits = params["logits"]
        return {"logits": special.expit(-logits) - value * special.expit(logits)}

    def _sample(self, params, shape, rng, parametrization):
        p = params["probs"] if parametrization == "probs" else special.expit(params["logits"])
        return np.asarray(rng.geometric(p) - 1, np.float64)

    def _mean(self, params, parametrization, options):
        return _odds_against(params)

    def _variance(self, params, parametrization, options):
        p, _ = success_failure(params)
        return _odds_against(params) / p

    def _mode(self, params, parametrization, options):
        # Every probability decreases in k (p > 0): 0.
        return np.zeros(np.shape(params[parametrization]))

    def _entropy(self, params, parametrization, options):
        # −log p − (1 − p)/p·log(1 − p).
        if parametrization == "probs":
            p = params["probs"]
            return -np.log(p) - special.xlog1py(1.0 - p, -p) / p
        logits = params["logits"]
        # (1 − p)/p·softplus(l) = e^(−l)·log1p(e^l), → 1 as l → −∞ (where e^(−l) overflows).
        t = np.exp(np.minimum(logits, 700.0))
        ratio = np.where(t < 1e-8, 1.0 - 0.5 * t, np.log1p(t) / np.where(t < 1e-8, 1.0, t))
        return softplus(-logits) + ratio


def _odds_against(params: Arrays) -> np.ndarray:
    """(1 − p)/p, the mean number of failures: e^(−l) from logits."""
    if "probs" in params:
        return (1.0 - params["probs"]) / params["probs"]
    return np.exp(-params["logits"])


GEOMETRIC = Geometric(
    name="Geometric",
    parametrizations={
        "probs": {"probs": ParamInfo(0, "unit_interval")},
        "logits": {"logits": ParamInfo(0, "real")},
    },
    value=ValueInfo(0, "nonnegative_integer", discrete=True),
)
