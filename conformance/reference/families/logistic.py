"""Logistic(loc, scale) and SoftLaplace(loc, scale) (NumPyro), both on the real line with
z = (x − loc)/scale:

    Logistic:     log p = −|z| − 2·log1p(e^−|z|) − log scale
    SoftLaplace:  log p = log(2/π) − log scale − |z| − log1p(e^−2|z|)   (= − logaddexp(z, −z))

written with |z| so that neither overflows in a tail. Their derivatives in z are −tanh(z/2)
and −tanh(z).
"""

from __future__ import annotations

import numpy as np

from ..constants import LOG_2_OVER_PI
from ..core import Arrays, Family, Options, ParamInfo, ValueInfo

PI2_OVER_3 = np.pi**2 / 3.0
HALF_PI = 0.5 * np.pi


def _z(params: Arrays, value: np.ndarray) -> np.ndarray:
    return (value - params["loc"]) / params["scale"]


def _location_scale_grads(
    params: Arrays, value: np.ndarray, dz: np.ndarray
) -> dict[str, np.ndarray]:
    """∂ log p for log p = f(z) − log scale, given f'(z)."""
    scale = params["scale"]
    z = _z(params, value)
    return {"loc": -dz / scale, "scale": (-dz * z - 1.0) / scale, "value": dz / scale}


class Logistic(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        az = np.abs(_z(params, value))
        return -az - 2.0 * np.log1p(np.exp(-az)) - np.log(params["scale"])

    def _grad(self, params, value, parametrization, options):
        return _location_scale_grads(params, value, -np.tanh(_z(params, value) / 2.0))

    def _cdf(self, params, value, parametrization, options):
        # The sigmoid, as e^−|z|/(1 + e^−|z|) below loc: 0.5·(1 + tanh(z/2)) is the same in
        # exact arithmetic but cancels to 0 for F below eps/2 (F(−80) = 1.8e−35, not 0).
        z = _z(params, value)
        far = np.exp(-np.abs(z))
        return np.where(z < 0.0, far / (1.0 + far), 1.0 / (1.0 + far))

    def _icdf(self, params, q, parametrization, options):
        return params["loc"] + params["scale"] * (np.log(q) - np.log1p(-q))

    def _sample(self, params, shape, rng, parametrization):
        return params["loc"] + params["scale"] * rng.logistic(size=shape)

    def _mean(self, params, parametrization, options):
        return params["loc"]

    def _variance(self, params, parametrization, options):
        return PI2_OVER_3 * params["scale"] ** 2

    def _entropy(self, params, parametrization, options):
        return np.log(params["scale"]) + 2.0


class SoftLaplace(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        az = np.abs(_z(params, value))
        return LOG_2_OVER_PI - np.log(params["scale"]) - az - np.log1p(np.exp(-2.0 * az))

    def _grad(self, params, value, parametrization, options):
        return _location_scale_grads(params, value, -np.tanh(_z(params, value)))

    def _cdf(self, params, value, parametrization, options):
        # ∫ 2/(π·cosh z) = (2/π)·arctan(e^z); as arctan of e^−|z| on the far side (no overflow).
        z = _z(params, value)
        near = 2.0 / np.pi * np.arctan(np.exp(-np.abs(z)))
        return np.where(z < 0.0, near, 1.0 - near)

    def _icdf(self, params, q, parametrization, options):
        p = 1.0 - q  # exact for q ≥ ½: the upper tail from its own probability
        # F = (2/π)·arctan(e^z): z = log tan(πq/2), mirrored for the upper half.
        z = np.where(q > 0.5, -np.log(np.tan(0.5 * np.pi * p)), np.log(np.tan(0.5 * np.pi * q)))
        return params["loc"] + params["scale"] * z

    def _sample(self, params, shape, rng, parametrization):
        # The CDF is (2/π)·arctan(e^z): z = log(tan(π·U/2)).
        u = rng.random(size=shape)
        return params["loc"] + params["scale"] * np.log(np.tan(0.5 * np.pi * u))

    def _mean(self, params, parametrization, options):
        return params["loc"]

    def _variance(self, params, parametrization, options):
        # The hyperbolic secant law 1/(π·cosh z): Var z = π²/4.
        return (HALF_PI * params["scale"]) ** 2


_LOC_SCALE = {"loc_scale": {"loc": ParamInfo(0, "real"), "scale": ParamInfo(0, "positive")}}
LOGISTIC = Logistic(name="Logistic", parametrizations=_LOC_SCALE, value=ValueInfo(0, "real"))
SOFT_LAPLACE = SoftLaplace(
    name="SoftLaplace", parametrizations=_LOC_SCALE, value=ValueInfo(0, "real")
)
