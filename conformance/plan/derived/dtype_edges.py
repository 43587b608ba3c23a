"""float32's own edges: inputs at the ends of float32's range, and values whose density
float32 cannot hold.

A float32 ``log_prob`` is right only if the framework never forms a number float32 cannot
represent on the way (a density of e^-110, a scale squared) and never loses one it was given (a
subnormal input flushed to 0). The points here sit exactly there, chosen from each input's
domain or the value's support, one input moved at a time from the family's anchor
(:mod:`conformance.plan.derived.edges`); the generated cases run in float32 only — in float64 these
numbers are ordinary.

- a parameter or value whose domain starts at 0: float32's smallest normal number (2^-126) and a
  subnormal one (2^-140);
- one unbounded above: float32's largest finite number; a count unbounded above: 2^24, the
  largest integer from which float32 still holds every smaller count exactly;
- the value in each tail where the density is too small for float32 (log density
  :data:`UNDERFLOW_LEVEL`, below log of float32's smallest subnormal, −103.3): log_prob is an
  ordinary number there, and only a framework that forms the density itself gets −inf.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from conformance.reference.domains import Interval, interval

DTYPE = "float32"
FINFO = np.finfo(np.float32)
SMALLEST_NORMAL = float(FINFO.smallest_normal)  # 2^-126
SUBNORMAL = 2.0**-140
LARGEST = float(FINFO.max)
#: The largest count below which float32 holds every integer exactly.
EXACT_COUNTS = 2.0**24
#: A log density whose density is 0 in float32: below log(2^-149) = −103.28, with room.
UNDERFLOW_LEVEL = -110.0


#: How every float32 edge point's label starts (``edge-scale-f32-subnormal``).
LABEL_PREFIX = "f32-"


def is_float32_edge(case_id: str) -> bool:
    """Whether a case id is a generated float32 edge (labels from :func:`range_points` and
    :func:`underflow_points`)."""
    return case_id.startswith("edge-") and f"-{LABEL_PREFIX}" in case_id


@dataclass(frozen=True)
class DtypePoint:
    """One float32 edge of an input: its label in the case id, the number (exact in float32),
    and which end of the input's domain it stands for (``lower`` or ``upper``)."""

    label: str
    value: float
    end: str


def _interval_of(domain: str) -> Interval | None:
    """The domain's interval; ``real`` is the whole line (circular and array domains: None)."""
    if domain == "real":
        return Interval(-math.inf, math.inf, False, False)
    return interval(domain)


def range_points(domain: str) -> list[DtypePoint]:
    """An input's float32 range edges inside ``domain`` (see the module docstring)."""
    iv = _interval_of(domain)
    if iv is None:
        return []
    points: list[DtypePoint] = []
    if iv.integer:
        if not math.isfinite(iv.hi):
            points.append(DtypePoint(f"{LABEL_PREFIX}exact-counts", EXACT_COUNTS, "upper"))
        return points
    if iv.lo == 0.0:
        points += [
            DtypePoint(f"{LABEL_PREFIX}smallest-normal", SMALLEST_NORMAL, "lower"),
            DtypePoint(f"{LABEL_PREFIX}subnormal", SUBNORMAL, "lower"),
        ]
    if not math.isfinite(iv.hi):
        points.append(DtypePoint(f"{LABEL_PREFIX}largest", LARGEST, "upper"))
    return points


def _toward(start: float, end: float, k: int) -> float:
    """The k-th probe from ``start`` toward ``end``: doubling steps toward an infinite end,
    halving distances toward a finite one."""
    if math.isinf(end):
        return start + math.copysign((abs(start) + 1.0) * 2.0**k, end)
    return end + (start - end) * 2.0**-k


def underflow_value(
    log_prob: Callable[[float], float],
    start: float,
    end: float,
    discrete: bool,
    level: float = UNDERFLOW_LEVEL,
) -> float | None:
    """The float32 (or integer) value nearest ``start`` on its way toward the support's end
    ``end`` where the log density first falls to ``level``; None if it never does there in
    float32's range (a heavy tail, or a density that does not vanish at that end)."""
    if not log_prob(start) > level:
        return None
    inside, outside = start, None
    for k in range(0, 160, 4):  # steps of 16×: the bisection below narrows by ordinal
        x = _toward(start, end, k)
        if discrete:
            x = float(math.floor(x) if end > start else math.ceil(x))
        if not math.isfinite(x) or abs(x) > LARGEST or x == end:
            return None
        lp = log_prob(x)
        if math.isfinite(lp) and lp <= level:
            outside = x
            break
        if lp > level:
            inside = x
    if outside is None:
        return None
    # Bisect to neighbours on the integer grid, or on float32's (by ordinal: at most 32
    # halvings, where halving the number itself can take over a hundred).
    lo, hi = (inside, outside) if discrete else (_ordinal(inside), _ordinal(outside))
    while abs(hi - lo) > 1:
        mid = (lo + hi) // 2
        lp = log_prob(float(mid) if discrete else _from_ordinal(int(mid)))
        if math.isfinite(lp) and lp <= level:
            hi = mid
        else:
            lo = mid
    return float(hi) if discrete else _from_ordinal(int(hi))


def _ordinal(x: float) -> int:
    """A float32's position among all float32s, in order (negative below zero)."""
    bits = int(np.array(x, np.float32).view(np.int32))
    return bits if bits >= 0 else -(bits & 0x7FFFFFFF)


def _from_ordinal(n: int) -> float:
    bits = n if n >= 0 else (-n) | -0x80000000
    return float(np.array(bits, np.int32).view(np.float32))


def underflow_points(
    log_prob: Callable[[float], float],
    anchor_value: float,
    support: str,
    discrete: bool,
    lower: float | None = None,
    upper: float | None = None,
) -> list[DtypePoint]:
    """The value in each tail of the support where float32's density underflows: toward each
    end (``lower``/``upper`` where the parameters set it)."""
    iv = _interval_of(support)
    if iv is None:
        return []
    ends = [
        ("lower", iv.lo if lower is None else lower),
        ("upper", iv.hi if upper is None else upper),
    ]
    points = []
    for side, end in ends:
        found = underflow_value(log_prob, anchor_value, end, discrete)
        if found is not None:
            points.append(DtypePoint(f"{LABEL_PREFIX}density-underflow-{side}", found, side))
    return points
