"""Small functions that keep a KL divergence's digits when p and q are close.

A KL divergence is a sum of terms of the size of the parameters that cancels to something of
the size of their squared difference: written as the textbook sum it loses every digit the
difference does not have (KL 1e-12 between two Normals keeps four). Each closed form in this
package is written instead as a sum of terms that are each ≥ 0 and small when p ≈ q:

- ``expm1mx(u) = e^u − 1 − u`` — a log-ratio's share (``r − 1 − log r`` at r = e^u);
- ``log1pmx(y) = log(1 + y) − y`` — its mirror image;
- ``lgamma_bregman(x, d) = lnΓ(x + d) − lnΓ(x) − d·ψ(x)`` — what Gamma, Beta, Dirichlet and
  Wishart pairs leave of their normalisers;
- ``log_ratio(x, y) = log(x/y)`` and ``softplus_diff(a, b)`` — log-ratios that keep the digits
  of x − y, not of log x − log y.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from ..core import where_needed

#: Taylor terms of e^u − 1 − u kept below |u| = 1/2 (the 20th is 0.5^20/20! < 1e-24).
_EXPM1MX_TERMS = 20
#: 1/k! for k = 0 … _EXPM1MX_TERMS, each exact before the division (k! ≤ 20! is a float64).
_INVERSE_FACTORIALS = tuple(1.0 / float(math.factorial(k)) for k in range(_EXPM1MX_TERMS + 1))
#: Terms of log(1 + y) − y's series in v = y/(2 + y) (|v| ≤ 1/3: 9^-22 < 1e-20).
_LOG1PMX_TERMS = 22
#: Terms of the Taylor series of lnΓ(x + d) about x, for |d| ≤ x/4 and x ≥ 2 (4^-30 < 1e-18).
_LGAMMA_TERMS = 30


def expm1mx(u: np.ndarray) -> np.ndarray:
    """e^u − 1 − u ≥ 0, to full relative precision near u = 0; +inf at u = ±inf."""
    u = np.asarray(u, dtype=np.float64)
    small = np.abs(u) < 0.5

    def series() -> np.ndarray:
        us = np.where(small, u, 0.0)
        total = np.zeros_like(us)
        for k in range(_EXPM1MX_TERMS, 1, -1):  # Horner: u²·(1/2! + u·(1/3! + …))
            total = total * us + _INVERSE_FACTORIALS[k]
        return total * us * us

    def direct() -> np.ndarray:
        with np.errstate(over="ignore", invalid="ignore"):
            return np.where(np.isinf(u), np.inf, np.expm1(u) - u)

    return where_needed(small, series, direct)


def log1pmx(y: np.ndarray) -> np.ndarray:
    """log(1 + y) − y ≤ 0 for y > −1, to full relative precision near y = 0."""
    y = np.asarray(y, dtype=np.float64)
    small = np.abs(y) < 0.5

    def series() -> np.ndarray:
        ys = np.where(small, y, 0.0)
        v = ys / (2.0 + ys)
        v2 = v * v
        total = np.zeros_like(v)
        for j in range(_LOG1PMX_TERMS, 0, -1):
            total = (total + 1.0 / (2 * j + 1)) * v2
        return -ys * ys / (2.0 + ys) + 2.0 * v * total

    def direct() -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log1p(y) - y

    return where_needed(small, series, direct)


def log_ratio(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """log(x/y) for x, y ≥ 0: log1p((x − y)/y) where x is within half of y (x − y is exact
    there, so the digits of the difference survive), log x − log y elsewhere."""
    x, y = np.broadcast_arrays(np.asarray(x, np.float64), np.asarray(y, np.float64))
    near = np.abs(x - y) < 0.5 * y
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(near, np.log1p((x - y) / np.where(near, y, 1.0)), np.log(x) - np.log(y))


def softplus(x: np.ndarray) -> np.ndarray:
    """log(1 + e^x)."""
    return np.logaddexp(0.0, x)


def softplus_diff(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """softplus(a) − softplus(b) = log1p(σ(b)·expm1(a − b)), which keeps the digits of a − b;
    the difference of the two softplus values where |a − b| > 1 (nothing cancels there)."""
    a, b = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(b, np.float64))
    near = np.abs(a - b) <= 1.0
    with np.errstate(over="ignore", invalid="ignore"):
        close = np.log1p(special.expit(b) * np.expm1(np.where(near, a - b, 0.0)))
        return np.where(near, close, softplus(a) - softplus(b))


#: The powers k of :func:`_lgamma_taylor`'s terms, smallest term (largest k) first.
_TAYLOR_K = np.arange(_LGAMMA_TERMS, 1, -1, dtype=np.float64)


def _lgamma_taylor(x: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Σ_{k≥2} ψ^(k−1)(x)·d^k/k! for x ≥ 2, |d| ≤ x/4 (ψ^(n)(x)·x^n/n! is bounded there).

    With ψ^(k−1)(x) = (−1)^k (k−1)! ζ(k, x) each term is (−d)^k ζ(k, x)/k: every term in
    one vectorised Hurwitz zeta call, summed from the smallest."""
    x, d = np.asarray(x, np.float64), np.asarray(d, np.float64)
    k = _TAYLOR_K
    terms = (-d[..., None]) ** k * special.zeta(k, x[..., None]) / k
    total = np.zeros(x.shape)
    for j in range(k.size):  # smallest first, as the sum's rounding wants
        total = total + terms[..., j]
    return total


def lgamma_bregman(x: np.ndarray, d: np.ndarray) -> np.ndarray:
    """lnΓ(x + d) − lnΓ(x) − d·ψ(x) ≥ 0 for x > 0, x + d > 0: the Bregman divergence of lnΓ,
    ≈ ψ'(x)·d²/2 for small d, computed without the cancellation of its three terms.

    Below x = 2 it is shifted up with lnΓ(x) = lnΓ(x + 1) − log x:
    G(x, d) = G(x + 1, d) − log1pmx(d/x). From x ≥ 2, the Taylor series in d where
    |d| ≤ x/4, the three terms elsewhere (they cancel by a bounded factor there).
    """
    x, d = np.broadcast_arrays(np.asarray(x, np.float64), np.asarray(d, np.float64))
    low = x < 2.0
    shift = np.where(low, 2.0, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        correction = np.where(low, log1pmx(d / x) + log1pmx(d / (x + 1.0)), 0.0)
    xs = x + shift
    series = np.abs(d) <= 0.25 * xs

    def taylor() -> np.ndarray:
        return _lgamma_taylor(np.where(series, xs, 2.0), np.where(series, d, 0.0))

    def direct() -> np.ndarray:
        return special.gammaln(xs + d) - special.gammaln(xs) - d * special.digamma(xs)

    return where_needed(series, taylor, direct) - correction
