"""Tests draws against a law at a stated false-failure probability, so chance failures stay rare.

A sampling item's probability is :data:`ITEM_ALPHA`, split over its batch elements and tests.
Under 10,000 sampling items, a run fails by chance with probability below 1 %, and
``conformance calibrate`` measures it. Univariate draws, and projections of multivariate ones,
are judged on the probability integral transform. A draw stands for its rounding cell,
F(lo) ≤ u ≤ F(hi), so atoms and float32 rounding keep the tests exact. The Kolmogorov–Smirnov
distance is held to the DKWM bound. The normal scores of the randomised transform see small
shifts and scale errors that bound misses. Why both: docs/running.md, "Draws".
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import special

#: The probability that one sampling item fails although the framework draws from the law.
ITEM_ALPHA = 1e-6
#: The tests made on each univariate batch element (KS, the scores' mean, their variance).
UNIVARIATE_TESTS = 3
#: Normal scores are clipped here: beyond it a score has probability below 1e-300 anyway.
SCORE_CLIP = 37.0


@dataclass
class Verdict:
    """The worst test of one item: its statistic, the value, the threshold it passed or failed,
    where (batch element, projection) and the false-failure probability each test was run at."""

    passed: bool
    statistic: str
    value: float
    threshold: float
    element: tuple[int, ...] = ()
    projection: str = ""
    alpha: float = 0.0
    #: value/threshold of the worst test (below 1 where every test passed).
    ratio: float = 0.0
    details: dict = field(default_factory=dict)

    def describe(self) -> str:
        where = f"batch element {self.element}" + (
            f", projection {self.projection}" if self.projection else ""
        )
        verb = "exceeds" if not self.passed else "within"
        return (
            f"{self.statistic} = {self.value:.6g} {verb} its threshold {self.threshold:.6g} at "
            f"{where} (false-failure probability {self.alpha:.3g} per test, "
            f"{ITEM_ALPHA:g} per item)"
        )


def dkwm_epsilon(n: int, alpha: float) -> float:
    """ε with P(sup |F_n − F| > ε) ≤ alpha for n draws: √(log(2/alpha)/(2n))."""
    return float(np.sqrt(np.log(2.0 / alpha) / (2.0 * n)))


def ks_distances(lower: np.ndarray, upper: np.ndarray, values: np.ndarray) -> np.ndarray:
    """sup_t of the distance of F_n(t) from the law's band, per column, for draws ``values``
    (n, m) with F at their cells' ends: at a draw x, F_n(x) and F_n(x−) should both lie in
    [F(lo), F(hi)] (the probabilities that the variable is at most, or below, the number the
    draw stands for), and between draws F_n is constant while F only rises. Never more than the
    Kolmogorov–Smirnov distance of the law rounded to the cells, so the DKWM bound holds."""
    n = values.shape[0]
    order = np.argsort(values, axis=0, kind="stable")
    xs = np.take_along_axis(values, order, 0)
    lo = np.take_along_axis(lower, order, 0)
    hi = np.take_along_axis(upper, order, 0)
    out = np.empty(values.shape[1])
    for j in range(values.shape[1]):
        col = xs[:, j]
        right = np.searchsorted(col, col, side="right") / n  # F_n(x)
        left = np.searchsorted(col, col, side="left") / n  # F_n(x−)
        above = np.maximum(right - hi[:, j], left - hi[:, j])
        below = np.maximum(lo[:, j] - right, lo[:, j] - left)
        out[j] = max(float(np.max(above)), float(np.max(below)), 0.0)
    return out


def normal_scores(lower: np.ndarray, upper: np.ndarray, seed: int) -> np.ndarray:
    """Φ⁻¹ of the randomised probability integral transform (standard normal under the law)."""
    v = np.random.default_rng(seed).random(lower.shape)
    u = lower + v * (upper - lower)
    with np.errstate(all="ignore"):
        z = special.ndtri(np.clip(u, 0.0, 1.0))
    return np.clip(np.nan_to_num(z, nan=0.0), -SCORE_CLIP, SCORE_CLIP)


def univariate(
    values: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    seed: int,
    tests: int,
    projection: str = "",
) -> list[Verdict]:
    """The three tests on every column of ``values`` (n, m), each at ITEM_ALPHA/``tests``
    (``tests``: every test the item makes, so the item's total stays ITEM_ALPHA)."""
    n = values.shape[0]
    alpha = ITEM_ALPHA / tests
    verdicts = []
    d = ks_distances(lower, upper, values)
    eps = dkwm_epsilon(n, alpha)
    j = int(np.argmax(d))
    verdicts.append(
        Verdict(
            bool(d[j] <= eps),
            "Kolmogorov–Smirnov distance sup|F_n − F|",
            float(d[j]),
            eps,
            (j,),
            projection,
            alpha,
            float(d[j] / eps),
        )
    )
    z = normal_scores(lower, upper, seed)
    mean = z.sum(0) / np.sqrt(n)
    limit = float(-special.ndtri(alpha / 2.0))
    j = int(np.argmax(np.abs(mean)))
    verdicts.append(
        Verdict(
            bool(abs(mean[j]) <= limit),
            "normal scores' mean |Σz|/√n",
            float(abs(mean[j])),
            limit,
            (j,),
            projection,
            alpha,
            float(abs(mean[j]) / limit),
        )
    )
    squares = (z * z).sum(0)
    upper_limit = float(special.chdtri(n, alpha / 2.0))
    lower_limit = float(special.chdtri(n, 1.0 - alpha / 2.0))
    # The distance of Σz² from n in units of its threshold on the side it lies.
    over = np.where(
        squares >= n, (squares - n) / (upper_limit - n), (n - squares) / (n - lower_limit)
    )
    j = int(np.argmax(over))
    threshold = upper_limit if squares[j] >= n else lower_limit
    verdicts.append(
        Verdict(
            bool(over[j] <= 1.0),
            f"normal scores' sum of squares Σz² (χ²({n}): {lower_limit:.6g} to {upper_limit:.6g})",
            float(squares[j]),
            threshold,
            (j,),
            projection,
            alpha,
            float(over[j]),
        )
    )
    return verdicts


def worst(verdicts: list[Verdict]) -> Verdict:
    """The failing test furthest past its threshold, else the passing one nearest to it."""
    return max(verdicts, key=lambda v: (not v.passed, v.ratio))
