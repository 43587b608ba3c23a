"""DoublyTruncatedPowerLaw(alpha α, low a, high b) (NumPyro) on [a, b]: p(x) = x^α / Z with

    Z = (b^{α+1} − a^{α+1})/(α + 1)   (α ≠ −1),    Z = log(b/a)   (α = −1).

With ε = α + 1 and L = log(b/a), Z = a^ε·L·expm1(ε·L)/(ε·L) for a > 0, so

    log Z = ε·log a + log L + log exprel(ε·L),   exprel(u) = expm1(u)/u,

which is continuous through α = −1 (exprel(0) = 1) and never subtracts b^ε from a^ε (they
cancel for α near −1 and for close bounds). For a = 0 (allowed where α > −1) Z = b^ε/ε.
The density takes log Z from the bound that holds the mass (b for ε > 0:
Z = b^ε·L·exprel(−εL)), so a large |α| cancels nothing.

∂log Z/∂ε = log a + L·g(ε·L) with g(u) = d log exprel(u)/du = 1/(1 − e^{−u}) − 1/u, summed as
its series 1/2 + u/12 − u³/720 + … where |u| < 0.1 (the two terms cancel there); so
∂/∂α = log(x/a) − L·g(ε·L), at α = −1 log(x/a) − L/2 exactly. ∂/∂a = a^α/Z =
1/(a·L·exprel(εL)) and ∂/∂b = −b^α/Z = −1/(b·L·exprel(−εL)), without forming α·log b − log Z.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..core import Arrays, Family, Options, ParamInfo, Support, ValueInfo
from .pareto import log_of_ratio, log_ratio

#: g(u)'s Maclaurin coefficients (Bernoulli numbers: u/(1 − e^{−u}) = Σ B_n⁺ u^n/n!) through
#: u⁷; below |u| = 0.1 the first omitted term is under 1e-17 relative.
_G_SERIES = (0.5, 1.0 / 12.0, 0.0, -1.0 / 720.0, 0.0, 1.0 / 30240.0, 0.0, -1.0 / 1209600.0)
SERIES_BELOW = 0.1


def log_exprel(u: np.ndarray) -> np.ndarray:
    """log((e^u − 1)/u), 0 at u = 0, without overflow for large |u|."""
    u = np.asarray(u, np.float64)
    with np.errstate(all="ignore"):
        big = u > 1.0
        small = u < -1.0
        mid = special.exprel(np.where(big | small, 0.0, u))
        return np.where(
            big,
            u + np.log1p(-np.exp(-u)) - np.log(u),
            np.where(small, np.log(-np.expm1(u)) - np.log(-u), np.log(mid)),
        )


def _g(u: np.ndarray) -> np.ndarray:
    """d log exprel(u)/du = 1/(1 − e^{−u}) − 1/u, by its series near 0."""
    u = np.asarray(u, np.float64)
    near = np.abs(u) < SERIES_BELOW
    series = np.zeros_like(u)
    for c in reversed(_G_SERIES):
        series = series * u + c
    with np.errstate(all="ignore"):
        safe = np.where(near, 1.0, u)
        direct = -1.0 / np.expm1(-safe) - 1.0 / safe
    return np.where(near, series, direct)


def _log_bounds_ratio(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """L = log(b/a), as log1p((b − a)/a) (exact for close bounds)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return log_ratio(high, low)


def log_normalizer(params: Arrays) -> np.ndarray:
    alpha, low, high = params["alpha"], params["low"], params["high"]
    eps = alpha + 1.0
    with np.errstate(all="ignore"):
        span = _log_bounds_ratio(low, high)
        from_low = eps * np.log(low) + np.log(span) + log_exprel(eps * span)
        from_zero = eps * np.log(high) - np.log(eps)  # a = 0: Z = b^ε/ε (ε > 0)
    return np.where(low == 0, from_zero, from_low)


