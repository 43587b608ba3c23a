"""results.json: one record per collected item, written atomically.

This is the contract every report and downstream tool reads. Records are assembled on the
process that sees every report (the xdist controller, or the only process), from the static
metadata each item carries in ``user_properties`` plus its phase outcomes.
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from conformance.kinds import ERROR_KINDS, Kind
from conformance.records.record import (
    OUTCOMES,
    ItemResult,
    ItemStatic,
    Outcome,
    Record,
    build_record,
    float_name,
)

SCHEMA_VERSION = 1
STATIC_KEY = "conformance"
RESULT_KEY = "conformance_result"


def is_case_nodeid(nodeid: str) -> bool:
    return nodeid.split("::", 1)[0].endswith((".yaml", ".yml"))


def _props(report: Any, key: str) -> dict:
    for name, value in getattr(report, "user_properties", ()) or ():
        if name == key:
            return json.loads(value)
    return {}


def _longrepr_text(report: Any) -> str:
    longrepr = report.longrepr
    if longrepr is None:
        return ""
    if isinstance(longrepr, tuple) and len(longrepr) == 3:  # skip: (path, lineno, reason)
        reason = str(longrepr[2])
        return reason.removeprefix("Skipped: ")
    # Not ``report.longreprtext``: under xdist it starts with the worker's line ("[gw0] linux --
    # Python …"), and a record must not depend on which process ran the item.
    return str(longrepr)


@dataclass
class _Pending:
    static: ItemStatic | None = None
    result: ItemResult = field(default_factory=ItemResult)
    outcome: Outcome | None = None
    message: str = ""
    duration: float = 0.0
    #: Messages of earlier runs that crashed their worker (``--crash-retries``).
    crashes: list[str] = field(default_factory=list)


def _static(report: Any) -> ItemStatic | None:
    props = _props(report, STATIC_KEY)
    return ItemStatic.from_json(props) if props else None


class ResultsCollector:
    """Accumulates reports into records; :meth:`write` saves them with the run's metadata."""

    def __init__(self) -> None:
        self.pending: dict[str, _Pending] = {}
        self.records: dict[str, Record] = {}
        self.collected: list[str] | None = None
        #: Static metadata of collected items, where this process collected them itself.
        self.static: dict[str, ItemStatic | None] = {}

    def set_collected(self, nodeids: list[str], items: list | None = None) -> None:
        if self.collected is None:
            self.collected = [n for n in nodeids if is_case_nodeid(n)]
        for item in items or ():
            if is_case_nodeid(item.nodeid):
                self.static[item.nodeid] = _static(item)

    def add_report(self, report: Any) -> None:
        if not is_case_nodeid(report.nodeid):
            return
        p = self.pending.setdefault(report.nodeid, _Pending())
        if report.outcome == "rerun":  # a crashed run, queued again (plugin._retry_crash)
            p.crashes.append(str(report.longrepr))
            return
        p.static = p.static or _static(report)
        result = _props(report, RESULT_KEY)
        if result:
            p.result = ItemResult.from_json(result)
        p.duration += float(getattr(report, "duration", 0.0) or 0.0)
        wasxfail = getattr(report, "wasxfail", None)
        if report.when == "setup":
            if report.failed:
                p.outcome, p.message = "error", _longrepr_text(report)
            elif report.skipped:
                p.outcome = "xfailed" if wasxfail is not None else "skipped"
                p.message = wasxfail or _longrepr_text(report)
        elif report.when == "call":
            if wasxfail is not None:
                p.outcome = "xpassed" if report.passed else "xfailed"
                p.message = p.result.message or _longrepr_text(report) or str(wasxfail)
            elif report.failed:
                p.outcome = "error" if p.result.kind in ERROR_KINDS else "failed"
                p.message = p.result.message or _longrepr_text(report)
            elif report.skipped:
                p.outcome, p.message = "skipped", _longrepr_text(report)
            else:
                p.outcome, p.message = "passed", ""
        elif report.when == "teardown":
            if report.failed:
                p.outcome = "error"
                p.message = (p.message + "\n" if p.message else "") + _longrepr_text(report)
            self._finish(report.nodeid)
        elif report.failed:
            # xdist's report for an item whose worker died (``when="???"``); no teardown follows.
            # The plugin's pytest_handlecrashitem attached the kind (crash or timeout).
            p.outcome = "failed"
            p.result = replace(p.result, kind=p.result.kind or Kind.CRASH)
            p.message = p.result.message or _longrepr_text(report)
            self._finish(report.nodeid)

    def _finish(self, nodeid: str) -> None:
        p = self.pending.pop(nodeid)
        self.records[nodeid] = build_record(
            nodeid,
            p.static or static_from_nodeid(nodeid),
            p.result,
            p.outcome or "error",
            p.message,
            p.duration,
            tuple(p.crashes),
        )

    def finalize(self, reason: str, started: str | None = None) -> list[Record]:
        """Every collected item's record; an item with no result gets an ``error`` record of
        kind ``no_result``: ``reason`` if it never started, ``started`` if it never finished."""
        for nodeid, p in list(self.pending.items()):
            if p.outcome is None:
                p.outcome, p.message = "error", started or reason
                p.result = replace(p.result, kind=Kind.NO_RESULT)
            self._finish(nodeid)
        order = self.collected if self.collected is not None else list(self.records)
        out = []
        for nodeid in order:
            rec = self.records.get(nodeid)
            if rec is None:
                static = self.static.get(nodeid) or static_from_nodeid(nodeid)
                rec = build_record(nodeid, static, ItemResult(kind=Kind.NO_RESULT), "error", reason)
            out.append(rec)
        listed = set(order)
        extra = [r for n, r in self.records.items() if n not in listed]
        return out + extra


