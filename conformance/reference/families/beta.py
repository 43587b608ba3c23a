"""Beta by ``concentration1``/``concentration0`` (both frameworks) or by ``mean``/``concentration``
(NumPyro's ``BetaProportion``: ``concentration1 = mean·concentration``,
``concentration0 = (1 − mean)·concentration``); support the closed interval [0, 1].

At the ends the density is +inf, finite or 0 as the concentration at that end is below, at or
above 1; ``xlogy``/``xlog1py`` give exactly those limits (``0·log 0 = 0``). Two numerical
hazards are handled here and reused by StudentT and FisherSnedecor:

* ``scipy.special.betaln`` loses up to nine digits when its arguments differ by orders of
  magnitude (betaln(3e5, 0.5) is off by 6e-11 relative); :func:`log_beta` uses Stirling's
  series with ``log1p`` there instead.
* For both concentrations above 2 the textbook ``(a−1)·log x + (b−1)·log1p(−x) − log B(a, b)``
  subtracts terms of size a·log 2 (7e4 at a = 1e5); the density is written as Loader's binomial
  kernel (:func:`log_binomial_kernel`) as R's ``dbeta`` does.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..constants import HALF_LOG_2PI, LOG_2PI
from ..core import Arrays, Family, Options, ParamInfo, ValueInfo, vanishing_ratio
from .binomial import digamma_diff, log_minus_digamma
from .gamma import bd0, stirlerr

#: From here on an argument of log B is "large": Stirling's series serves it.
LARGE = 10.0


def log_beta(a: np.ndarray | float, b: np.ndarray | float) -> np.ndarray:
    """log B(a, b), accurate to a few ulps for all a, b > 0.

    With a ≥ b and c = a + b, from lgamma(x) = (x − ½)·log x − x + ½·log 2π + stirlerr(x):
    both large: ½·log 2π − ½·log b − (a − ½)·log1p(b/a) − b·log1p(a/b) + stirlerr(a) +
    stirlerr(b) − stirlerr(c), a sum of same-signed terms; only a large: lgamma(b) −
    (a − ½)·log1p(b/a) − b·log c + b + stirlerr(a) − stirlerr(c); both small: ``betaln``.
    """
    a, b = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
    hi, lo = np.maximum(a, b), np.minimum(a, b)
    both = lo >= LARGE
    one = (hi >= LARGE) & ~both
    h = np.where(both | one, hi, LARGE)
    lb = np.where(both, lo, LARGE)
    ls = np.where(one, lo, 1.0)
    c_both, c_one = h + lb, h + ls
    big_big = (
        HALF_LOG_2PI
        - 0.5 * np.log(lb)
        - (h - 0.5) * np.log1p(lb / h)
        - lb * np.log1p(h / lb)
        + stirlerr(h)
        + stirlerr(lb)
        - stirlerr(c_both)
    )
    big_small = (
        special.gammaln(ls)
        - (h - 0.5) * np.log1p(ls / h)
        - ls * np.log(c_one)
        + ls
        + stirlerr(h)
        - stirlerr(c_one)
    )
    return np.where(both, big_big, np.where(one, big_small, special.betaln(a, b)))


#: B_2k/(2k), k = 1..7: ψ(x) ~ log x − 1/(2x) − Σ_k c_k·x^(−2k).
_PSI_SERIES = (
    1.0 / 12.0,
    -1.0 / 120.0,
    1.0 / 252.0,
    -1.0 / 240.0,
    1.0 / 132.0,
    -691.0 / 32760.0,
    1.0 / 12.0,
)


def log1p_minus(u: np.ndarray) -> np.ndarray:
    """log1p(u) − u, by its Taylor series where the difference cancels (|u| < 0.1)."""
    u = np.asarray(u, dtype=np.float64)
    small = np.abs(u) < 0.1
    us = np.where(small, u, 0.0)
    series = np.zeros_like(us)
    for k in range(24, 1, -1):
        series = (-1.0) ** (k + 1) / k + us * series
    with np.errstate(invalid="ignore"):
        return np.where(small, us * us * series, np.log1p(u) - u)


def log_minus_offset(u: np.ndarray, t: np.ndarray) -> np.ndarray:
    """log u − t for t = u − 1 given accurately (a difference formed exactly by the caller): the
    series of log1p(t) − t near u = 1, log u itself elsewhere (log1p of a t rounded near −1
    would keep none of u's digits)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.abs(t) < 0.1, log1p_minus(t), np.log(u) - t)


def digamma_gap(x: np.ndarray | float, d: np.ndarray | float) -> np.ndarray:
    """ψ(x + d) − ψ(x) − d/x, accurate to a few ulps of itself.

    Gradients of StudentT and FisherSnedecor in large degrees of freedom are O(1/x²) sums of
    O(1/x) terms; this is the piece that would otherwise carry an absolute error of
    eps·log x. For x ≥ 10 it is log1p(u) − u + d/(2x(x + d)) − Σ_k c_k·x^(−2k)·expm1(−2k·
    log1p(u)) with u = d/x (the asymptotic series of ψ, differenced term by term); below, the
    direct difference, which does not cancel there.
    """
    x, d = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(d, dtype=np.float64))
    big = x >= LARGE
    xb = np.where(big, x, LARGE)
    u = d / xb
    l1u = np.log1p(u)
    series = np.zeros_like(xb)
    inv2 = 1.0 / (xb * xb)
    power = np.ones_like(xb)
    for k, coef in enumerate(_PSI_SERIES, start=1):
        power = power * inv2
        series = series + coef * power * np.expm1(-2.0 * k * l1u)
    asymptotic = log1p_minus(u) + d / (2.0 * xb * (xb + d)) - series
    xs = np.where(big, 1.0, x)
    direct = special.digamma(xs + d) - special.digamma(xs) - d / xs
    return np.where(big, asymptotic, direct)


