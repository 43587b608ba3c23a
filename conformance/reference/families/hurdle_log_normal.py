"""HurdleLogNormal(gate | gate_logits, loc, scale) — NumPyro only: an atom of mass g at 0 and
the LogNormal density scaled by 1 − g on (0, ∞),

    log p(0) = log g,   log p(x) = log(1 − g) + log LogNormal(x | μ, σ) for x > 0,

a density with respect to (point mass at 0) + Lebesgue measure: 0 belongs to the support.
``gate`` is NumPyro's HurdleLogNormal; ``generic_gate_logits`` its generic
HurdleDistribution(LogNormal(μ, σ), gate_logits=l) (class HurdleLogits, g = σ(l)).
At x = 0 there is no ∂/∂x (an atom: NaN).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..constants import HALF_LOG_2PI
from ..core import Arrays, Family, Options, ParamInfo, ValueInfo
from .hurdle_poisson import hurdle_gate_grad, log_gates, sample_gate


class HurdleLogNormal(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        log_g, log_1mg = log_gates(params)
        scale = params["scale"]
        log_x = np.log(np.where(value == 0, 1.0, value))
        z = (log_x - params["loc"]) / scale
        positive = log_1mg - 0.5 * z * z - np.log(scale) - HALF_LOG_2PI - log_x
        return np.where(value == 0, log_g, positive)

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        scale = params["scale"]
        zero = value == 0
        x = np.where(zero, 1.0, value)
        z = (np.log(x) - params["loc"]) / scale
        return {
            "loc": np.where(zero, 0.0, z / scale),
            "scale": np.where(zero, 0.0, (z * z - 1.0) / scale),
            "value": np.where(zero, np.nan, -(1.0 + z / scale) / x),
            **hurdle_gate_grad(params, zero),
        }

    def _cdf(self, params, value, parametrization, options):
        # The atom g at 0, then (1 − g)·Φ((log x − μ)/σ).
        log_g, log_1mg = log_gates(params)
        with np.errstate(divide="ignore"):
            z = (np.log(np.maximum(value, 0.0)) - params["loc"]) / params["scale"]
        base = np.exp(log_1mg) * special.ndtr(z)
        return np.where(value < 0.0, 0.0, np.exp(log_g) + base)

    def _sample(self, params, shape, rng, parametrization):
        drawn = np.exp(params["loc"] + params["scale"] * rng.standard_normal(shape))
        return sample_gate(params, drawn, shape, rng)

    def _mean(self, params, parametrization, options):
        _, log_1mg = log_gates(params)
        return np.exp(log_1mg + params["loc"] + 0.5 * params["scale"] ** 2)

    def _variance(self, params, parametrization, options):
        # (1 − g)·E[Y²] − (1 − g)²·E[Y]² = (1 − g)·e^{2μ + σ²}·(expm1(σ²) + g), in logs:
        # log(expm1(s) + g) = s + log1p(−(1 − g)·e^{−s}) above s = 1.
        log_g, log_1mg = log_gates(params)
        s = params["scale"] ** 2
        big = s > 1.0
        sb, ss = np.where(big, s, 2.0), np.where(big, 1.0, s)
        tail = np.where(
            big,
            sb + np.log1p(-np.exp(log_1mg - sb)),
            np.log(np.expm1(ss) + np.exp(log_g)),
        )
        return np.exp(log_1mg + 2.0 * params["loc"] + s + tail)


_LOC_SCALE = {"loc": ParamInfo(0, "real"), "scale": ParamInfo(0, "positive")}
HURDLE_LOG_NORMAL = HurdleLogNormal(
    name="HurdleLogNormal",
    parametrizations={
        "gate": {"gate": ParamInfo(0, "unit_interval"), **_LOC_SCALE},
        "generic_gate_logits": {"gate_logits": ParamInfo(0, "real"), **_LOC_SCALE},
    },
    value=ValueInfo(0, "nonnegative"),
)