class DoublyTruncatedPowerLaw(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        # α·log x − log Z with log Z taken from the bound that holds the mass: from b where
        # ε > 0 (Z = b^ε·L·exprel(−εL)), from a otherwise (Z = a^ε·L·exprel(εL)), so the
        # density is α·log(x/r) − log r − log L − log exprel(∓εL) and α·log x never cancels
        # against a log Z of its own size (1.8e6 each at α = 1e6, leaving 13).
        alpha, low, high = params["alpha"], params["low"], params["high"]
        eps = alpha + 1.0
        with np.errstate(all="ignore"):
            span = _log_bounds_ratio(low, high)
            from_high = eps > 0
            ref = np.where(from_high, high, low)
            power = np.where(alpha == 0, 0.0, alpha * log_of_ratio(value, ref))
            general = (
                power
                - np.log(ref)
                - np.log(span)
                - log_exprel(np.where(from_high, -eps, eps) * span)
            )
            power_high = np.where(alpha == 0, 0.0, alpha * log_of_ratio(value, high))
            at_zero = power_high - np.log(high) + np.log(eps)  # a = 0: Z = b^ε/ε (ε > 0)
        return np.where(low == 0, at_zero, general)

    def support(self, params: Arrays, parametrization: str | None = None) -> Support:
        return Support(self.value.support, lower=params["low"], upper=params["high"])

    def _params_valid(self, params: Arrays, parametrization: str, options: Options) -> np.ndarray:
        ok = super()._params_valid(params, parametrization, options)
        alpha, low, high = params["alpha"], params["low"], params["high"]
        # a = 0 is normalisable only for α > −1 (∫₀ x^α dx diverges otherwise).
        return ok & (low < high) & ((low > 0) | (alpha > -1.0))

    def _grad(self, params, value, parametrization, options):
        alpha, low, high = params["alpha"], params["low"], params["high"]
        eps = alpha + 1.0
        log_z = log_normalizer(params)
        with np.errstate(all="ignore"):
            span = _log_bounds_ratio(low, high)
            # From the bound that holds the mass, as log Z: for ε > 0, log(x/a) − L·g(εL) =
            # log(x/b) + L·g(−εL) (g(u) + g(−u) = 1), whose terms are ~1/ε where the first
            # form's are ~L (88 at a = 1e-38, cancelling to 0.005).
            from_low = log_ratio(value, low) - span * _g(eps * span)
            from_high = log_of_ratio(value, high) + span * _g(-eps * span)
            d_alpha = np.where(
                low == 0,
                1.0 / eps - log_ratio(high, value),  # log x − log b + 1/ε
                np.where(eps > 0, from_high, from_low),
            )
            # a^α/Z = 1/(a·L·exprel(εL)) and b^α/Z = 1/(b·L·exprel(−εL)): α·log b and log Z
            # are each ~α·log b and would cancel (to exp(0) = 1 at α = 3.4e38).
            log_span = np.log(span)
            d_low = np.exp(-np.log(low) - log_span - log_exprel(eps * span))
            d_low = np.where(low == 0, np.exp(special.xlogy(alpha, low) - log_z), d_low)
            d_high = -np.exp(-np.log(high) - log_span - log_exprel(-eps * span))
            # a = 0: b^α/Z = ε/b exactly (α·log b − log Z would cancel terms of 1e6 at α = 1e6).
            d_high = np.where(low == 0, -eps / high, d_high)
            return {"alpha": d_alpha, "low": d_low, "high": d_high, "value": alpha / value}

    def _cdf(self, params, value, parametrization, options):
        # F(x) = Z(low, x)/Z(low, high): the normaliser over [low, x], in its stable form.
        low, high = params["low"], params["high"]
        x = np.clip(value, low, high)
        with np.errstate(all="ignore"):
            up_to_x = log_normalizer({**params, "high": x})
            return np.where(x <= low, 0.0, np.exp(up_to_x - log_normalizer(params)))

    def _sample(self, params, shape, rng, parametrization):
        # Inverse CDF: x = a·(1 + u·expm1(ε·L))^{1/ε}, a·(b/a)^u at ε = 0, b·u^{1/ε} at a = 0.
        alpha, low, high = params["alpha"], params["low"], params["high"]
        eps = alpha + 1.0
        u = rng.uniform(size=shape)
        with np.errstate(all="ignore"):
            span = _log_bounds_ratio(low, high)
            safe = np.where(eps == 0, 1.0, eps)
            general = low * np.exp(np.log1p(u * np.expm1(eps * span)) / safe)
            x = np.where(eps == 0, low * np.exp(u * span), general)
            x = np.where(low == 0, high * u ** (1.0 / safe), x)
        return np.clip(x, low, high)


DOUBLY_TRUNCATED_POWER_LAW = DoublyTruncatedPowerLaw(
    name="DoublyTruncatedPowerLaw",
    parametrizations={
        "alpha_low_high": {
            "alpha": ParamInfo(0, "real", form_changes=(-1.0,)),
            "low": ParamInfo(0, "nonnegative"),
            "high": ParamInfo(0, "positive"),
        }
    },
    value=ValueInfo(0, "nonnegative"),
)
