"""Histograms of error relative to tolerance, per framework, as geometry for an inline SVG.

A pass at 0.9 × tolerance and a pass at 1e-4 × tolerance look the same in a pass/fail matrix;
the histogram shows how close each framework runs to its tolerance, so near-misses (between
0.1 and 1) stand out before they become failures. The x axis is log10(error / tolerance) in
half-decade bins, with a bin for exact agreement and one for everything at or above 1e3
(including inf, which a NaN or inf against a finite oracle value produces). Bar heights are
log-scaled, so a handful of near-misses stays visible next to thousands of clean passes.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from conformance.records.record import Record
from conformance.report.values import as_float

LOW_DECADE, HIGH_DECADE, STEPS_PER_DECADE = -6, 3, 2
NEAR_MISS = 0.1

WIDTH, HEIGHT = 440, 150
LEFT, RIGHT, TOP, BOTTOM = 8, 8, 16, 30


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    count: int
    label: str  # the bin's range, for the tooltip
    zone: str  # exact | ok | near | bad


@dataclass(frozen=True)
class Tick:
    x: float
    label: str


@dataclass(frozen=True)
class Histogram:
    framework: str
    bars: list[Bar]
    ticks: list[Tick]
    tolerance_x: float
    total: int
    near: int
    over: int
    without: int  # items that did not pass and have no numeric error (raised, wrong shape)
    width: int = WIDTH
    height: int = HEIGHT
    baseline: float = HEIGHT - BOTTOM


def _edges() -> list[float]:
    n = (HIGH_DECADE - LOW_DECADE) * STEPS_PER_DECADE
    return [10 ** (LOW_DECADE + k / STEPS_PER_DECADE) for k in range(n + 1)]


def _bin_labels(edges: Sequence[float]) -> list[tuple[str, str]]:
    """(label, zone) of every bin: exact, below the range, the range, at or above it."""
    out = [("exactly 0", "exact"), (f"(0, {edges[0]:.0e})", "ok")]
    for lo, hi in itertools.pairwise(edges):
        zone = "bad" if lo >= 1 else ("near" if lo >= NEAR_MISS else "ok")
        out.append((f"[{lo:.2g}, {hi:.2g})", zone))
    out.append((f"≥ {edges[-1]:.0e} (incl. inf, nan)", "bad"))
    return out


def bin_index(ratio: float, edges: Sequence[float]) -> int:
    """Which bin a ratio falls in (0: exact, 1: below the range, last: at or above it)."""
    if ratio == 0:
        return 0
    if math.isnan(ratio) or ratio >= edges[-1]:
        return len(edges) + 1
    if ratio < edges[0]:
        return 1
    k = math.floor((math.log10(ratio) - LOW_DECADE) * STEPS_PER_DECADE)
    k = min(max(k, 0), len(edges) - 2)
    while k > 0 and ratio < edges[k]:  # guard against log10 rounding at an edge
        k -= 1
    while k < len(edges) - 2 and ratio >= edges[k + 1]:
        k += 1
    return 2 + k


def histogram(framework: str, ratios: Sequence[float], without: int) -> Histogram:
    """Geometry for one framework's histogram; ``without`` records had no numeric ratio."""
    edges = _edges()
    labels = _bin_labels(edges)
    counts = [0] * len(labels)
    for r in ratios:
        counts[bin_index(r, edges)] += 1
    plot_w = WIDTH - LEFT - RIGHT
    plot_h = HEIGHT - TOP - BOTTOM
    slot = plot_w / (len(labels) + 1)  # one empty slot separates the exact bin from the rest
    scale = math.log10(1 + max(counts)) if any(counts) else 1.0

    def x_of(i: int) -> float:
        return LEFT + slot * (i + (1 if i > 0 else 0))

    bars = []
    for i, ((label, zone), n) in enumerate(zip(labels, counts, strict=True)):
        h = plot_h * math.log10(1 + n) / scale if n else 0.0
        bars.append(
            Bar(
                x=round(x_of(i) + 1, 2),
                y=round(TOP + plot_h - h, 2),
                width=round(slot - 2, 2),
                height=round(h, 2),
                count=n,
                label=label,
                zone=zone,
            )
        )
    ticks = [Tick(round(x_of(0) + slot / 2, 2), "0")]
    for decade in range(LOW_DECADE, HIGH_DECADE + 1, 3):
        k = (decade - LOW_DECADE) * STEPS_PER_DECADE
        ticks.append(Tick(round(x_of(2 + k), 2), "1" if decade == 0 else f"1e{decade}"))
    tolerance_x = round(x_of(2 + (0 - LOW_DECADE) * STEPS_PER_DECADE), 2)
    finite = [r for r in ratios if not math.isnan(r)]
    return Histogram(
        framework=framework,
        bars=bars,
        ticks=ticks,
        tolerance_x=tolerance_x,
        total=len(ratios),
        near=sum(NEAR_MISS < r <= 1 for r in finite),
        over=sum(not r <= 1 for r in ratios),
        without=without,
    )


def histograms(records: Sequence[Record], frameworks: Sequence[str]) -> list[Histogram]:
    """One histogram per framework (in ``frameworks`` order) that ran at least one item."""
    ratios: dict[str, list[float]] = {fw: [] for fw in frameworks}
    without: dict[str, int] = dict.fromkeys(frameworks, 0)
    for rec in records:
        fw = rec.static.framework or ""
        if fw not in ratios or rec.outcome == "skipped":
            continue
        r = as_float(rec.metrics.get("max_err_over_tol"))
        if r is not None:
            ratios[fw].append(abs(r))
        elif rec.outcome != "passed":  # a failure with nothing to plot: say so
            without[fw] += 1
    return [
        histogram(fw, ratios[fw], without[fw]) for fw in frameworks if ratios[fw] or without[fw]
    ]
