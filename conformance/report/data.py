"""The compact table of every record that the page's script filters, counts and lists.

At 10,000 records the page must stay small and open fast, so each record travels as one short
array of indexes into string tables (family, framework, check, …) plus the few values the
matrix and the item list need. Everything else about a record (its message, YAML, arrays,
reproducer) is rendered once, server-side, into the detail that opens on click.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from conformance.records.record import Record
from conformance.report.values import as_float

#: Worst first: a matrix cell takes the colour of its worst outcome, the list sorts by it.
SEVERITY = ("error", "failed", "xpassed", "xfailed", "skipped", "passed")

#: The label of a missing field (a case error has no family, a skip no dtype).
NONE = "(none)"

#: Field order of one encoded record; the page's script reads the same list.
FIELDS = (
    "file",
    "name",
    "case",
    "family",
    "framework",
    "check",
    "dtype",
    "device",
    "outcome",
    "kind",
    "ratio",
    "summary",
    "detail",
)

#: Field → the payload key of its string table.
TABLES = {
    "file": "files",
    "family": "families",
    "framework": "frameworks",
    "check": "checks",
    "dtype": "dtypes",
    "device": "devices",
    "outcome": "outcomes",
    "kind": "kinds",
}


class _Table:
    """Distinct strings in first-seen order; a record stores the index."""

    def __init__(self, initial: Sequence[str] = ()) -> None:
        self.values: list[str] = list(initial)
        self.index = {v: i for i, v in enumerate(self.values)}

    def __call__(self, value: str) -> int:
        if value not in self.index:
            self.index[value] = len(self.values)
            self.values.append(value)
        return self.index[value]


def _label(value: Any) -> str:
    return NONE if value in (None, "") else str(value)


def split_nodeid(nodeid: str) -> tuple[str, str]:
    """``file::name`` → (file, name); a nodeid without ``::`` has no file part."""
    file, sep, name = nodeid.partition("::")
    return (file, name) if sep else ("", nodeid)


def summary_line(rec: Record) -> str:
    """The one line of a message worth showing in a list: not the header, not shapes."""
    if rec.outcome == "passed":
        return ""
    lines = [ln.strip() for ln in rec.message.splitlines() if ln.strip()]
    header = f"{rec.static.file}::{rec.static.case}"
    for line in lines:
        if header in line or line.startswith(("framework:", "shapes:")):
            continue
        return line[:240]
    return lines[0][:240] if lines else ""


def compact_ratio(value: Any) -> float | str | None:
    """max_err_over_tol, 4 significant digits; "inf"/"nan" stay strings (JSON has neither)."""
    x = as_float(value)
    if x is None:
        return None
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return float(f"{x:.4g}")


def browser_payload(
    records: Sequence[Record],
    detail_ids: dict[int, int],
    not_offered: Mapping[str, Sequence[Mapping[str, str]]] | None = None,
) -> dict:
    """Tables plus one array per record (see :data:`FIELDS`); ``detail_ids`` maps record index
    to the id of its rendered detail. ``not_offered`` (the run header's, see
    :func:`~conformance.report.merge.not_offered_of`) travels as ``[family, framework,
    parametrization, reason]`` rows, indexes into the same tables: the matrix's "not offered"."""
    tables = {name: _Table() for name in TABLES}
    tables["outcome"] = _Table(SEVERITY)
    rows = []
    for i, rec in enumerate(records):
        file, name = split_nodeid(rec.nodeid)
        static = rec.static
        rows.append(
            [
                tables["file"](file),
                name,
                _label(static.case),
                tables["family"](_label(static.family)),
                tables["framework"](_label(static.framework)),
                tables["check"](_label(static.check)),
                tables["dtype"](_label(static.dtype)),
                tables["device"](_label(static.device)),
                tables["outcome"](rec.outcome),
                tables["kind"](_label(rec.kind)),
                compact_ratio(rec.metrics.get("max_err_over_tol")),
                summary_line(rec),
                detail_ids.get(i, -1),
            ]
        )
    lacking = [
        [tables["family"](e["family"]), tables["framework"](fw), e["parametrization"], e["reason"]]
        for fw, entries in (not_offered or {}).items()
        for e in entries
    ]
    out: dict[str, Any] = {"fields": list(FIELDS), "records": rows, "not_offered": lacking}
    for name, table in tables.items():
        out[TABLES[name]] = table.values
    return out


def distinct(values: Iterable[object]) -> list[str]:
    """The labels of ``values`` (one field over the records), sorted."""
    return sorted({_label(value) for value in values})
