"""Gamma(concentration, rate) on [0, ∞): the density at 0 is +inf, ``rate`` or 0 as the
concentration is below, at or above 1.

For large concentrations the textbook ``(a − 1)·log x + a·log rate − rate·x − lgamma(a)`` is a
small difference of terms of size a·log a (1e6 at a = 1e5): it loses ten digits. Above
a = 10 the density is written as Loader's Poisson kernel instead (Stirling-series remainder
``stirlerr`` plus the deviance ``bd0``, both without cancellation), as R's ``dgamma`` does.

Declared convention ``support_lower``: torch's support is ``[0, ∞)`` (the default, ``closed``);
NumPyro's is ``(0, ∞)`` and it returns -inf at 0 (``open``).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..constants import HALF_LOG_2PI
from ..core import Arrays, Family, Options, ParamInfo, ValueInfo, vanishing_ratio, where_needed
from .binomial import log_minus_digamma

#: Options shared by the half-line families whose support is [0, ∞) in torch and (0, ∞) in NumPyro.
SUPPORT_LOWER = {"support_lower": ("closed", "open")}
#: Below this the Stirling series is not used (its direct formula loses < 1e-14 absolute there).
STIRLING_FROM = 8.0
#: Bernoulli-number coefficients B_2k / (2k(2k − 1)) of the Stirling series, k = 1..8.
_STIRLING = (
    1.0 / 12.0,
    -1.0 / 360.0,
    1.0 / 1260.0,
    -1.0 / 1680.0,
    1.0 / 1188.0,
    -691.0 / 360360.0,
    1.0 / 156.0,
    -3617.0 / 122400.0,
)


def exclude_zero(logp: np.ndarray, value: np.ndarray, options: Options) -> np.ndarray:
    """-inf at 0 where the declared support is open there (NumPyro's ``positive``)."""
    if options.get("support_lower", "closed") == "open":
        return np.where(value == 0.0, -np.inf, logp)
    return logp


def stirlerr(n: np.ndarray) -> np.ndarray:
    """lgamma(n) − (n − ½)·log n + n − ½·log 2π, the remainder of Stirling's formula (n > 0).

    Above :data:`STIRLING_FROM` its asymptotic series (eight terms: below 1e-17); below, the
    direct formula, whose terms are then small enough that it loses under 1e-14 absolute.
    """
    n = np.asarray(n, dtype=np.float64)
    big = n > STIRLING_FROM

    def series() -> np.ndarray:
        nb = np.where(big, n, STIRLING_FROM + 1.0)
        inv2 = 1.0 / (nb * nb)
        total = np.zeros_like(nb)
        for coef in reversed(_STIRLING):
            total = coef + total * inv2
        return total / nb

    def direct() -> np.ndarray:
        ns = np.where(big, 1.0, n)
        return special.gammaln(ns) - (ns - 0.5) * np.log(ns) + ns - HALF_LOG_2PI

    return where_needed(big, series, direct)


def bd0(x: np.ndarray, m: np.ndarray) -> np.ndarray:
    """x·log(x/m) + m − x ≥ 0 (Loader's deviance term), without cancellation when x ≈ m.

    Where |x − m| < 0.1·(x + m) it is summed as (x − m)·v + 2x·Σ v^(2j+1)/(2j+1) with
    v = (x − m)/(x + m) (|v| < 0.1, so 14 terms reach 1e-28); elsewhere the terms do not cancel.
    """
    x, m = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(m, dtype=np.float64))
    near = np.abs(x - m) < 0.1 * (x + m)

    def summed() -> np.ndarray:
        xs, ms = np.where(near, x, 1.0), np.where(near, m, 1.0)
        v = (xs - ms) / (xs + ms)
        total = (xs - ms) * v
        term = 2.0 * xs * v
        v2 = v * v
        for j in range(1, 15):
            term = term * v2
            total = total + term / (2 * j + 1)
        return total

    def far() -> np.ndarray:
        ratio = x / m
        normal = (ratio > 1e-300) & (ratio < 1e300)
        log_ratio = np.where(normal, np.log(np.where(normal, ratio, 1.0)), np.log(x) - np.log(m))
        return np.where(x == 0.0, m, x * log_ratio + m - x)

    return where_needed(near, summed, far)


