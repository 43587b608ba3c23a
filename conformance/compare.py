"""Dtype-aware comparison of a framework's numbers with the oracle's.

The tolerance of element ``b`` is ``ulps(dtype) · eps(dtype) · (1 + |expected_b| + sensitivity_b)``.
``sensitivity_b`` (from the oracle's gradient) bounds how far log_prob moves when every input
moves by one relative unit — the condition number that TFP's "excess wrong bits" test uses —
so a large log_prob, or one that cancels, gets proportionally more room. The ``1 +`` is an
absolute floor: an absolute error δ in a log density is a relative error δ in the density, so a
few eps absolute is right even where log_prob is near 0. ``ulps`` is how many wrong bits beyond
that are tolerated: 2**5 in float32, 2**8 in float64 (XLA's float64 transcendental functions are
accurate to about 1e-14, not 1 ulp; that is not a conformance failure).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from conformance import timing
from conformance.dtypes import eps
from conformance.kinds import Kind

ULPS = {"float32": 32.0, "float64": 256.0}


def by_convention(expected: np.ndarray, actual: np.ndarray, declared: dict) -> np.ndarray:
    """Where ``actual`` is judged by a declared convention: elements whose oracle value is NaN
    (``declared['undefined']``) or ±inf (``declared['infinite']``) and whose ``actual`` is
    what the declaration says (``nan``, ``inf``, ``-inf`` or ``finite``) but not the oracle's
    own answer. Nowhere else: an element where the oracle has a number is never excused.
    Reproducer scripts embed this function's source: one rule for the item and its script."""
    expected = np.asarray(expected, dtype=np.float64)
    actual = np.asarray(actual, dtype=np.float64)
    agrees = (actual == expected) | (np.isnan(actual) & np.isnan(expected))
    returned = {
        "nan": np.isnan(actual),
        "inf": actual == np.inf,
        "-inf": actual == -np.inf,
        "finite": np.isfinite(actual),
    }
    found = np.zeros(np.shape(expected), dtype=bool)
    for where, condition in (("undefined", np.isnan(expected)), ("infinite", np.isinf(expected))):
        says = declared.get(where)
        if says in returned:
            found |= condition & returned[says] & ~agrees
    return found


@timing.timed("comparison")
def tolerance(
    dtype: str, expected: np.ndarray, sensitivity: np.ndarray, scale: float = 1.0
) -> np.ndarray:
    """Per-element absolute tolerance; ``scale`` multiplies it (declared, per check or case)."""
    with np.errstate(invalid="ignore"):
        magnitude = 1.0 + np.where(np.isfinite(expected), np.abs(expected), 0.0) + sensitivity
    return ULPS[dtype] * scale * eps(dtype) * magnitude


@dataclass
class Comparison:
    """The outcome of an elementwise comparison; ``kind`` names the failure, if any."""

    ok: bool
    kind: Kind | None = None
    metrics: dict = field(default_factory=dict)
    detail: str = ""


def _fmt(x: float) -> str:
    return f"{x:.10g}"


