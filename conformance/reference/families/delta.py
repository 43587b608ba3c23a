"""Delta(v, log_density) with scalar events — NumPyro's Delta and GPyTorch's (Pyro's copy):
a point mass at v whose log_prob carries the extra term log_density,

    log_prob(x) = log_density if x == v, −inf otherwise.

Both frameworks write log 1{x = v} + log_density: at v the mass is 1 (log 1 = 0) and
log_density is an additive constant that keeps the family closed under reparametrisation (a
Jacobian term). The support is the real line in both (no validation rejects x ≠ v; the −inf is
log_prob's own), and the batch shape is v's broadcast with log_density's. log_prob jumps where x
meets v, so neither ∂/∂v nor ∂/∂x exists: v is declared never differentiated (``integer``, the
oracle's flag for it) and the value discrete (a point mass is a discrete law on the real line,
as Pyro's docstring says); ∂/∂log_density is 1 (log_prob is log 1{x = v} + log_density, and
both frameworks add it so: at x ≠ v too, where log_prob is −inf).
"""

from __future__ import annotations

import numpy as np

from ..core import Arrays, Family, Options, ParamInfo, ValueInfo


class Delta(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        return np.where(value == params["v"], params["log_density"], -np.inf)

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        return {"log_density": np.ones(np.broadcast_shapes(np.shape(value), np.shape(params["v"])))}

    def _cdf(self, params, value, parametrization, options):
        return np.where(value >= params["v"], 1.0, 0.0)

    def _sample(self, params, shape, rng, parametrization):
        return np.broadcast_to(params["v"], shape).copy()

    def _mean(self, params, parametrization, options):
        return params["v"]

    def _variance(self, params, parametrization, options):
        return np.zeros(np.shape(params["v"]))

    def _entropy(self, params, parametrization, options):
        # −E[log p(X)] = −log_density: the one value X takes has log_prob log_density.
        return -params["log_density"]


DELTA = Delta(
    name="Delta",
    parametrizations={
        "v_log_density": {
            "v": ParamInfo(0, "real", integer=True),
            "log_density": ParamInfo(0, "real"),
        },
    },
    value=ValueInfo(0, "real", discrete=True),
)
