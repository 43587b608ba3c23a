"""Numbers as results.json stores them, and expected-vs-actual element tables.

results.json is strict JSON, so NaN and ±inf arrive as the strings "nan", "inf", "-inf", and
any field may be missing or null on a record that never got that far. Everything here accepts
whatever is there and degrades to "not shown" instead of failing the report.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

#: Tables stop here even if a (third-party) record embeds a bigger array.
MAX_TABLE_ROWS = 512

_NONFINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf, "+inf": math.inf}


def as_float(value: Any) -> float | None:
    """A number from a JSON value: numbers, "nan"/"inf"/"-inf" strings; anything else → None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        text = value.strip().lower()
        if text in _NONFINITE:
            return _NONFINITE[text]
        try:
            return float(text)
        except ValueError:
            return None
    return None


def fmt(value: Any, digits: int = 10) -> str:
    """A number for people: ``digits`` significant digits, "nan"/"inf" kept, non-numbers as is."""
    x = as_float(value)
    if x is None:
        return "—" if value is None else str(value)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == int(x) and abs(x) < 1e15 and isinstance(value, int):
        return str(int(x))
    return f"{x:.{digits}g}"


def to_array(nested: Any) -> np.ndarray | None:
    """A float64 array from a nested list (strings "nan"/"inf" allowed); None if not one."""
    if nested is None or isinstance(nested, dict | str):
        return None

    def convert(v: Any) -> Any:
        if isinstance(v, list):
            return [convert(x) for x in v]
        x = as_float(v)
        if x is None:
            raise ValueError(f"not a number: {v!r}")
        return x

    try:
        array = np.asarray(convert(nested), dtype=np.float64)
    except (ValueError, TypeError):
        return None
    return array


def ratio_of(expected: float, actual: float, tol: float | None) -> float:
    """Error over tolerance for one element, with compare.py's rules for non-finite values."""
    if math.isfinite(expected):
        err = abs(actual - expected)
        if math.isnan(err):
            err = math.inf
    else:
        same = (math.isnan(expected) and math.isnan(actual)) or expected == actual
        err = 0.0 if same else math.inf
    if err == 0.0:
        return 0.0
    if tol is None or not tol > 0:
        return math.inf
    return err / tol


@dataclass(frozen=True)
class ElementRow:
    index: str
    expected: str
    actual: str
    abs_err: str
    tolerance: str
    ratio: str
    bad: bool
    worst: bool


@dataclass(frozen=True)
class ElementTable:
    """Expected and actual side by side, one row per element, the worst ones marked."""

    shape: tuple[int, ...]
    rows: list[ElementRow]
    bad: int
    truncated: int


def element_table(arrays: dict | None) -> ElementTable | None:
    """The side-by-side table for ``record["arrays"]``; None when the shapes cannot be paired."""
    if not isinstance(arrays, dict):
        return None
    expected, actual = to_array(arrays.get("expected")), to_array(arrays.get("actual"))
    if expected is None or actual is None or expected.shape != actual.shape:
        return None
    tol = to_array(arrays.get("tolerance"))
    if tol is not None:
        try:
            tol = np.broadcast_to(tol, expected.shape)
        except ValueError:
            tol = None
    flat_e, flat_a = expected.ravel(), actual.ravel()
    flat_t = tol.ravel() if tol is not None else None
    ratios = [
        ratio_of(float(e), float(a), None if flat_t is None else float(flat_t[i]))
        for i, (e, a) in enumerate(zip(flat_e, flat_a, strict=True))
    ]
    if flat_t is None:  # no tolerance: only exact agreement is known to be fine
        ratios = [0.0 if r == 0.0 else math.inf for r in ratios]
    worst = int(np.argmax(ratios)) if ratios and max(ratios) > 1 else -1
    rows = []
    indices = list(np.ndindex(expected.shape)) or [()]
    for i, idx in enumerate(indices[:MAX_TABLE_ROWS]):
        e, a = float(flat_e[i]), float(flat_a[i])
        err = abs(a - e) if math.isfinite(e) and math.isfinite(a) else None
        rows.append(
            ElementRow(
                index=_index_text(idx),
                expected=fmt(e),
                actual=fmt(a),
                abs_err=fmt(err, 3) if err is not None else "—",
                tolerance=fmt(float(flat_t[i]), 3) if flat_t is not None else "—",
                ratio=fmt(ratios[i], 3) if flat_t is not None else "—",
                bad=ratios[i] > 1,
                worst=i == worst,
            )
        )
    return ElementTable(
        shape=tuple(expected.shape),
        rows=rows,
        bad=sum(r > 1 for r in ratios),
        truncated=max(0, len(indices) - MAX_TABLE_ROWS),
    )


def _index_text(idx: Sequence[int]) -> str:
    return "(" + ", ".join(str(i) for i in idx) + ("," if len(idx) == 1 else "") + ")"


def array_text(nested: Any) -> str:
    """Compact, NumPy-style text of a nested list (shown for small inputs)."""
    array = to_array(nested)
    if array is None:
        return str(nested)
    try:  # keep integers and booleans as they were (discrete families' values)
        exact = np.asarray(nested)
        if exact.dtype.kind in "iub":
            array = exact
    except (ValueError, TypeError):
        pass
    return np.array2string(
        array, precision=8, separator=", ", threshold=4096, max_line_width=100, floatmode="maxprec"
    )
