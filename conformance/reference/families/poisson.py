"""Poisson(rate), rate ≥ 0 (both torch and NumPyro accept 0: a point mass at 0)."""

from __future__ import annotations

import numpy as np

from ..core import Arrays, Family, Options, ParamInfo, ValueInfo
from .binomial import bd0, stirling_correction


def poisson_log_pmf(rate: np.ndarray, k: np.ndarray) -> np.ndarray:
    """log(λ^k e^-λ / k!), in Loader's form for k > 0 (R's ``dpois_raw``):
    -δ(k) - bd0(k, λ) - ½·log(2πk), which does not cancel k·log λ against log k! near the mode
    (eps·14000 at k = λ = 1000 in the naive sum). At k = 0 it is -λ, and rate 0 gives 0 at k = 0
    and -inf elsewhere."""
    rate, k = np.broadcast_arrays(np.asarray(rate, np.float64), np.asarray(k, np.float64))
    with np.errstate(divide="ignore", invalid="ignore"):
        saddle = -stirling_correction(k) - bd0(k, rate) - 0.5 * np.log(2.0 * np.pi * k)
    return np.where(k > 0, saddle, -rate)


class Poisson(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        return poisson_log_pmf(params["rate"], value)

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        rate = params["rate"]
        with np.errstate(divide="ignore", invalid="ignore"):
            return {"rate": np.where(value == 0, 0.0, value / rate) - 1.0}

    def _sample(self, params, shape, rng, parametrization):
        return np.asarray(rng.poisson(params["rate"]), np.float64)

    def _mean(self, params, parametrization, options):
        return params["rate"]

    def _variance(self, params, parametrization, options):
        return params["rate"]

    def _mode(self, params, parametrization, options):
        # ⌊λ⌋. At a whole λ ≥ 1, λ − 1 and λ are equally likely: the larger is torch's.
        return np.floor(params["rate"])


POISSON = Poisson(
    name="Poisson",
    parametrizations={"rate": {"rate": ParamInfo(0, "nonnegative")}},
    value=ValueInfo(0, "nonnegative_integer", discrete=True),
)