def err_over_tol(abs_err: np.ndarray, tol: np.ndarray, finite: np.ndarray) -> np.ndarray:
    """Each element's error over its tolerance: 0 where exact, and a missed non-finite expected
    value (``finite`` False) is infinitely wrong whatever its tolerance, as is an error a NaN
    tolerance cannot bound (inf/inf would be NaN, which no ``> 1`` test counts).
    Reproducer scripts embed this function's source: one rule for the item and its script."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        ratio = np.where(abs_err == 0.0, 0.0, np.where(finite, abs_err / tol, np.inf))
    return np.where(np.isnan(ratio), np.inf, ratio)


@timing.timed("comparison")
def compare_arrays(
    expected: np.ndarray,
    actual: np.ndarray,
    tol: np.ndarray,
    dtype: str | None = None,
    indeterminate: np.ndarray | None = None,
) -> Comparison:
    """Compare elementwise; shapes must already agree. Non-finite values must match exactly.

    ``dtype`` is the precision the framework computed in, when ``actual`` has been widened
    since (gradients are read back in float64): it decides which answers are beyond its range.
    ``indeterminate`` marks elements no evaluation in that dtype can form (a sum whose terms
    overflow with both signs): a non-finite answer is accepted there, and counted.
    """
    expected = np.asarray(expected, dtype=np.float64)
    given = np.asarray(actual)
    computed_in = np.dtype(dtype) if dtype is not None else given.dtype
    actual = given.astype(np.float64)
    tol = np.broadcast_to(np.asarray(tol, dtype=np.float64), expected.shape)
    if expected.shape != actual.shape:
        return Comparison(
            False, Kind.SHAPE, detail=f"shape {actual.shape}, expected {expected.shape}"
        )
    if expected.size == 0:
        return Comparison(True, metrics={"compared": 0})

    finite_exp = np.isfinite(expected)
    same_nonfinite = (~finite_exp) & (
        (np.isnan(expected) & np.isnan(actual)) | (expected == actual)
    )
    if np.issubdtype(computed_in, np.floating) and computed_in.itemsize < 8:
        # The right answer is beyond the dtype's range (log_prob -1e60 in float32): the dtype's
        # rounding of it is the infinity of the same sign, so that is what a framework must give.
        limit = float(np.finfo(computed_in).max)
        with np.errstate(invalid="ignore"):
            overflowed = (
                finite_exp & (np.abs(expected) > limit) & (actual == np.sign(expected) * np.inf)
            )
        finite_exp = finite_exp & ~overflowed
        same_nonfinite = same_nonfinite | overflowed
    accepted = 0
    if indeterminate is not None:
        unsure = np.broadcast_to(indeterminate, expected.shape) & ~np.isfinite(actual)
        accepted = int(np.count_nonzero(unsure))
        finite_exp = finite_exp & ~unsure
        same_nonfinite = same_nonfinite | unsure
    with np.errstate(invalid="ignore", over="ignore"):
        abs_err = np.where(
            finite_exp, np.abs(actual - expected), np.where(same_nonfinite, 0.0, np.inf)
        )
        abs_err = np.where(np.isnan(abs_err), np.inf, abs_err)
        rel_err = abs_err / np.maximum(
            np.abs(np.where(finite_exp, expected, 1.0)), np.finfo(float).tiny
        )
        ratio = err_over_tol(abs_err, tol, finite_exp)
    worst = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
    worst_index = tuple(int(i) for i in worst)
    worst_ratio = float(ratio[worst])
    metrics: dict[str, object] = {
        "compared": int(expected.size),
        "max_abs_err": float(np.max(abs_err)),
        "max_rel_err": float(np.max(rel_err)),
        "max_err_over_tol": worst_ratio,
        "worst_index": list(worst_index),
        "expected_at_worst": float(expected[worst]),
        "actual_at_worst": float(actual[worst]),
        "tolerance_at_worst": float(tol[worst]),
        "mismatched": int(np.count_nonzero(ratio > 1.0)),
        **({"indeterminate_accepted": accepted} if accepted else {}),
    }
    if worst_ratio <= 1.0:
        return Comparison(True, metrics=metrics)

    bad_actual = actual[worst]
    if np.isfinite(expected[worst]) and np.isnan(bad_actual):
        kind = Kind.NAN
    elif np.isfinite(expected[worst]) and np.isinf(bad_actual):
        kind = Kind.INF
    else:
        kind = Kind.VALUE
    detail = (
        f"{metrics['mismatched']} of {expected.size} elements outside tolerance; "
        f"max abs err {metrics['max_abs_err']:.3g}, max rel err {metrics['max_rel_err']:.3g}, "
        f"worst err/tol {worst_ratio:.3g} at index {worst_index}: "
        f"expected {_fmt(expected[worst])}, actual {_fmt(bad_actual)}, "
        f"tolerance {metrics['tolerance_at_worst']:.3g}"
    )
    return Comparison(False, kind, metrics, detail)


def project(array: np.ndarray, structure: str) -> np.ndarray:
    """The part of a gradient that a structured input's tangent space sees."""
    if structure == "symmetric":
        return 0.5 * (array + np.swapaxes(array, -1, -2))
    if structure == "off_diagonal_symmetric":  # a correlation matrix's tangent space: no diagonal
        sym = 0.5 * (array + np.swapaxes(array, -1, -2))
        return sym * (1.0 - np.eye(array.shape[-1]))
    if structure == "lower_triangular":
        return np.tril(array)
    if structure == "diagonal":
        return np.diagonal(array, axis1=-2, axis2=-1)[..., None] * np.eye(array.shape[-1])
    if structure.startswith("block_diagonal:"):
        m, n = int(structure.split(":", 1)[1]), array.shape[-1]
        return 0.5 * (array + np.swapaxes(array, -1, -2)) * np.kron(np.eye(n // m), np.ones((m, m)))
    return array
