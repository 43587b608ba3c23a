"""The inverse of a univariate CDF, x = F⁻¹(q) = min{x : F(x) ≥ q}, where no closed form is
written down: a bisection over the float64 numbers themselves.

Every float64 has an integer key whose order is the numbers' order (the bit pattern, negated
for negative numbers), so 64 halvings of the keys between the support's ends narrow x to one
float64: the answer is as exact as the oracle's F is, whatever the scale of x, with no bracket
to guess and no tolerance to choose. Closed forms (``Family._icdf`` overrides) are tested
against it (``tests/oracle/test_oracle_icdf.py``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

#: Halvings that narrow any two keys of float64 numbers to neighbours.
HALVINGS = 64
_MAGNITUDE = np.int64(0x7FFFFFFFFFFFFFFF)


def _key(x: np.ndarray) -> np.ndarray:
    bits = np.asarray(x, dtype=np.float64).view(np.int64)
    return np.where(bits < 0, -(bits & _MAGNITUDE), bits)


def _number(key: np.ndarray) -> np.ndarray:
    bits = np.where(key < 0, (-key) | ~_MAGNITUDE, key).astype(np.int64)
    return bits.view(np.float64)


def invert_cdf(
    cdf: Callable[[np.ndarray], np.ndarray], q: np.ndarray, lower: np.ndarray, upper: np.ndarray
) -> np.ndarray:
    """The least float64 x in [lower, upper] with cdf(x) ≥ q, elementwise (arrays of one
    shape; infinite ends are taken as the largest finite numbers). ``cdf`` must be
    nondecreasing; q outside (0, 1) gives the ends, NaN stays NaN."""
    q = np.asarray(q, dtype=np.float64)
    big = np.finfo(np.float64).max
    lo_x = np.clip(np.asarray(lower, dtype=np.float64), -big, big)
    hi_x = np.clip(np.asarray(upper, dtype=np.float64), -big, big)
    lo, hi = _key(lo_x), _key(hi_x)
    # The answer is in (lo, hi]: lo itself only where F(lo) ≥ q already.
    with np.errstate(all="ignore"):
        at_lo = cdf(lo_x) >= q
    for _ in range(HALVINGS):
        mid = (lo >> 1) + (hi >> 1) + (lo & hi & 1)  # no int64 overflow
        with np.errstate(all="ignore"):
            above = cdf(_number(mid)) >= q
        hi, lo = np.where(above, mid, hi), np.where(above, lo, mid)
    found = np.where(at_lo, lo_x, _number(hi))
    return np.where(np.isnan(q), np.nan, found)