_ITEM_NAME = re.compile(
    r"^(?P<case>[^\[]+)\[(?P<fw>[^-\]]+)-(?P<dtype>float\d+)-(?P<check>[^-\]]+)\]$"
)


def static_from_nodeid(nodeid: str) -> ItemStatic:
    """What a nodeid says of an item that never reported (an xdist controller never sees the
    items themselves): ``file::case[framework-dtype-check]``."""
    file, _, name = nodeid.partition("::")
    match = _ITEM_NAME.match(name)
    if not match:
        return ItemStatic(file=file)
    return ItemStatic(
        case=match["case"],
        file=file,
        framework=match["fw"],
        dtype=float_name(match["dtype"]),
        check=match["check"],
    )


def counts(records: Iterable[Record]) -> dict[str, int]:
    """Records per outcome, every outcome named (0 included)."""
    out: dict[str, int] = dict.fromkeys(OUTCOMES, 0)
    for rec in records:
        out[rec.outcome] += 1
    return out


def strict_json(value: Any) -> Any:
    """Replace NaN and ±inf (not valid JSON) by the strings "nan", "inf", "-inf"."""
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {str(k): strict_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [strict_json(v) for v in value]
    return value


def _encoded(value: Any) -> str:
    """``value`` as compact JSON by the C encoder; NaN and ±inf as :func:`strict_json` writes
    them (only values that hold one take that slower path)."""
    try:
        return json.dumps(value, allow_nan=False, default=str, separators=(",", ":"))
    except ValueError:
        return json.dumps(strict_json(value), allow_nan=False, default=str, separators=(",", ":"))


def _results_text(payload: dict) -> Iterator[str]:
    """A results payload as JSON: the run's header indented, one record per line (diffable,
    greppable, and written by the C encoder: an indented dump of a full run's 28,559 records
    took 5 s of the controller's time, with every item done)."""
    records = payload.get("records")
    if not isinstance(records, list):
        yield json.dumps(strict_json(payload), indent=1, allow_nan=False, default=str)
        return
    head = {k: v for k, v in payload.items() if k != "records"}
    yield json.dumps(strict_json(head), indent=1, allow_nan=False, default=str)[:-2]
    yield ',\n "records": [' if head else '{\n "records": ['
    for i, record in enumerate(records):
        yield ("\n  " if i == 0 else ",\n  ") + _encoded(record)
    yield "\n ]\n}" if records else "]\n}"


def write_atomic(path: str | Path, payload: dict) -> None:
    """Write JSON to a temporary file in the same directory, then rename it into place."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 would hide the file from CI artifact readers
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.writelines(_results_text(payload))
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_results(path: str | Path) -> dict:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def read_records(path: str | Path) -> list[Record]:
    """The records of a results.json (of this schema version or an earlier one)."""
    return [Record.from_json(r) for r in load_results(path)["records"]]
