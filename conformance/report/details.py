"""What the report shows when a non-passing item is opened: one view model per record.

Built in Python so the template only lays things out (and jinja2 escapes every string), and so
the browser receives ready HTML inside an inert ``<template>`` that is cloned on click.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from conformance.records.record import Record
from conformance.report.values import ElementTable, array_text, as_float, element_table, fmt

#: Metrics in the order people read them; any other metric follows, sorted by name.
METRIC_ORDER = (
    "max_err_over_tol",
    "max_abs_err",
    "max_rel_err",
    "tolerance_at_worst",
    "worst_index",
    "expected_at_worst",
    "actual_at_worst",
    "mismatched",
    "compared",
)

METRIC_LABELS = {
    "max_err_over_tol": "max error / tolerance",
    "max_abs_err": "max abs error",
    "max_rel_err": "max rel error",
    "tolerance_at_worst": "tolerance at worst element",
    "worst_index": "worst element index",
    "expected_at_worst": "expected at worst",
    "actual_at_worst": "actual at worst",
    "mismatched": "elements outside tolerance",
    "compared": "elements compared",
}


@dataclass(frozen=True)
class Row:
    label: str
    value: str
    flag: str = ""  # a CSS class: "bad" for a value over tolerance


@dataclass(frozen=True)
class InputView:
    name: str
    shape: str
    dtype: str
    values: str | None


@dataclass
class Detail:
    id: int
    nodeid: str
    outcome: str
    kind: str
    facts: list[Row]
    message: str
    metrics: list[Row]
    tables: list[tuple[str, ElementTable]] = field(default_factory=list)
    raw_arrays: list[Row] = field(default_factory=list)
    expected_shapes: list[Row] = field(default_factory=list)
    inputs: list[InputView] = field(default_factory=list)
    source: str = ""
    reproducer: str = ""
    reproducer_file: str = ""


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value)


def _facts(rec: Record) -> list[Row]:
    static = rec.static
    version = " ".join(x for x in (static.package, static.framework_version) if x)
    rows: list[tuple[str, object]] = [
        ("framework", f"{_text(static.framework)} ({version})" if version else None),
        ("dtype", static.dtype),
        ("device", static.device),
        ("check", static.check),
        ("kind", rec.kind),
        ("case", static.case),
        ("family", static.family),
        ("parametrization", static.parametrization),
        ("file", f"{static.file}:{static.line}" if static.line else static.file),
        ("duration", f"{fmt(rec.duration, 3)} s" if rec.duration else None),
    ]
    if not rows[0][1] and static.framework:
        rows[0] = ("framework", static.framework)
    return [Row(label, _text(value)) for label, value in rows if value not in (None, "")]


def _flatten(metrics: dict, prefix: str = "") -> list[tuple[str, str, Any]]:
    """(key, label, value) rows; nested dicts (per-parameter metrics) become "a › b" rows."""
    keys = [k for k in METRIC_ORDER if k in metrics]
    keys += sorted((k for k in metrics if k not in METRIC_ORDER), key=str)
    out: list[tuple[str, str, Any]] = []
    for key in keys:
        value = metrics[key]
        label = f"{prefix}{METRIC_LABELS.get(key, key)}"
        if isinstance(value, dict) and value:
            out += _flatten(value, f"{label} › ")
        else:
            out.append((str(key), label, value))
    return out


def _metrics(metrics: Any) -> list[Row]:
    if not isinstance(metrics, dict):
        return []
    rows = []
    for key, label, value in _flatten(metrics):
        if isinstance(value, list):
            text = "(" + ", ".join(_text(v) for v in value) + ("," if len(value) == 1 else "") + ")"
        elif as_float(value) is not None:
            text = fmt(value, 10 if "expected" in key or "actual" in key else 4)
        else:
            text = _text(value)
        ratio = as_float(value) if key == "max_err_over_tol" else None
        flag = "bad" if ratio is not None and not ratio <= 1 else ""
        rows.append(Row(label, text, flag))
    return rows


def _inputs(inputs: Any) -> list[InputView]:
    if not isinstance(inputs, dict):
        return []
    out = []
    for name, info in inputs.items():
        info = info if isinstance(info, dict) else {}
        shape = info.get("shape")
        shape_text = (
            "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"
            if isinstance(shape, list)
            else _text(shape)
        )
        values = info.get("values")
        out.append(
            InputView(
                name=str(name),
                shape=shape_text,
                dtype=_text(info.get("dtype")),
                values=None if values is None else array_text(values),
            )
        )
    return out


def _array_groups(arrays: Any) -> list[tuple[str, dict]]:
    """``{expected, actual, tolerance}`` — or one such dict per parameter (gradients) — as
    (label, arrays) pairs; the label is empty for the single, unnamed group."""
    if not isinstance(arrays, dict) or not arrays:
        return []
    if "expected" in arrays or "actual" in arrays:
        return [("", arrays)]
    return [(str(name), group) for name, group in arrays.items() if isinstance(group, dict)]


def _raw_arrays(label: str, arrays: dict) -> list[Row]:
    """Arrays that cannot be paired element by element (a shape mismatch): shown whole."""
    prefix = f"{label}: " if label else ""
    return [
        Row(prefix + str(name), array_text(value))
        for name, value in arrays.items()
        if value not in (None, [])
    ]


def _shapes(shapes: Any) -> list[Row]:
    if not isinstance(shapes, dict):
        return []
    return [Row(k, _text(v)) for k, v in shapes.items()]


def build_detail(detail_id: int, rec: Record, reproducer_file: str = "") -> Detail:
    """The view model of ``rec``; most of its fields are optional."""
    attached = rec.attachments
    tables: list[tuple[str, ElementTable]] = []
    raw: list[Row] = []
    for label, group in _array_groups(attached.arrays):
        table = element_table(group)
        if table is not None:
            tables.append((label, table))
        else:
            raw += _raw_arrays(label, group)
    reproducer = attached.reproducer or ""
    return Detail(
        id=detail_id,
        nodeid=rec.nodeid,
        outcome=rec.outcome,
        kind=_text(rec.kind),
        facts=_facts(rec),
        message=rec.message,
        metrics=_metrics(rec.metrics),
        tables=tables,
        raw_arrays=raw,
        expected_shapes=_shapes(attached.expected_shapes),
        inputs=_inputs(attached.inputs),
        source=_text(attached.source),
        reproducer=reproducer,
        reproducer_file=reproducer_file if reproducer else "",
    )
