"""The regularised incomplete gamma functions P(a, z) and Q(a, z) for the truncated Gamma, in the
forms that keep their digits, with their derivatives in a. No family is defined here.

- the lower series, P(a, z) = z^a e^{−z} S(a, z)/Γ(a + 1), S = Σ_n z^n/((a+1)…(a+n)), with
  ∂log S/∂a summed term by term (:func:`lower_series`), usable below z = a + 250;
- the upper continued fraction, Q(a, z) = z^a e^{−z}/Γ(a) / D, D = z + 1 − a + T,
  T = a₁/(b₁ + a₂/(b₂ + …)) (a_i = i(a − i), b_i = z + 2i + 1 − a), summed backwards with its
  derivative in a (:func:`upper_fraction`), usable from z = a + 1; T is what the Gamma's hazard
  differs from 1 by, g(z)/Q = D/z;
- scipy's ``gammainc``/``gammaincc`` in logs elsewhere (:func:`log_gammainc`,
  :func:`log_gammaincc`).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..constants import LOG_2
from ..core import where_needed
from .gamma import gamma_log_density

#: The lower series is summed this far, and used below z = a + SERIES_REACH (where its terms
#: have fallen below 1e-17 of the sum by then).
SERIES_TERMS, SERIES_REACH = 600, 250.0


def log1mexp(u: np.ndarray) -> np.ndarray:
    """log(1 − e^u) for u ≤ 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        near = u > -LOG_2
        return np.where(
            near, np.log(-np.expm1(np.where(near, u, -1.0))), np.log1p(-np.exp(np.minimum(u, 0.0)))
        )


def log_prefactor(a: np.ndarray, z: np.ndarray) -> np.ndarray:
    """log(z^a e^{−z}/Γ(a)) = log z + log g(z), g the standard Gamma density (Loader's form for
    large a: no cancellation of a·log a terms)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(z) + gamma_log_density(a, 1.0, z)


def series_usable(a: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Where SERIES_TERMS terms converge: the last, Π z/(a + k), below e^−40 of the first
    (z < (a + 300)·e^{−1/15}), and z below a + SERIES_REACH."""
    with np.errstate(all="ignore"):
        converges = SERIES_TERMS * np.log((a + SERIES_TERMS / 2.0) / z) > 40.0
        return np.isfinite(z) & (z < a + SERIES_REACH) & converges


def d_log_gammainc(a: np.ndarray, z: np.ndarray) -> np.ndarray:
    """∂log P(a, z)/∂a: from the series where it converges (log z − ψ(a + 1) + ∂log S/∂a), else
    by Richardson extrapolation of log P from scipy, which has P's digits in the bulk (z near a,
    where the series would need √a terms and neither P nor Q is small)."""
    a, z = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(z, np.float64))
    use = series_usable(a, z) & (z > 0)
    with np.errstate(all="ignore"):
        _, d_log_s = lower_series(a, np.where(use, z, 0.5))
        series = np.log(z) - special.digamma(a + 1.0) + d_log_s
        h0 = 0.05 * np.minimum(a, np.sqrt(a))
        table: list[list[np.ndarray]] = []  # Richardson's rows, each one longer
        for level in range(4):
            h = h0 / 2.0**level
            up = np.log(special.gammainc(a + h, z))
            down = np.log(special.gammainc(a - h, z))
            row = [(up - down) / (2.0 * h)]
            for j, prev in enumerate(table[-1] if table else []):
                factor = 4.0 ** (j + 1)
                row.append((factor * row[j] - prev) / (factor - 1.0))
            table.append(row)
        return np.where(use, series, table[-1][-1])


#: A term this small against its sum (2⁻⁶⁰) is far below half its last digit, and so is every
#: later one once the terms shrink: the sums are final, bit for bit, and the loop stops.
_NEGLIGIBLE = 2.0**-60


