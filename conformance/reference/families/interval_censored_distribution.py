"""IntervalCensoredDistribution(Normal(loc, scale), left_censored, right_censored) — NumPyro
only. The value is a pair (lower, upper) per observation (event shape (2,)); the flags say what
the pair means:

    neither flag    the true value lies in (lower, upper]    log(F(upper) − F(lower))
                    lower == upper: an exact observation     log f(lower)
    left only       it lies at or below upper                log F(upper)   (lower unused)
    right only      it lies above lower                      log S(lower)   (upper unused)
    both            it lies outside [lower, upper]           log(F(lower) + S(upper))

An interval with lower > upper holds no probability (−inf; its complement all of it, 0). Masses
are in z = (x − loc)/scale: the truncated normal's cancellation-free ``log_gauss_mass`` for an
interval, ``log_ndtr`` for the tails. log p jumps from a mass to a density where the two bounds
meet, so no ∂/∂value is given at an exact observation (NaN). Only the Normal base: the interval
logic is the wrapper's whatever the base, and a base whose support ends (LogNormal) would need
the bounds' support to depend on the flags, which a declared support cannot say.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..core import Arrays, Family, Options, ParamInfo, ValueInfo
from .censoring import BASE_PARAMS, density_grad, log_density, log_phi, mills, standardized
from .truncated_normal import log_gauss_mass


def _rows(params: Arrays) -> tuple[np.ndarray, ...]:
    left, right = params["left_censored"] == 1, params["right_censored"] == 1
    return left & ~right, right & ~left, ~left & ~right, left & right


class IntervalCensoredDistribution(Family):
    def _event_shape(self, params: Arrays, parametrization: str | None) -> tuple[int, ...]:
        return (2,)

    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        lower, upper = value[..., 0], value[..., 1]
        z1, _ = standardized(params, lower, "normal")
        z2, _ = standardized(params, upper, "normal")
        left, _, interval, double = _rows(params)
        ordered = lower < upper
        width = np.where(ordered, (upper - lower) / params["scale"], 1.0)
        mass = log_gauss_mass(np.where(ordered, z1, 0.0), np.where(ordered, z2, 1.0), width)
        inside = np.where(lower == upper, log_density(params, lower, "normal"), mass)
        inside = np.where(lower > upper, -np.inf, inside)
        outside = np.logaddexp(special.log_ndtr(z1), special.log_ndtr(-z2))
        outside = np.where(lower > upper, 0.0, outside)
        out = np.where(left, special.log_ndtr(z2), special.log_ndtr(-z1))
        out = np.where(interval, inside, out)
        return np.where(double, outside, out)

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        scale = params["scale"]
        lower, upper = value[..., 0], value[..., 1]
        z1, _ = standardized(params, lower, "normal")
        z2, _ = standardized(params, upper, "normal")
        left, right, interval, _ = _rows(params)
        point = interval & (lower == upper)
        ordered = lower < upper
        width = np.where(ordered, (upper - lower) / scale, 1.0)
        log_d = log_gauss_mass(np.where(ordered, z1, 0.0), np.where(ordered, z2, 1.0), width)
        # ∂L/∂z1, ∂L/∂z2 per kind of row.
        phi1, phi2 = np.exp(log_phi(z1) - log_d), np.exp(log_phi(z2) - log_d)
        log_out = np.logaddexp(special.log_ndtr(z1), special.log_ndtr(-z2))
        out1, out2 = np.exp(log_phi(z1) - log_out), -np.exp(log_phi(z2) - log_out)
        d1 = np.select([left, right, interval], [0.0, -mills(-z1), -phi1], out1)
        d2 = np.select([left, right, interval], [mills(z2), 0.0, phi2], out2)
        d_loc = -(d1 + d2) / scale
        d_scale = -(d1 * z1 + d2 * z2) / scale
        # Over an interval φ(z1) − φ(z2) and z1·φ(z1) − z2·φ(z2) cancel where it is narrow:
        # written with e^Δ − 1, Δ = (z1² − z2²)/2 = −width·(z1 + z2)/2, they do not.
        delta = np.expm1(-width * (z1 + z2) / 2.0)
        narrow_loc = -phi1 * delta / scale
        narrow_scale = phi1 * (-width - z2 * delta) / scale
        d_loc = np.where(interval & ordered, narrow_loc, d_loc)
        d_scale = np.where(interval & ordered, narrow_scale, d_scale)
        dens = density_grad(params, lower, "normal")
        d_loc = np.where(point, dens["loc"], d_loc)
        d_scale = np.where(point, dens["scale"], d_scale)
        d_value = np.stack([d1 / scale, d2 / scale], axis=-1)
        d_value = np.where(point[..., None], np.nan, d_value)
        return {"loc": d_loc, "scale": d_scale, "value": d_value}

    def _sample(self, params, shape, rng, parametrization):
        # An observation's reported pair: a base draw x and bounds a random distance away,
        # ordered, so that x lies inside (neither or one flag) or outside (both) the pair.
        scale = params["scale"]
        x = params["loc"] + scale * rng.standard_normal(shape)
        below, above = scale * rng.exponential(size=shape), scale * rng.exponential(size=shape)
        double = (params["left_censored"] == 1) & (params["right_censored"] == 1)
        lower = np.where(double, x + below, x - below)
        upper = np.where(double, x + below + above, x + above)
        return np.stack([lower, upper], axis=-1)


_FLAG = ParamInfo(0, "boolean", integer=True)
INTERVAL_CENSORED_DISTRIBUTION = IntervalCensoredDistribution(
    name="IntervalCensoredDistribution",
    parametrizations={"normal": {**BASE_PARAMS, "left_censored": _FLAG, "right_censored": _FLAG}},
    value=ValueInfo(1, "real_vector"),
    no_law=(
        "its value is an interval (a pair of bounds), a likelihood's data rather than a draw: the oracle holds draws to their shapes only"
    ),
    no_draws=(
        "its value is an interval (a pair of bounds), a likelihood's data: NumPyro's sample "
        "draws the base distribution's latent values, which are not its values, so no "
        "sampling items"
    ),
)
