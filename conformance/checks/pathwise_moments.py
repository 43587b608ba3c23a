"""Pathwise derivatives judged on average, where one draw's derivative has no right value.

A Dirichlet draw hides the noise its derivative multiplies, but every reparameterisation keeps
d/dθ E[g(x)] = E[∇g(x)·∂x/∂θ]. With s = Σ w·x, the means of ∂s/∂θ and 2s·∂s/∂θ over the draws
must match the oracle's ∂E[s]/∂θ and ∂E[s²]/∂θ (``reference.Family.pathwise_moments``), and so
must rsample((n,))'s gradient of Σs over n. Each mean is judged by its t statistic at
:data:`gof.ITEM_ALPHA`, allowing :data:`ROUNDING_ULPS` of rounding. A family names what this
cannot judge (``reference.Family.moments_unjudged``). Where the law has no moments, two bounded
bumps of s stand in (:func:`bounded_tests_for`). Details: docs/running.md, "Draws".
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from scipy import special

from conformance.checks import gof

#: Draws (of every batch element) for a judgement in expectation: the t statistic's threshold,
#: about 5.5, sees a bias of a few per cent of the terms' spread.
MOMENT_DRAWS = 2**13
#: Units in the last place (of the draws' dtype) of the terms' mean magnitude allowed besides
#: the statistical threshold: each term is a rounded number.
ROUNDING_ULPS = 16


@dataclass(frozen=True)
class MomentTest:
    """One mean to judge: the estimate of each element, the standard deviation of one term,
    the number of terms, what the mean must be, and how the statistic is named."""

    statistic: str
    mean: np.ndarray
    spread: np.ndarray
    n: int
    expected: np.ndarray
    #: The terms' mean magnitude, for the rounding allowance.
    magnitude: np.ndarray
    #: The largest one term's share of the sum of squared deviations (a heavy tail shows here).
    largest_share: float

    @classmethod
    def of_terms(cls, statistic: str, terms: np.ndarray, expected: np.ndarray) -> MomentTest:
        """The mean of ``terms`` (n, …) over the leading axis."""
        mean = terms.mean(0)
        deviations = (terms - mean) ** 2
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.nan_to_num(deviations.max(0) / deviations.sum(0))
        return cls(
            statistic,
            mean,
            terms.std(0, ddof=1),
            terms.shape[0],
            np.asarray(expected, dtype=np.float64),
            np.abs(terms).mean(0),
            float(share.max()) if share.size else 0.0,
        )


def t_statistics(mean, spread, n, expected, magnitude, eps, rounding_ulps=ROUNDING_ULPS):
    """|mean − expected|/(sd/√n) per element, past a rounding allowance of ``rounding_ulps``
    of ``eps`` times the terms' mean magnitude; inf where the mean is not a number (it fails).
    (A reproducer script defines this function from this source.)"""
    allowed = rounding_ulps * eps * magnitude
    error = np.maximum(np.abs(mean - expected) - allowed, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(error == 0.0, 0.0, error / (spread / np.sqrt(n)))
    return np.where(np.isnan(t), np.inf, np.atleast_1d(t))


def _t_verdict(test: MomentTest, alpha: float, eps: float, parameter: str) -> gof.Verdict:
    """The worst element of one test's t statistics (:func:`t_statistics`) against the
    two-sided normal quantile of ``alpha``."""
    limit = float(-special.ndtri(alpha / 2.0))
    t = t_statistics(test.mean, test.spread, test.n, test.expected, test.magnitude, eps)
    flat = int(np.argmax(t))
    shape = np.shape(test.expected)
    at = tuple(int(i) for i in np.unravel_index(flat, shape)) if shape else ()
    value = float(t.flat[flat])
    return gof.Verdict(
        bool(value <= limit),
        f"|t| of the mean of {test.statistic}",
        value,
        limit,
        at,
        parameter,
        alpha,
        value / limit,
        {
            "mean": float(np.asarray(test.mean).flat[flat]),
            "expected": float(test.expected.flat[flat]),
            "draws": test.n,
            "largest_term_share": test.largest_share,
        },
    )


def per_test_alpha(elements: Iterable[int]) -> float:
    """The item's false-failure probability split evenly over every element of every test
    (``elements``: each test's count)."""
    return gof.ITEM_ALPHA / max(sum(elements), 1)


def judge(tests: dict[str, list[MomentTest]], eps: float) -> list[gof.Verdict]:
    """Every test's verdict, at :data:`gof.ITEM_ALPHA` split evenly over every element of every
    test (keyed by parameter)."""
    alpha = per_test_alpha(
        max(int(np.prod(np.shape(t.expected))), 1) for ts in tests.values() for t in ts
    )
    return [_t_verdict(t, alpha, eps, name) for name, ts in tests.items() for t in ts]


def reduce_per_draw(terms: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Per draw (the leading axis), ``terms`` summed over the batch dimensions a parameter of
    ``shape`` lacks or has of size 1: what the gradient of a sum over the batch gets."""
    lead = terms.ndim - 1 - len(shape)
    out = terms.sum(axis=tuple(range(1, 1 + lead))) if lead > 0 else terms
    axes = tuple(i + 1 for i, size in enumerate(shape) if size == 1 and out.shape[i + 1] != 1)
    return out.sum(axis=axes, keepdims=True) if axes else out


def tests_for(
    name: str,
    weighted: np.ndarray,
    per_draw: np.ndarray,
    moments: tuple[np.ndarray, np.ndarray],
    summed: np.ndarray | None,
) -> list[MomentTest]:
    """The tests of one parameter ``name`` from s per draw (n, *batch), each draw's ∂s/∂θ
    (n, *batch, *θ's event), the oracle's (∂E[s]/∂θ, ∂E[s²]/∂θ) per batch element, and, where
    given, the gradient of Σs over rsample((n,)) (the parameter's own shape)."""
    first, second = moments
    s = weighted.reshape(weighted.shape + (1,) * (per_draw.ndim - weighted.ndim))
    found = [
        MomentTest.of_terms(f"∂s/∂{name}", per_draw, first),
        MomentTest.of_terms(f"2s·∂s/∂{name}", 2.0 * s * per_draw, second),
    ]
    if summed is not None:
        shape = tuple(np.shape(summed))
        reduced = reduce_per_draw(per_draw, shape)
        n = per_draw.shape[0]
        expected = reduce_per_draw(np.broadcast_to(first, per_draw.shape[1:])[None], shape)[0]
        like = MomentTest.of_terms("", reduced, expected)
        found.append(
            MomentTest(
                f"∂Σs/∂{name} over rsample((n,)), per draw",
                np.asarray(summed, dtype=np.float64) / n,
                like.spread,
                n,
                expected,
                like.magnitude,
                like.largest_share,
            )
        )
    return found


class BoundedTerms(Protocol):
    """The bounded test functions an item is judged by (``reference.Family.bounded_pathwise``,
    through the draw law)."""

    def terms(self, s: np.ndarray, ds: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...


def bounded_tests_for(
    name: str,
    weighted: np.ndarray,
    per_draw: np.ndarray,
    expected: tuple[np.ndarray, np.ndarray],
    functions: BoundedTerms,
    judged: np.ndarray,
) -> list[MomentTest]:
    """The tests of one parameter ``name`` by bounded test functions g₁, g₂ of s (a law without
    moments, or whose moments rest on its rarest draws): the means over the draws of
    g'(s)·∂s/∂θ must be the oracle's ∂E[g(s)]/∂θ, at the batch elements ``judged`` (the others
    compare 0 with 0). rsample((n,))'s summed gradient is not judged: its mean is ∂E[s]/∂θ,
    which need not exist."""
    s = weighted.reshape(weighted.shape + (1,) * (per_draw.ndim - weighted.ndim))
    first, second = functions.terms(s, per_draw)
    where = judged.reshape(judged.shape + (1,) * (per_draw.ndim - 1 - judged.ndim))
    return [
        MomentTest.of_terms(
            statistic, np.where(where, terms, 0.0), np.where(where, np.nan_to_num(want), 0.0)
        )
        for statistic, terms, want in (
            (f"g₁'(s)·∂s/∂{name}, g₁ = exp(-z²/2)", first, expected[0]),
            (f"g₂'(s)·∂s/∂{name}, g₂ = z·exp(-z²/2)", second, expected[1]),
        )
    ]
