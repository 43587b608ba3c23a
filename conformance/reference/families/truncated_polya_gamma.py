"""TruncatedPolyaGamma (NumPyro): no parameters, values on [0, 2.5]; log_prob is the first
seven terms of the alternating series of the Pólya-Gamma PG(1, 0) density,

    log p(x) = log S₇(x) − ½·log(2π x³),   S₇(x) = Σ_{n=0}^{6} (−1)^n (2n+1) e^{−(2n+1)²/(8x)}.

That function — NumPyro's definition, not PG(1, 0)'s density — is what the oracle computes.
What it approximates, measured against the full series (tests/oracle/test_oracle_univariate.py):
PG(1, 0)'s density to 1e-10 relative up to x = 1, 6e-6 at 1.5, 0.5% at 2, 28% at 2.4 and 68% at
x = 2.5, the seven terms being too few where they cancel; it integrates to 0.9999985 over
[0, 2.5] (PG(1, 0) puts 5.6e-6 beyond 2.5, which NumPyro's sampler clips to 2.5), so it is
neither PG(1, 0) restricted and renormalised nor a normalised density. At x = 0 it is 0
(log p = −inf, the limit), inside the closed support.

Near x = 2.5 the seven terms cancel to 4.6e-4 of the first (3.5 digits of float64). Where
x > 0.7 the oracle takes S₇ = S∞ − Σ_{n≥7} instead: S∞(x) = √(2πx³)·g(x) from the other theta
series of PG(1, 0)'s density, g(x) = Σ (−1)^n 4π(n+½) e^{−(n+½)²π²·2x}, whose first term
dominates there, and the tail Σ_{n≥7} (−1)^n (2n+1) e^{−(2n+1)²/(8x)}, below 2e-4 of S₇; nothing
cancels.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..constants import HALF_LOG_2PI
from ..core import Arrays, Family, Options, ValueInfo

TRUNCATION = 2.5
TERMS = 7
#: Above this x the small-x terms cancel; S₇ is formed from the large-x series instead.
LARGE_X_FROM = 0.7
#: Terms of the large-x series and of the small-x tail (both far below 1e-17 relative after).
LARGE_TERMS, TAIL_TERMS = 8, 12


def _small_x_terms(x: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(−1)^n (2n+1) e^{−((2n+1)² − 1)/(8x)} and its x-derivative, over a trailing axis of n:
    the series' terms over the first one's e^{−1/(8x)} (which underflows below x ≈ 2e-4)."""
    m = 2.0 * n + 1.0
    term = (-1.0) ** n * m * np.exp(-(m * m - 1.0) / (8.0 * x[..., None]))
    return term, term * (m * m - 1.0) / (8.0 * x[..., None] ** 2)


def _log_s7_and_ratio(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """log S₇(x) and S₇'(x)/S₇(x), cancellation-free (see the module docstring)."""
    x = np.asarray(x, np.float64)
    with np.errstate(all="ignore"):
        # S₇ = e^{−1/(8x)}·R, R = Σ (−1)^n (2n+1) e^{−((2n+1)² − 1)/(8x)}.
        r, dr = (a.sum(-1) for a in _small_x_terms(x, np.arange(TERMS)))
        small_log = -1.0 / (8.0 * x) + np.log(r)
        small_ratio = 1.0 / (8.0 * x * x) + dr / r
        large = x > LARGE_X_FROM
        xl = np.where(large, x, 1.0)
        k = np.arange(LARGE_TERMS) + 0.5
        rate = k * k * np.pi**2 * 2.0
        terms = (-1.0) ** np.arange(LARGE_TERMS) * 4.0 * np.pi * k * np.exp(-rate * xl[..., None])
        g, dg = terms.sum(-1), (-rate * terms).sum(-1)
        root = np.sqrt(2.0 * np.pi)
        s_inf = root * xl**1.5 * g
        ds_inf = root * (1.5 * np.sqrt(xl) * g + xl**1.5 * dg)
        scaled, d_scaled = (a.sum(-1) for a in _small_x_terms(xl, TERMS + np.arange(TAIL_TERMS)))
        first = np.exp(-1.0 / (8.0 * xl))  # the factor the scaled terms leave out
        tail = scaled * first
        d_tail = (d_scaled + scaled / (8.0 * xl * xl)) * first
        s7, ds7 = s_inf - tail, ds_inf - d_tail
    return np.where(large, np.log(s7), small_log), np.where(large, ds7 / s7, small_ratio)


def pg_cdf(x: np.ndarray) -> np.ndarray:
    """P(X ≤ x) for X ~ PG(1, 0) (x > 0), from the integral of either theta series of its
    density: Σ_n (−1)^n·2·erfc((2n + 1)/√(8x)) for x ≤ 0.7, and 1 − Σ_n (−1)^n·4/(π(2n + 1))·
    e^{−π²(2n + 1)²x/2} above (each 12 terms: beyond 1e-17 in its range)."""
    x = np.asarray(x, np.float64)
    n = np.arange(12)
    m = 2.0 * n + 1.0
    sign = (-1.0) ** n
    with np.errstate(all="ignore"):
        xs = np.maximum(x, 1e-300)[..., None]
        small = (sign * 2.0 * special.erfc(m / np.sqrt(8.0 * xs))).sum(-1)
        large = 1.0 - (sign * 4.0 / (np.pi * m) * np.exp(-(np.pi**2) * m * m * xs / 2.0)).sum(-1)
    return np.where(x <= 0.0, 0.0, np.where(x <= LARGE_X_FROM, small, large))


class TruncatedPolyaGamma(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        log_s7, _ = _log_s7_and_ratio(value)
        with np.errstate(all="ignore"):
            out = log_s7 - HALF_LOG_2PI - 1.5 * np.log(value)
        return np.where(value == 0.0, -np.inf, out)

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        _, ratio = _log_s7_and_ratio(value)
        with np.errstate(all="ignore"):
            return {"value": ratio - 1.5 / value}

    def _cdf(self, params, value, parametrization, options):
        # The draws' law: PG(1, 0) clipped at 2.5 (the clipped mass an atom there), not the
        # seven-term log_prob (which is not normalised).
        return np.where(value >= TRUNCATION, 1.0, pg_cdf(value))

    def _sample(self, params, shape, rng, parametrization):
        # PG(1, 0) = Σ_k E_k / (2π²(k − ½)²), E_k standard exponential (Gamma(1)); 200 terms and
        # the rest's mean (Σ_{k>200} 1/(2π²(k − ½)²) ≈ 2.5e-4) added; clipped at 2.5 as NumPyro's.
        k = np.arange(1, 201) - 0.5
        draws = rng.exponential(size=(*shape, k.size)) / (2.0 * np.pi**2 * k * k)
        rest = 1.0 / (2.0 * np.pi**2 * (k[-1] + 0.5))
        return np.minimum(draws.sum(-1) + rest, TRUNCATION)


TRUNCATED_POLYA_GAMMA = TruncatedPolyaGamma(
    name="TruncatedPolyaGamma",
    parametrizations={"none": {}},
    value=ValueInfo(0, f"interval:0,{TRUNCATION}"),
)
