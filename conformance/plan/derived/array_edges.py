"""Edge points of array-valued inputs: simplex vertices and faces, a zero count, nearly singular
matrices, and one element of an elementwise domain at its ends.

A scalar input has its edges on a line (:func:`conformance.plan.derived.edges.parameter_points`); an
array's edges are shapes of the whole array, named by its domain: the simplex's vertices and
faces, the boundary of the positive-definite cone (a nearly singular matrix), the diagonal of
a correlation matrix. Each point keeps the rest of the anchor's array, so a generated case moves
one thing at a time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

#: How close to an end "near" and "just outside" sit: as for scalars
#: (:data:`conformance.plan.derived.edges.NEAR`), representable next to 0 and 1 in float32.
NEAR = 1e-6
#: The smallest eigenvalue of a nearly singular matrix, relative to its largest.
NEARLY_SINGULAR = 1e-6


@dataclass(frozen=True)
class ArrayPoint:
    """One edge of an array input: its label in the case id, the array, and whether the
    point is exactly on the edge (a vertex, a face, a 0) rather than near it."""

    label: str
    array: np.ndarray
    exact: bool


def parameter_points(
    domain: str, array: np.ndarray, scalar_points: Callable[[str], list]
) -> list[ArrayPoint]:
    """A parameter array's edges inside its domain. ``scalar_points`` gives an elementwise
    domain's points for one element (the first)."""
    if domain == "simplex":
        return simplex_points(array, outside=False)
    if domain == "positive_definite":
        return [ArrayPoint("near-singular", nearly_singular(array), exact=False)]
    if domain == "lower_cholesky":
        return [ArrayPoint("near-singular", nearly_singular_factor(array), exact=False)]
    return [
        ArrayPoint(f"first-{point.label}", with_first(array, point.value), point.exact)
        for point in scalar_points(domain)
    ]


def value_points(support: str, discrete: bool, array: np.ndarray) -> list[ArrayPoint]:
    """A value array's edges: on its support's boundary, near it inside, and just outside."""
    if support == "simplex":
        return simplex_points(array, outside=True)
    if support == "corr_cholesky":
        return [
            ArrayPoint("at-identity", np.eye(array.shape[-1]), exact=True),
            ArrayPoint("near-singular", nearly_singular_correlation(array), exact=False),
        ]
    if support == "corr_matrix":
        factor = nearly_singular_correlation(np.linalg.cholesky(array))
        return [
            ArrayPoint("at-identity", np.eye(array.shape[-1]), exact=True),
            ArrayPoint("near-singular", factor @ factor.T, exact=False),
        ]
    if support == "positive_definite":
        return [ArrayPoint("near-singular", nearly_singular(array), exact=False)]
    if support == "sphere":  # no ends: a coordinate axis, and the anchor's antipode
        axis = np.zeros_like(array, dtype=np.float64)
        axis[0] = 1.0
        return [
            ArrayPoint("at-first-axis", axis, exact=True),
            ArrayPoint("at-antipode", -np.asarray(array, dtype=np.float64), exact=True),
        ]
    if discrete and support == "nonnegative_integer" and array.ndim == 1 and array.size > 1:
        return count_points(array)
    return []


def with_first(array: np.ndarray, x: float) -> np.ndarray:
    out = np.array(array, dtype=np.float64)
    out.flat[0] = x
    return out


def simplex_points(p: np.ndarray, outside: bool) -> list[ArrayPoint]:
    """The vertex e₀, the face where the first coordinate is 0 (the rest rescaled), the first
    coordinate just inside that face, and (for a value) just outside it."""
    vertex = np.zeros_like(p, dtype=np.float64)
    vertex[0] = 1.0
    points = [
        ArrayPoint("at-vertex", vertex, exact=True),
        ArrayPoint("at-face", _first_set(p, 0.0), exact=True),
        ArrayPoint("near-face", _first_set(p, NEAR), exact=False),
    ]
    if outside:
        points.append(ArrayPoint("outside-face", _first_set(p, -NEAR), exact=False))
    return points


def _first_set(p: np.ndarray, x: float) -> np.ndarray:
    """``p`` with its first coordinate ``x`` and the others rescaled to keep the sum 1."""
    rest = np.asarray(p[1:], dtype=np.float64)
    return np.concatenate([[x], rest * (1.0 - x) / rest.sum()])


def count_points(counts: np.ndarray) -> list[ArrayPoint]:
    """Counts with a fixed total: all in the first category (a vertex), the first count 0
    (its counts moved to the second), and the first count -1 (outside, same total)."""
    total = float(counts.sum())
    vertex = np.zeros_like(counts, dtype=np.float64)
    vertex[0] = total
    moved = np.array(counts, dtype=np.float64)
    moved[1] += moved[0]
    moved[0] = 0.0
    below = moved.copy()
    below[0], below[1] = -1.0, moved[1] + 1.0
    return [
        ArrayPoint("at-vertex", vertex, exact=True),
        ArrayPoint("first-at-0", moved, exact=True),
        ArrayPoint("first-below-0", below, exact=False),
    ]


def nearly_singular(a: np.ndarray) -> np.ndarray:
    """``a`` (symmetric positive definite) with its smallest eigenvalue set to
    :data:`NEARLY_SINGULAR` times its largest, the eigenvectors kept."""
    w, v = np.linalg.eigh(np.asarray(a, dtype=np.float64))
    w = w.copy()
    w[0] = NEARLY_SINGULAR * w[-1]
    out = (v * w) @ v.T
    return (out + out.T) / 2.0


def nearly_singular_factor(tril: np.ndarray) -> np.ndarray:
    """A lower Cholesky factor of a nearly singular matrix, as nearly singular as
    :func:`nearly_singular` makes one (smallest eigenvalue about :data:`NEARLY_SINGULAR` times
    the largest): its last diagonal entry √NEARLY_SINGULAR times the largest, since L Lᵀ
    squares it."""
    out = np.array(tril, dtype=np.float64)
    out[-1, -1] = np.sqrt(NEARLY_SINGULAR) * np.abs(np.diagonal(out)).max()
    return out


def nearly_singular_correlation(chol: np.ndarray) -> np.ndarray:
    """A correlation Cholesky factor whose first two variables correlate at 1 − 1e-6 (the
    second row [ρ, √(1 − ρ²), 0…]; the other rows kept)."""
    out = np.array(chol, dtype=np.float64)
    rho = 1.0 - NEAR
    out[1, :] = 0.0
    out[1, 0], out[1, 1] = rho, np.sqrt((1.0 - rho) * (1.0 + rho))
    return out
