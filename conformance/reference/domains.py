"""Named domains (for parameters) and supports (for values), with their membership tests.

A family declares each parameter's domain and its value's support by name; the oracle uses the
membership tests to tell "outside the support" (log_prob is -inf, and a validating framework
must raise) from "inside the support with zero density". Parameterised names carry their bounds:
``interval:0,1`` (closed), ``half_open:0,6.283`` ([lo, hi)), ``greater_than:0``,
``greater_equal:0``, ``integer_interval:0,10``.

Membership is elementwise over the event's batch: for an event rank r the test reduces (all)
over the last r dims.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

Check = Callable[[np.ndarray], np.ndarray]

_TOL = 1e-6  # simplex sums, symmetry and unit-norm rows: relative to float32 rounding of inputs


def _all_last(mask: np.ndarray, rank: int) -> np.ndarray:
    return np.asarray(mask.all(axis=tuple(range(-rank, 0)))) if rank else mask


def _finite(x: np.ndarray) -> np.ndarray:
    return np.isfinite(x)


def _integer(x: np.ndarray) -> np.ndarray:
    return np.isfinite(x) & (x == np.round(x))


def _simplex(x: np.ndarray) -> np.ndarray:
    ok = np.all((x >= 0) & np.isfinite(x), axis=-1)
    return ok & (np.abs(x.sum(-1) - 1.0) <= _TOL * x.shape[-1])


def _symmetric(x: np.ndarray) -> np.ndarray:
    sym = np.abs(x - np.swapaxes(x, -1, -2)) <= _TOL * (
        np.abs(x) + np.abs(np.swapaxes(x, -1, -2)) + 1e-300
    )
    return np.all(sym & np.isfinite(x), axis=(-1, -2))


def _ordered(x: np.ndarray) -> np.ndarray:
    """Finite and strictly increasing along the last axis (OrderedLogistic's cutpoints)."""
    return np.all(np.isfinite(x), axis=-1) & np.all(x[..., 1:] > x[..., :-1], axis=-1)


#: How many float64 rounding errors (of the largest diagonal entry, per dimension) a Cholesky
#: pivot must exceed for the matrix to count as positive definite. LAPACK's factorisation
#: accepts a matrix that is singular within rounding: a property-mode draw of Wishart at
#: df = 1.01 (d = 2) had an exact determinant of −1.4e-18 and a last pivot of 1.1e-16 against
#: a diagonal of 0.53, which torch and NumPyro both reject and the oracle once scored 31.63.
_PIVOT_ROUNDINGS = 4.0


def _positive_definite(x: np.ndarray) -> np.ndarray:
    """Symmetric, and its Cholesky factor's pivots (the Schur complements) clear of rounding:
    a matrix singular within float64's rounding is no member, whatever LAPACK says."""
    ok = _symmetric(x)
    out = np.zeros(x.shape[:-2], dtype=bool)
    eps = np.finfo(np.float64).eps
    for idx in np.ndindex(*x.shape[:-2]):
        if ok[idx]:
            try:
                factor = np.linalg.cholesky(x[idx])
            except np.linalg.LinAlgError:
                continue
            pivots = np.diagonal(factor) ** 2
            scale = np.max(np.abs(np.diagonal(x[idx])))
            out[idx] = bool(np.all(pivots > _PIVOT_ROUNDINGS * len(pivots) * eps * scale))
    return out


def _lower_cholesky(x: np.ndarray) -> np.ndarray:
    upper = np.triu(x, k=1)
    diag = np.diagonal(x, axis1=-2, axis2=-1)
    return (
        np.all(upper == 0, axis=(-1, -2))
        & np.all(diag > 0, axis=-1)
        & np.all(np.isfinite(x), axis=(-1, -2))
    )


def _corr_cholesky(x: np.ndarray) -> np.ndarray:
    rows = np.sqrt((x * x).sum(-1))
    unit = np.all(np.abs(rows - 1.0) <= _TOL, axis=-1)
    return _lower_cholesky(x) & unit


def _corr_matrix(x: np.ndarray) -> np.ndarray:
    """A correlation matrix: symmetric positive definite with a unit diagonal (LKJ's value)."""
    diag = np.diagonal(x, axis1=-2, axis2=-1)
    unit = np.all(np.abs(diag - 1.0) <= _TOL, axis=-1)
    return _positive_definite(x) & unit


def _zero_sum(x: np.ndarray) -> np.ndarray:
    """A vector whose components add up to 0 (ZeroSumNormal's value), relative to its size."""
    scale = np.maximum(np.max(np.abs(x), axis=-1), 1.0)
    ok = np.abs(x.sum(-1)) <= _TOL * x.shape[-1] * scale
    return ok & np.all(np.isfinite(x), axis=-1)


def _adjacency_matrix(x: np.ndarray) -> np.ndarray:
    """A weighted graph's adjacency matrix (CAR's): symmetric, nonnegative, every row (site)
    with a neighbour."""
    rows = np.all(x >= 0, axis=(-1, -2)) & np.all(x.sum(-1) > 0, axis=-1)
    return _symmetric(x) & rows


def _circulant_covariance(x: np.ndarray) -> np.ndarray:
    """The first row c of a symmetric positive-definite circulant matrix (CirculantNormal's):
    c_k = c_(n−k), and every eigenvalue Re FFT(c)_k positive."""
    n = x.shape[-1]
    finite = np.all(np.isfinite(x), axis=-1)
    safe = np.where(finite[..., None], x, 0.0)
    mirrored = safe[..., (-np.arange(n)) % n]
    scale = np.max(np.abs(safe), axis=-1) + 1e-300
    symmetric = np.all(np.abs(safe - mirrored) <= _TOL * scale[..., None], axis=-1)
    return finite & symmetric & np.all(np.fft.fft(safe, axis=-1).real > 0, axis=-1)


def _sphere(x: np.ndarray) -> np.ndarray:
    """A unit vector (ProjectedNormal's value), to float32 rounding of its entries."""
    norm = np.sqrt((x * x).sum(-1))
    return np.all(np.isfinite(x), axis=-1) & (np.abs(norm - 1.0) <= _TOL)


def _positive_semidefinite(x: np.ndarray) -> np.ndarray:
    ok = _symmetric(x)
    eig = np.linalg.eigvalsh(np.where(ok[..., None, None], x, np.eye(x.shape[-1])))
    return ok & np.all(eig >= -_TOL * np.max(np.abs(eig), axis=-1, keepdims=True), axis=-1)


@dataclass(frozen=True)
class Interval:
    """A scalar domain or support as an interval: its ends (±inf for none), which ends belong
    to it, and whether it holds integers only. Membership and the generated edge cases
    (``conformance.plan.derived.edges``) both read it, so a name's bounds are stated once."""

    lo: float
    hi: float
    lo_closed: bool
    hi_closed: bool
    integer: bool = False

    def contains(self, x: np.ndarray) -> np.ndarray:
        above = (x >= self.lo) if self.lo_closed else (x > self.lo)
        below = (x <= self.hi) if self.hi_closed else (x < self.hi)
        inside = above & below  # NaN and ±inf (never a finite end's neighbour) fail both
        return inside & _integer(x) if self.integer else inside


_INTERVALS: dict[str, Interval] = {
    "positive": Interval(0.0, np.inf, False, False),
    "nonnegative": Interval(0.0, np.inf, True, False),
    "unit_interval": Interval(0.0, 1.0, True, True),
    "open_unit_interval": Interval(0.0, 1.0, False, False),
    "boolean": Interval(0.0, 1.0, True, True, integer=True),
    "nonnegative_integer": Interval(0.0, np.inf, True, False, integer=True),
    "positive_integer": Interval(1.0, np.inf, True, False, integer=True),
}

#: Parameterised interval names: kind → (lower end closed, upper end closed, integers only).
_INTERVAL_KINDS = {
    "interval": (True, True, False),
    "open_interval": (False, False, False),
    "half_open": (True, False, False),
    "integer_interval": (True, True, True),
}


def interval(name: str) -> Interval | None:
    """The interval a named scalar domain or support is, or None (``real``, ``circular``,
    vectors, matrices, unknown names)."""
    if name in _INTERVALS:
        return _INTERVALS[name]
    kind, _, args = name.partition(":")
    try:
        bounds = [float(a) for a in args.split(",")] if args else []
    except ValueError:
        return None
    if kind in _INTERVAL_KINDS and len(bounds) == 2:
        lo_closed, hi_closed, integer = _INTERVAL_KINDS[kind]
        return Interval(bounds[0], bounds[1], lo_closed, hi_closed, integer)
    if kind in ("greater_than", "greater_equal") and len(bounds) == 1:
        return Interval(bounds[0], np.inf, kind == "greater_equal", False)
    return None


# name → (test on the raw array, event rank the test reduces over beyond elementwise)
_FIXED: dict[str, tuple[Check, int]] = {
    "real": (_finite, 0),
    "nonzero": (lambda x: np.isfinite(x) & (x != 0), 0),
    "real_vector": (_finite, 1),
    "integer": (_integer, 0),
    "simplex": (_simplex, -1),
    "ordered_vector": (_ordered, -1),
    "positive_definite": (_positive_definite, -2),
    "positive_semidefinite": (_positive_semidefinite, -2),
    "lower_cholesky": (_lower_cholesky, -2),
    "corr_cholesky": (_corr_cholesky, -2),
    "corr_matrix": (_corr_matrix, -2),
    "zero_sum": (_zero_sum, -1),
    "adjacency_matrix": (_adjacency_matrix, -2),
    "circulant_covariance": (_circulant_covariance, -1),
    "sphere": (_sphere, -1),
    "circular": (lambda x: (x >= -np.pi) & (x < np.pi), 0),
}


def is_known(name: str) -> bool:
    return name in _FIXED or interval(name) is not None


def contains(name: str, x: np.ndarray, event_rank: int) -> np.ndarray:
    """Elementwise membership of ``x`` (an array of events of rank ``event_rank``) in ``name``."""
    x = np.asarray(x, dtype=np.float64)
    if name in _FIXED:
        test, reduced = _FIXED[name]
        mask = test(x)
        # Tests of matrix/vector domains already reduced their own dims (reduced < 0).
        remaining = event_rank + reduced if reduced < 0 else event_rank
        return _all_last(np.asarray(mask), max(remaining, 0))
    iv = interval(name)
    if iv is None:
        raise KeyError(name)
    return _all_last(iv.contains(x), event_rank)
