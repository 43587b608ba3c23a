"""GeneralizedPareto(loc, scale, concentration ξ): with z = (x − loc)/scale,

    log p = −log scale − (1/ξ + 1)·log1p(ξ·z)        (ξ ≠ 0)
    log p = −log scale − z                            (ξ = 0, the limit)

on [loc, ∞) for ξ ≥ 0 and on [loc, loc − scale/ξ] for ξ < 0 (ξ = −1 is the uniform). The
oracle writes (1/ξ + 1)·log1p(ξz) as log1p(ξz)/ξ + log1p(ξz): both terms are accurate for any
ξ (log1p), so the ξ → 0 limit is reached continuously, and ∂/∂ξ's cancelling part
log1p(t)/ξ² − z/(ξ(1 + t)), t = ξz, is summed as a series in t where |t| is small
(z²·(1/2 − 2t/3 + 3t²/4 − …)): the derivative at ξ = 0 is z²/2 − z, not 0.
"""

from __future__ import annotations

import numpy as np

from ..core import Arrays, Family, Options, ParamInfo, Support, ValueInfo

#: Below this |ξ·z| the cancelling part of ∂/∂ξ is summed as its series (12 terms: the next
#: is below 1e-16 relative).
SERIES_BELOW = 1e-2
SERIES_TERMS = 12


def _standardized(params: Arrays, value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return (value - params["loc"]) / params["scale"], params["concentration"]


def _log1p_over(xi: np.ndarray, t: np.ndarray, z: np.ndarray) -> np.ndarray:
    """log1p(ξz)/ξ, and its limit z at ξ = 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(xi == 0.0, z, np.log1p(t) / np.where(xi == 0.0, 1.0, xi))


def _cancelling(xi: np.ndarray, z: np.ndarray) -> np.ndarray:
    """log1p(t)/ξ² − z/(ξ(1 + t)) with t = ξz, accurate as ξ → 0 (where it tends to z²/2)."""
    t = xi * z
    series = np.zeros_like(t)
    for n in range(SERIES_TERMS + 1, 1, -1):  # Horner: Σ_{n≥2} (−1)^n (n−1)/n · t^(n−2)
        series = series * t + (-1.0) ** n * (n - 1) / n
    with np.errstate(divide="ignore", invalid="ignore"):
        safe = np.where(xi == 0.0, 1.0, xi)
        direct = np.log1p(t) / (safe * safe) - z / (safe * (1.0 + t))
    return np.where(np.abs(t) < SERIES_BELOW, z * z * series, direct)


class GeneralizedPareto(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        z, xi = _standardized(params, value)
        t = xi * z
        log1p_t = np.log1p(t)
        # (1/ξ + 1)·log1p(t); at the upper end of a bounded support (t = −1) the product
        # itself (+inf below ξ = −1, −inf above), 0 for the uniform (ξ = −1) everywhere.
        with np.errstate(divide="ignore", invalid="ignore"):
            at_end = (1.0 / np.where(xi == 0.0, 1.0, xi) + 1.0) * log1p_t
        power = np.where(np.isinf(log1p_t), at_end, _log1p_over(xi, t, z) + log1p_t)
        power = np.where(xi == -1.0, 0.0, power)
        return -np.log(params["scale"]) - power

    def support(self, params: Arrays, parametrization: str | None = None) -> Support:
        loc, scale, xi = params["loc"], params["scale"], params["concentration"]
        with np.errstate(divide="ignore", invalid="ignore"):
            upper = np.where(np.asarray(xi) < 0, loc - scale / np.where(xi < 0, xi, -1.0), np.inf)
        return Support(self.value.support, lower=loc, upper=upper)

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        scale = params["scale"]
        z, xi = _standardized(params, value)
        w = 1.0 + xi * z
        dz = -(1.0 + xi) / w  # ∂ log p / ∂z
        return {
            "loc": -dz / scale,
            "scale": -1.0 / scale - dz * z / scale,
            "concentration": _cancelling(xi, z) - z / w,
            "value": dz / scale,
        }

    def _cdf(self, params, value, parametrization, options):
        z, xi = _standardized(params, value)
        with np.errstate(divide="ignore", invalid="ignore"):
            end = np.where(xi < 0.0, -1.0 / np.where(xi < 0.0, xi, -1.0), np.inf)
            zc = np.clip(z, 0.0, end)
            return np.where(z >= end, 1.0, -np.expm1(-_log1p_over(xi, xi * zc, zc)))

    def _icdf(self, params, q, parametrization, options):
        loc, scale, xi = params["loc"], params["scale"], params["concentration"]
        log_p = np.log1p(-q)  # log(1 − q)
        safe = np.where(xi == 0.0, 1.0, xi)
        spread = np.where(xi == 0.0, -log_p, np.expm1(-safe * log_p) / safe)
        return loc + scale * spread

    def _sample(self, params, shape, rng, parametrization):
        loc, scale, xi = params["loc"], params["scale"], params["concentration"]
        log_u = np.log1p(-rng.random(size=shape))  # log(1 − U), U uniform on [0, 1)
        safe = np.where(xi == 0.0, 1.0, xi)
        spread = np.where(xi == 0.0, -log_u, np.expm1(-safe * log_u) / safe)
        return loc + scale * spread

    def _mean(self, params, parametrization, options):
        """loc + scale/(1 − ξ) for ξ < 1; +inf for ξ ≥ 1 (the tail ~z^(−1/ξ−1))."""
        loc, scale, xi = params["loc"], params["scale"], params["concentration"]
        return np.where(xi < 1.0, loc + scale / (1.0 - xi), np.inf)

    def _variance(self, params, parametrization, options):
        """scale²/((1 − ξ)²(1 − 2ξ)) for ξ < ½; +inf for ξ ≥ ½."""
        scale, xi = params["scale"], params["concentration"]
        spread = scale / (1.0 - xi)
        return np.where(xi < 0.5, spread * spread / (1.0 - 2.0 * xi), np.inf)

    def _mode(self, params, parametrization, options):
        """loc for ξ > −1 (the density decreases from there); NaN at ξ = −1 (the uniform); the
        upper end loc − scale/ξ for ξ < −1, where the density rises to +inf."""
        loc, scale, xi = params["loc"], params["scale"], params["concentration"]
        with np.errstate(divide="ignore", invalid="ignore"):
            upper = loc - scale / xi
        return np.where(xi > -1.0, loc, np.where(xi < -1.0, upper, np.nan))

    def _entropy(self, params, parametrization, options):
        # log scale + ξ + 1 for every ξ: log1p(ξz)/ξ is Exponential(1) under the law.
        return np.log(params["scale"]) + params["concentration"] + 1.0


GENERALIZED_PARETO = GeneralizedPareto(
    name="GeneralizedPareto",
    parametrizations={
        "loc_scale_concentration": {
            "loc": ParamInfo(0, "real"),
            "scale": ParamInfo(0, "positive"),
            "concentration": ParamInfo(0, "real", form_changes=(0.0, -1.0)),
        }
    },
    value=ValueInfo(0, "real"),
)