def log_poisson_kernel(k: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """log(λ^k·e^{−λ}/Γ(k + 1)) for real k ≥ 0, λ ≥ 0 (Loader's ``dpois_raw``)."""
    k, lam = np.broadcast_arrays(np.asarray(k, dtype=np.float64), np.asarray(lam, dtype=np.float64))
    big = k > STIRLING_FROM

    def loader() -> np.ndarray:
        ks = np.where(big, k, STIRLING_FROM + 1.0)
        return -stirlerr(ks) - bd0(ks, lam) - HALF_LOG_2PI - 0.5 * np.log(ks)

    return where_needed(big, loader, lambda: special.xlogy(k, lam) - lam - special.gammaln(k + 1.0))


def gamma_log_density(a: np.ndarray, rate: np.ndarray | float, x: np.ndarray) -> np.ndarray:
    """log of rate^a·x^(a−1)·e^{−rate·x}/Γ(a) = log rate + log_poisson_kernel(a − 1, rate·x)
    (for a ≥ 1; below, the textbook form, which does not cancel there), with the right
    limits at x = 0."""
    lam = rate * x
    return where_needed(
        a > 1.0 + STIRLING_FROM,
        lambda: log_poisson_kernel(np.maximum(a - 1.0, 0.0), lam) + np.log(rate),
        lambda: special.xlogy(a - 1.0, lam) - lam - special.gammaln(a) + np.log(rate),
    )


#: Below this, P(a, z) is its series' first term z^a/Γ(a + 1) to within a relative z.
TINY_Z = 1e-300


def gamma_cdf(a: np.ndarray, rate: np.ndarray, x: np.ndarray) -> np.ndarray:
    """P(a, rate·x), the Gamma(a, rate) CDF at x, also where rate·x underflows: a subnormal x
    (draws of concentrations near 0 land there) times a small rate is 0 in float64, where the
    CDF is not (Gamma(1e-10, rate=1e-3) has 1 − 7.5e-8 of its mass below 1e-323). There the
    series' first term is taken in logs."""
    x = np.maximum(x, 0.0)
    z = rate * x
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        log_z = np.log(rate) + np.log(x)
        first = np.exp(np.minimum(a * log_z - special.gammaln(a + 1.0), 0.0))
    return np.where((z < TINY_Z) & (x > 0), first, special.gammainc(a, z))


def gamma_entropy(a: np.ndarray) -> np.ndarray:
    """The entropy of Gamma(a, rate 1), a + log Γ(a) + (1 − a)·ψ(a), as ½·log(2πa) + stirlerr(a)
    + (a − 1)·(log a − ψ(a)): the textbook terms are each ~a·log a (1.4e7 at a = 1e6) and cancel
    to ½·log(2πea); written so, nothing of size a·log a is formed."""
    a = np.asarray(a, dtype=np.float64)
    return HALF_LOG_2PI + 0.5 * np.log(a) + stirlerr(a) + (a - 1.0) * log_minus_digamma(a)


def log_expm1(x: np.ndarray) -> np.ndarray:
    """log(e^x − 1) for x ≥ 0 (−inf at 0), without overflow: x + log1p(−e^{−x}) above 1."""
    x = np.asarray(x, dtype=np.float64)
    big = x > 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        small = np.log(np.expm1(np.where(big, 1.0, x)))
        return np.where(big, x + np.log1p(-np.exp(-np.where(big, x, 1.0))), small)


#: Terms of :func:`lgamma_second_difference`'s series (where |2h| ≤ c/2 each is at most half
#: the last, so 60 reach 1e-18 of the first).
SECOND_DIFFERENCE_TERMS = 60


def lgamma_second_difference(c: np.ndarray | float, h: np.ndarray | float) -> np.ndarray:
    """log Γ(c + 2h) − 2·log Γ(c + h) + log Γ(c), for c, c + h, c + 2h > 0.

    The log of a ratio of moments (E[X²]/E[X]² of Weibull, Kumaraswamy and Dagum draws): for
    small h it is O(h²) while each log Γ keeps only eps·log Γ of it. Where |2h| ≤ c/2 it is
    summed as its series Σ_{n≥2} (−1)^n·ζ(n, c)·(2^n − 2)·h^n/n (the Taylor series of log Γ at c,
    ψ^{(n−1)}(c) = (−1)^n·(n − 1)!·ζ(n, c), whose linear terms cancel exactly); elsewhere
    directly, which then cancels little.
    """
    c, h = np.broadcast_arrays(np.asarray(c, np.float64), np.asarray(h, np.float64))
    near = np.abs(2.0 * h) <= 0.5 * c

    def series() -> np.ndarray:
        cs, hs = np.where(near, c, 1.0), np.where(near, h, 0.0)
        terms = []
        power = hs * hs
        for n in range(2, SECOND_DIFFERENCE_TERMS + 2):
            terms.append((-1.0) ** n * special.zeta(n, cs) * (2.0**n - 2.0) * power / n)
            power = power * hs
        total = np.zeros_like(cs)
        for term in reversed(terms):  # the smallest first
            total = total + term
        return total

    def direct() -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return special.gammaln(c + 2.0 * h) - 2.0 * special.gammaln(c + h) + special.gammaln(c)

    return where_needed(near, series, direct)


class Gamma(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        logp = gamma_log_density(params["concentration"], params["rate"], value)
        return exclude_zero(logp, value, options)

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        a, rate = params["concentration"], params["rate"]
        return {
            "concentration": np.log(rate) + np.log(value) - special.digamma(a),
            "rate": a / rate - value,
            "value": vanishing_ratio(a - 1.0, value) - rate,
        }

    def _cdf(self, params, value, parametrization, options):
        return gamma_cdf(params["concentration"], params["rate"], value)

    def _icdf(self, params, q, parametrization, options):
        p = 1.0 - q  # exact for q ≥ ½: the upper tail from its own probability
        a = params["concentration"]
        y = np.where(q > 0.5, special.gammainccinv(a, p), special.gammaincinv(a, q))
        return y / params["rate"]

    def _sample(self, params, shape, rng, parametrization):
        return rng.gamma(params["concentration"], 1.0 / params["rate"], size=shape)

    def _mean(self, params, parametrization, options):
        return params["concentration"] / params["rate"]

    def _variance(self, params, parametrization, options):
        return params["concentration"] / params["rate"] / params["rate"]

    def _mode(self, params, parametrization, options):
        """(a − 1)/rate for a ≥ 1; 0 below, where the density is unbounded at 0 and decreasing."""
        return np.maximum(params["concentration"] - 1.0, 0.0) / params["rate"]

    def _entropy(self, params, parametrization, options):
        return gamma_entropy(params["concentration"]) - np.log(params["rate"])


GAMMA = Gamma(
    name="Gamma",
    parametrizations={
        "concentration_rate": {
            "concentration": ParamInfo(0, "positive", form_changes=(1.0,)),
            "rate": ParamInfo(0, "positive"),
        },
    },
    value=ValueInfo(0, "nonnegative"),
    options=dict(SUPPORT_LOWER),
)
