"""Load results.json files and merge the shards of one run into a single set of records.

A CI job may split a run over several machines, each writing its own results.json; the report
must show them as one run. Records are concatenated (their nodeids must not overlap: the same
item twice means the shards were not a partition, and any count would be wrong), counts are
summed, and the run metadata keeps what each shard said where they differ.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.records.record import Record
from conformance.records.results import OUTCOMES
from conformance.records.results import counts as count_outcomes


class ResultsError(Exception):
    """A results file that cannot be read, or shards that cannot be merged."""


@dataclass(frozen=True)
class Shard:
    """One input file, the run metadata it carried, and its counts by outcome."""

    path: str
    run: dict
    records: int
    counts: dict[str, int]


@dataclass
class Results:
    """The records of one run (merged over its shards) and the run's metadata."""

    run: dict
    records: list[Record]
    shards: list[Shard] = field(default_factory=list)

    @property
    def merged(self) -> bool:
        return len(self.shards) > 1

    def incomplete(self) -> str | None:
        """What is missing when the inputs are shards (``--shard K/N``) but not all N of one
        split: a report of part of a run must say so, not pass for the whole."""
        split = [tuple(s.run["shard"]) for s in self.shards if _is_shard(s.run.get("shard"))]
        if not split:
            return None
        totals = sorted({n for _, n in split})
        if len(totals) > 1:
            return f"the inputs are shards of different splits (of {', '.join(map(str, totals))})"
        n = totals[0]
        missing = sorted(set(range(1, n + 1)) - {k for k, _ in split})
        if not missing:
            return None
        listed = ", ".join(f"{k}/{n}" for k, _ in sorted(set(split)))
        absent = ", ".join(f"{k}/{n}" for k in missing)
        return f"{n - len(missing)} of {n} shards given ({listed}); missing {absent}"


def _is_shard(value: object) -> bool:
    return (
        isinstance(value, list | tuple)
        and len(value) == 2
        and all(isinstance(v, int) for v in value)
    )


def read_results_file(path: str | Path) -> dict:
    """One results.json as a dict with ``run`` and ``records``; a clear error if it is not one."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ResultsError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ResultsError(f"{path}: not valid JSON: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("records"), list):
        raise ResultsError(f"{path}: not a results.json (expected an object with a 'records' list)")
    for i, rec in enumerate(data["records"]):
        if not isinstance(rec, dict) or not isinstance(rec.get("nodeid"), str):
            raise ResultsError(f"{path}: record {i} has no 'nodeid' string")
    run = data.get("run")
    return {"run": run if isinstance(run, dict) else {}, "records": data["records"]}


def load_results_files(paths: Sequence[str | Path]) -> Results:
    """Read and merge ``paths`` (one path: that run unchanged)."""
    if not paths:
        raise ResultsError("no results files given")
    return merge([(str(p), read_results_file(p)) for p in paths])


def merge(named: Sequence[tuple[str, dict]]) -> Results:
    """Merge ``(name, results)`` pairs, each as its file's JSON holds it, into typed records;
    duplicate nodeids are an error naming both sources."""
    seen: dict[str, str] = {}
    duplicates: list[tuple[str, str, str]] = []
    records: list[Record] = []
    shards: list[Shard] = []
    for name, data in named:
        run = data.get("run") or {}
        shard_records = [Record.from_json(r) for r in data.get("records") or []]
        counts = run.get("counts") if isinstance(run.get("counts"), dict) else None
        shards.append(Shard(name, run, len(shard_records), counts or count_outcomes(shard_records)))
        for rec in shard_records:
            nodeid = rec.nodeid
            if nodeid in seen:
                duplicates.append((nodeid, seen[nodeid], name))
            else:
                seen[nodeid] = name
            records.append(rec)
    if duplicates:
        nodeid, first, second = duplicates[0]
        where = f"in {first} and in {second}" if first != second else f"twice in {first}"
        raise ResultsError(
            f"duplicate nodeid {nodeid!r} {where} ({len(duplicates)} duplicate(s) in all); "
            "shards of one run must each hold different items — were the same shard, or two "
            "different runs, given?"
        )
    if len(shards) == 1:
        return Results({**shards[0].run, "counts": shards[0].counts}, records, shards)
    return Results(merge_runs(shards), records, shards)


def _distinct(values: Iterable[Any]) -> list[Any]:
    out: list[Any] = []
    for v in values:
        if v not in (None, "") and v not in out:
            out.append(v)
    return out


def _joined(runs: Sequence[dict], key: str) -> str | None:
    values = _distinct(str(r[key]) for r in runs if key in r)
    return " / ".join(values) if values else None


def merge_runs(shards: Sequence[Shard]) -> dict:
    """One run dict for several shards: counts summed, differing values joined with " / "."""
    runs = [s.run for s in shards]
    counts: dict[str, int] = dict.fromkeys(OUTCOMES, 0)
    for shard in shards:
        for outcome, n in shard.counts.items():
            counts[outcome] = counts.get(outcome, 0) + int(n)
    frameworks: dict[str, str] = {}
    for name in _distinct(k for r in runs for k in (r.get("frameworks") or {})):
        versions = _distinct(str((r.get("frameworks") or {}).get(name)) for r in runs)
        frameworks[name] = " / ".join(v for v in versions if v != "None")
    durations = [float(r["duration"]) for r in runs if _is_number(r.get("duration"))]
    started = sorted(str(r["started"]) for r in runs if r.get("started"))
    return {
        "frameworks": frameworks,
        "python": _joined(runs, "python"),
        "platform": _joined(runs, "platform"),
        "machine": _joined(runs, "machine"),
        "device": _joined(runs, "device"),
        "started": started[0] if started else None,
        "duration": max(durations) if durations else None,
        "duration_total": sum(durations) if durations else None,
        "commands": [str(r["command"]) for r in runs if r.get("command")],
        "workers": sum(int(r.get("workers") or 0) for r in runs),
        "case_roots": _distinct(root for r in runs for root in r.get("case_roots") or []),
        "env": {k: v for r in runs for k, v in (r.get("env") or {}).items()},
        "interrupted": any(bool(r.get("interrupted")) for r in runs),
        "exitstatus": max((int(r.get("exitstatus") or 0) for r in runs), default=0),
        "collected": sum(int(r.get("collected") or 0) for r in runs),
        "counts": counts,
        "not_offered": not_offered_of(runs),
    }


def not_offered_of(runs: Sequence[dict]) -> dict[str, list[dict[str, str]]]:
    """The run headers' ``not_offered`` as one (shards of a run say the same; the union, sorted,
    also reads a file written before the field)."""
    found: dict[str, dict[tuple[str, str, str], dict[str, str]]] = {}
    for run in runs:
        lacking = run.get("not_offered")
        for framework, entries in (lacking if isinstance(lacking, dict) else {}).items():
            for e in entries if isinstance(entries, list) else ():
                if isinstance(e, dict) and {"family", "parametrization", "reason"} <= e.keys():
                    key = (str(e["family"]), str(e["parametrization"]), str(e["reason"]))
                    found.setdefault(str(framework), {})[key] = {
                        "family": key[0],
                        "parametrization": key[1],
                        "reason": key[2],
                    }
    return {fw: [entries[k] for k in sorted(entries)] for fw, entries in sorted(found.items())}


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