def lower_series(a: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(S(a, z), ∂log S/∂a); each term's derivative is −term·Σ_{k≤n} 1/(a + k).

    Summed until every element's sums are final (:func:`_series_done`), at most SERIES_TERMS
    terms: the same numbers as all SERIES_TERMS, without the thousands of iterations that add
    nothing (planning a TruncatedGamma case file spent most of its time here)."""
    a, z = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(z, np.float64))
    term = np.ones_like(z)
    total = np.ones_like(z)
    d_total = np.zeros_like(z)
    harmonic = np.zeros_like(z)
    with np.errstate(all="ignore"):
        for n in range(1, SERIES_TERMS):
            term = term * z / (a + n)
            harmonic = harmonic + 1.0 / (a + n)
            total = total + term
            d_total = d_total - term * harmonic
            if n % 8 == 0 and _series_done(a, z, n, term, harmonic, total, d_total):
                break
    return total, d_total / total


def _series_done(a, z, n, term, harmonic, total, d_total) -> bool:
    """Whether no later term can change either sum of any element: each term then shrinks at
    least by half (2z < a + n + 1, all of one sign: z > 0, a + n > 0), so its share of the
    derivative's sum shrinks too, and the last one is negligible against both sums. An element
    with z = 0 adds zeros; one whose sums are NaN stays NaN."""
    shrinking = (z > 0) & (a + n > 0) & (2.0 * z < a + n + 1.0)
    negligible = (np.abs(term) <= _NEGLIGIBLE * np.abs(total)) & (
        np.abs(term * harmonic) <= _NEGLIGIBLE * np.abs(d_total)
    )
    return bool(np.all((shrinking & negligible) | (z == 0) | (np.isnan(total) & np.isnan(d_total))))


def log_lower(a: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(log P(a, z), S, ∂log S/∂a) from the series. ∂log γ(a, z)/∂a of the lower incomplete
    gamma γ = Γ(a)·P is log z − 1/a + ∂log S/∂a; its log z is left to the caller, which may
    join it with a log of its own (TruncatedGamma's log(rate·x) − log z_b)."""
    s, d_log_s = lower_series(a, z)
    with np.errstate(all="ignore"):
        return log_prefactor(a, z) - np.log(a) + np.log(s), s, d_log_s


def upper_fraction(a: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(D, ∂D/∂a) with D = z + 1 − a + T (see :func:`fraction_tail`)."""
    a, z = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(z, np.float64))
    t, dt = fraction_tail(a, z)
    return z + 1.0 - a + t, dt - 1.0


def fraction_tail(a: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(T, ∂T/∂a), the continued fraction's tail, summed backwards from a depth that covers
    each element's a (60 + 3√a terms, at most 3000). Its own function because D − (z + 1 − a)
    would take T back out of D ≈ z with an absolute error of eps·z (1e-10 at z = 1e6).

    The depth is each element's own, so an element's number is the one it has alone, whatever
    else shares the call: an element joins the backward sum at its depth (T = 0 before)."""
    a, z = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(z, np.float64))
    finite = np.isfinite(a) & (a > 0)
    with np.errstate(invalid="ignore"):
        depths = np.minimum(3000.0, 60.0 + 3.0 * np.sqrt(np.where(finite, a, 0.0))).astype(int)
    deepest = int(depths.max(initial=60))
    shallowest = int(depths.min(initial=60))
    t = np.zeros_like(z)
    dt = np.zeros_like(z)
    with np.errstate(all="ignore"):
        for i in range(deepest, 0, -1):
            num = i * (a - i)
            den = z + 2.0 * i + 1.0 - a + t
            # d/da [num/den] with d num/da = i and d den/da = −1 + dt.
            step_dt = (i * den - num * (dt - 1.0)) / (den * den)
            step_t = num / den
            if i > shallowest:  # some elements have not reached their depth yet
                joined = i <= depths
                step_dt, step_t = np.where(joined, step_dt, dt), np.where(joined, step_t, t)
            dt, t = step_dt, step_t
        return t, dt


def log_gammainc(a: np.ndarray, z: np.ndarray) -> np.ndarray:
    """log P(a, z): from the series where it is usable (it keeps P's digits where P underflows
    or a is large), else scipy's P, or log1p(−Q) where Q is small."""
    a, z = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(z, np.float64))
    with np.errstate(all="ignore"):
        use = series_usable(a, z) & (z > 0)

        def by_scipy() -> np.ndarray:
            q = special.gammaincc(a, z)
            return np.where(q < 0.5, np.log1p(-q), np.log(special.gammainc(a, z)))

        # Most calls are one draw's neighbourhood, all in one regime: one way is taken.
        return where_needed(use, lambda: log_lower(a, np.where(use, z, 0.5))[0], by_scipy)


def log_gammaincc(a: np.ndarray, z: np.ndarray) -> np.ndarray:
    """log Q(a, z): from the continued fraction from z = a + 1 on, else log1p(−P) or scipy's Q."""
    a, z = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(z, np.float64))
    with np.errstate(all="ignore"):
        use = np.isfinite(z) & (z >= a + 1.0)

        def by_fraction() -> np.ndarray:
            zz = np.where(use, z, a + 2.0)
            return log_prefactor(a, zz) - np.log(upper_fraction(a, zz)[0])

        def by_scipy() -> np.ndarray:
            p = special.gammainc(a, z)
            return np.where(p < 0.5, np.log1p(-p), np.log(special.gammaincc(a, z)))

        return where_needed(use, by_fraction, by_scipy)
