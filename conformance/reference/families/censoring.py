"""What NumPyro's censored wrappers share: a continuous base (Normal or LogNormal, both
Gaussian in t = x or t = log x) and log probabilities of its tails and intervals.

With z = (t(x) − loc)/scale: log F(x) = log Φ(z), log S(x) = log Φ(−z) (``log_ndtr``: no 1 − F
that loses the far tail), log(F(u) − F(l)) from the truncated normal's cancellation-free
``log_gauss_mass``, and the density log φ(z) − log scale − log t'(x). No family lives here.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..constants import HALF_LOG_2PI
from ..core import Arrays, Family, Options, ParamInfo, Support, ValueInfo

#: The bases, by parametrization: each has loc and scale (LogNormal's are those of log x).
BASES = ("normal", "log_normal")
BASE_PARAMS = {"loc": ParamInfo(0, "real"), "scale": ParamInfo(0, "positive")}


def standardized(params: Arrays, x: np.ndarray, base: str) -> tuple[np.ndarray, np.ndarray]:
    """(z, ∂z/∂x) for the base's value x."""
    scale = params["scale"]
    if base == "normal":
        return (x - params["loc"]) / scale, 1.0 / scale + 0.0 * x
    with np.errstate(divide="ignore", invalid="ignore"):
        return (np.log(x) - params["loc"]) / scale, 1.0 / (scale * x)


def log_density(params: Arrays, x: np.ndarray, base: str) -> np.ndarray:
    z, _ = standardized(params, x, base)
    out = -0.5 * z * z - np.log(params["scale"]) - HALF_LOG_2PI
    return out - np.log(x) if base == "log_normal" else out


def density_grad(params: Arrays, x: np.ndarray, base: str) -> dict[str, np.ndarray]:
    """∂ log f/∂(loc, scale, x)."""
    scale = params["scale"]
    z, dz = standardized(params, x, base)
    d_x = -z * dz - (1.0 / x if base == "log_normal" else 0.0)
    return {"loc": z / scale, "scale": (z * z - 1.0) / scale, "value": d_x}


def log_phi(z: np.ndarray) -> np.ndarray:
    return -0.5 * z * z - HALF_LOG_2PI


def mills(z: np.ndarray) -> np.ndarray:
    """φ(z)/Φ(z), = ∂ log Φ(z)/∂z, without 0/0 in the far left tail."""
    return np.exp(log_phi(z) - special.log_ndtr(z))


def z_grads(params: Arrays, z: np.ndarray, dz: np.ndarray, d_z: np.ndarray) -> dict:
    """The chain rule from ∂L/∂z to loc, scale and the value (z = (t(x) − loc)/scale)."""
    scale = params["scale"]
    return {"loc": -d_z / scale, "scale": -d_z * z / scale, "value": d_z * dz}


def support(params: Arrays, base: str, name: str) -> Support:
    """The base's support: the real line, or (0, ∞) for LogNormal."""
    return Support(name, lower=0.0, lower_open=True) if base == "log_normal" else Support(name)


def sample_base(params: Arrays, shape, rng, base: str) -> np.ndarray:
    t = params["loc"] + params["scale"] * rng.standard_normal(shape)
    return np.exp(t) if base == "log_normal" else t


class OneSidedCensored(Family):
    """log f(x) where ``censored`` is 0; log F(x) (left) or log S(x) (right) where it is 1."""

    right: bool = False

    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        z, _ = standardized(params, value, parametrization)
        tail = special.log_ndtr(-z if self.right else z)
        with np.errstate(divide="ignore", invalid="ignore"):
            observed = log_density(params, value, parametrization)
        return np.where(params["censored"] == 1, tail, observed)

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        z, dz = standardized(params, value, parametrization)
        d_z = -mills(-z) if self.right else mills(z)
        tail = z_grads(params, z, dz, d_z)
        observed = density_grad(params, value, parametrization)
        censored = params["censored"] == 1
        return {k: np.where(censored, tail[k], observed[k]) for k in tail}

    def support(self, params: Arrays, parametrization: str | None = None) -> Support:
        return support(params, parametrization or self.default_parametrization, "real")

    def _cdf(self, params, value, parametrization, options):
        # NumPyro draws the base's values: the censoring indicator is data, not part of the law.
        x = np.maximum(value, 0.0) if parametrization == "log_normal" else value
        with np.errstate(divide="ignore"):
            z, _ = standardized(params, x, parametrization)
        return special.ndtr(z)

    def _sample(self, params, shape, rng, parametrization):
        # The reported value of an observation: a base draw (a censored one is then the bound
        # the true value lies below or above; any point of the support serves as a value).
        return sample_base(params, shape, rng, parametrization)


def one_sided_parametrizations() -> dict[str, dict[str, ParamInfo]]:
    """normal | log_normal, each loc, scale and the 0/1 ``censored`` indicator."""
    indicator = ParamInfo(0, "boolean", integer=True)
    return {base: {**BASE_PARAMS, "censored": indicator} for base in BASES}


REAL = ValueInfo(0, "real")
