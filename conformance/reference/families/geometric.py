"""Geometric(probs | logits): the number of failures before the first success, support {0, 1, …}.

Both torch and NumPyro count failures (scipy's ``geom`` counts trials: k + 1). ``probs`` lies
in (0, 1]: p = 0 is no distribution (no success ever, no mass anywhere) and torch rejects it;
p = 1 is a point mass at 0.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..core import Arrays, Family, Options, ParamInfo, ValueInfo
from .binomial import softplus


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


GEOMETRIC = Geometric(
    name="Geometric",
    parametrizations={
        "probs": {"probs": ParamInfo(0, "unit_interval")},
        "logits": {"logits": ParamInfo(0, "real")},
    },
    value=ValueInfo(0, "nonnegative_integer", discrete=True),
)