def f_gap(t: np.ndarray) -> np.ndarray:
    """t/(1 + t) − log1p(t) for t ≥ 0 (≈ −t²/2 for small t), without cancellation."""
    t = np.asarray(t, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        q = 1.0 / (1.0 + 1.0 / t)
        small = t < 0.1
        ts = np.where(small, t, 0.0)
        series = -log1p_minus(ts) - ts * ts / (1.0 + ts)
        big = np.where(np.isfinite(t), np.log1p(np.where(small, 1.0, t)), np.inf)
        return np.where(small, series, q - big)


def log_binomial_kernel(k: np.ndarray, j: np.ndarray, p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """log(Γ(k+j+1)/(Γ(k+1)·Γ(j+1))·p^k·q^j) for real k, j ≥ 0 (Loader's ``dbinom_raw``).

    Successes k and failures j are given separately (n − k would cancel when one is tiny
    against the other), and so are p and q = 1 − p, so that neither loses digits.
    """
    k, j, p, q = np.broadcast_arrays(*(np.asarray(t, dtype=np.float64) for t in (k, j, p, q)))
    n = k + j
    inner = (k > 0.0) & (j > 0.0)
    ks, js = np.where(inner, k, 1.0), np.where(inner, j, 1.0)
    ns = ks + js
    lc = stirlerr(ns) - stirlerr(ks) - stirlerr(js) - bd0(ks, ns * p) - bd0(js, ns * q)
    middle = lc - 0.5 * (LOG_2PI + np.log(ks) + np.log(js / ns))
    only_failures = np.where(p < 0.1, -bd0(n, n * q) - n * p, special.xlogy(n, q))
    only_successes = np.where(q < 0.1, -bd0(n, n * p) - n * q, special.xlogy(n, p))
    edge = np.where(n == 0.0, 0.0, np.where(k == 0.0, only_failures, only_successes))
    return np.where(inner, middle, edge)


def beta_concentrations(params: Arrays, parametrization: str) -> tuple[np.ndarray, np.ndarray]:
    """(concentration1, concentration0), computed as NumPyro's BetaProportion does."""
    if parametrization == "concentrations":
        return params["concentration1"], params["concentration0"]
    mean, conc = params["mean"], params["concentration"]
    return mean * conc, (1.0 - mean) * conc


def beta_log_density(a: np.ndarray, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    """log Beta(a, b) density at x ∈ [0, 1] (R's ``dbeta`` split at a, b > 2)."""
    textbook = special.xlogy(a - 1.0, x) + special.xlog1py(b - 1.0, -x) - log_beta(a, b)
    large = (a > 2.0) & (b > 2.0)
    al, bl = np.where(large, a, 3.0), np.where(large, b, 3.0)
    kernel = np.log(al + bl - 1.0) + log_binomial_kernel(al - 1.0, bl - 1.0, x, 1.0 - x)
    return np.where(large, kernel, textbook)


def beta_entropy(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """log B(a, b) − (a − 1)·ψ(a) − (b − 1)·ψ(b) + (a + b − 2)·ψ(a + b), with each log Γ by
    Stirling (its remainder ``stirlerr``) and each ψ as log − (log − ψ): the terms of size
    a·log a cancel analytically (each 1.4e7 at a = 1e6, for an entropy near −6), leaving

        ½·log 2π + ½·log(a·b/c³) + s(a) + s(b) − s(c) + (a − 1)·d(a) + (b − 1)·d(b) − (c − 2)·d(c)

    with c = a + b, s = stirlerr and d(x) = log x − ψ(x) ≈ 1/(2x): terms of order 1 at most."""
    c = a + b
    return (
        HALF_LOG_2PI
        + 0.5 * (np.log(a) + np.log(b)) - 1.5 * np.log(c)
        + stirlerr(a) + stirlerr(b) - stirlerr(c)
        + (a - 1.0) * log_minus_digamma(a)
        + (b - 1.0) * log_minus_digamma(b)
        - (c - 2.0) * log_minus_digamma(c)
    )  # fmt: skip


#: Concentrations below this are not judged in expectation (``moments_unjudged``).
RARE_BELOW = 0.1


class Beta(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        a, b = beta_concentrations(params, parametrization)
        return beta_log_density(a, b, value)

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        a, b = beta_concentrations(params, parametrization)
        # ψ(a + b) − ψ(a) as one difference: at b = 1e6 the partial in b is log1p(−x) + ψ(a + b)
        # − ψ(b) ~ 1e-7, and each ψ of 1e6 alone is off by eps·14.
        ga = np.log(value) + digamma_diff(a, b)
        gb = np.log1p(-value) + digamma_diff(b, a)
        gx = vanishing_ratio(a - 1.0, value) - vanishing_ratio(b - 1.0, 1.0 - value)
        if parametrization == "concentrations":
            return {"concentration1": ga, "concentration0": gb, "value": gx}
        mean, conc = params["mean"], params["concentration"]
        return {
            "mean": conc * (ga - gb),
            "concentration": mean * ga + (1.0 - mean) * gb,
            "value": gx,
        }

    def _cdf(self, params, value, parametrization, options):
        a, b = beta_concentrations(params, parametrization)
        return special.betainc(a, b, np.clip(value, 0.0, 1.0))

    def _icdf(self, params, q, parametrization, options):
        p = 1.0 - q  # exact for q ≥ ½: the upper tail from its own probability
        a, b = beta_concentrations(params, parametrization)
        upper = 1.0 - special.betaincinv(b, a, p)  # x near 1: 1 − (the mirrored quantile)
        return np.where(q > 0.5, upper, special.betaincinv(a, b, q))

    def moments_unjudged(self, params: Arrays, parametrization: str | None = None) -> str:
        a, b = beta_concentrations(params, parametrization or self.default_parametrization)
        if np.any(np.minimum(a, b) < RARE_BELOW):
            return (
                f"a concentration below {RARE_BELOW}: the pathwise derivative's mean rests on rare "
                "draws (∂x/∂a ≈ x·log x/a, nearly all its mass in a few draws), so the mean's t "
                "statistic is far from normal at 2¹³ draws"
            )
        return ""

    def _draw_moments(self, params, weights, parametrization, options):
        """E[x] = a/(a + b), E[x²] = a(a + 1)/((a + b)(a + b + 1)) (w is 1: a scalar draw)."""
        a, b = beta_concentrations(params, parametrization)
        total = a + b
        return weights * a / total, weights**2 * a * (a + 1.0) / (total * (total + 1.0))

    def _sample(self, params, shape, rng, parametrization):
        a, b = beta_concentrations(params, parametrization)
        return rng.beta(a, b, size=shape)

    def _mean(self, params, parametrization, options):
        if parametrization == "mean_concentration":
            return params["mean"]
        a, b = beta_concentrations(params, parametrization)
        return a / (a + b)

    def _variance(self, params, parametrization, options):
        if parametrization == "mean_concentration":
            mean = params["mean"]
            return mean * (1.0 - mean) / (params["concentration"] + 1.0)
        a, b = beta_concentrations(params, parametrization)
        total = a + b
        return (a / total) * (b / total) / (total + 1.0)

    def _mode(self, params, parametrization, options):
        """(a − 1)/(a + b − 2) for a, b > 1; the end the density rises to (0 for a ≤ 1 ≤ b, 1 for
        b ≤ 1 ≤ a) otherwise; NaN where it is not unique (a = b = 1, or a, b < 1: two modes)."""
        a, b = beta_concentrations(params, parametrization)
        interior = (a - 1.0) / ((a - 1.0) + (b - 1.0))
        flat = (a == 1.0) & (b == 1.0)
        at_zero = (a <= 1.0) & (b >= 1.0) & ~flat
        at_one = (b <= 1.0) & (a >= 1.0) & ~flat
        ends = np.where(at_zero, 0.0, np.where(at_one, 1.0, np.nan))
        return np.where((a > 1.0) & (b > 1.0), interior, ends)

    def _entropy(self, params, parametrization, options):
        return beta_entropy(*beta_concentrations(params, parametrization))


BETA = Beta(
    name="Beta",
    parametrizations={
        "concentrations": {
            "concentration1": ParamInfo(0, "positive", form_changes=(1.0,)),
            "concentration0": ParamInfo(0, "positive", form_changes=(1.0,)),
        },
        "mean_concentration": {
            "mean": ParamInfo(0, "open_unit_interval"),
            "concentration": ParamInfo(0, "positive"),
        },
    },
    value=ValueInfo(0, "unit_interval"),
)
