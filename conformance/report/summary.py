"""The report header: what ran, where, with what, and how it went — from ``run`` alone.

Missing fields (an old results.json, a hand-made one) are left out rather than shown empty.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from conformance.records.results import OUTCOMES
from conformance.report.data import SEVERITY, distinct
from conformance.report.merge import Results
from conformance.report.values import as_float


@dataclass(frozen=True)
class ShardView:
    path: str
    records: int
    command: str
    counts: str


@dataclass
class RunView:
    title: str
    frameworks: list[tuple[str, str]]
    facts: list[tuple[str, str]]
    counts: list[tuple[str, int]]
    total: int
    commands: list[str]
    env: list[tuple[str, str]]
    shards: list[ShardView] = field(default_factory=list)
    interrupted: bool = False


def _duration(seconds: object) -> str | None:
    x = as_float(seconds)
    if x is None:
        return None
    if x < 120:
        return f"{x:.1f} s"
    return f"{int(x // 60)} min {x % 60:.0f} s"


def _counts_text(counts: dict) -> str:
    return ", ".join(f"{n} {k}" for k, n in counts.items() if n)


def ordered_counts(counts: dict) -> list[tuple[str, int]]:
    """Known outcomes in their usual order, then anything else a newer run reported."""
    keys = [k for k in OUTCOMES if k in counts] + sorted(k for k in counts if k not in OUTCOMES)
    return [(k, int(counts[k])) for k in keys if isinstance(counts[k], int | float)]


def run_view(results: Results) -> RunView:
    run = results.run
    counts = ordered_counts(run.get("counts") or {})
    worst = next((k for k in SEVERITY if dict(counts).get(k)), "passed")
    total = sum(n for _, n in counts)
    if not total:
        title = "Conformance: no items"
    else:
        verdict = _counts_text(dict(counts)) if worst != "passed" else "all passed"
        title = f"Conformance: {total} items, {verdict}"
    facts: list[tuple[str, str | None]] = [
        ("Python", run.get("python")),
        ("platform", run.get("platform")),
        ("machine", run.get("machine")),
        (
            "device",
            run.get("device") or ", ".join(distinct(r.static.device for r in results.records)),
        ),
        (
            "dtypes",
            ", ".join(
                d for d in distinct(r.static.dtype for r in results.records) if d != "(none)"
            ),
        ),
        ("started", run.get("started")),
        ("duration", _duration(run.get("duration"))),
        ("workers", str(run["workers"]) if run.get("workers") else None),
        ("case roots", ", ".join(str(r) for r in run.get("case_roots") or [])),
        ("exit status", str(run["exitstatus"]) if "exitstatus" in run else None),
        ("collected", str(run["collected"]) if "collected" in run else None),
    ]
    if results.merged:
        total_s = _duration(run.get("duration_total"))
        facts.insert(
            7,
            (
                "shards",
                f"{len(results.shards)} merged" + (f", {total_s} in all" if total_s else ""),
            ),
        )
    missing = results.incomplete()
    if missing:
        facts.insert(0, ("incomplete", f"this report covers part of a run: {missing}"))
    commands = list(run.get("commands") or ([run["command"]] if run.get("command") else []))
    shards = [
        ShardView(
            path=s.path,
            records=s.records,
            command=str(s.run.get("command") or ""),
            counts=_counts_text(s.counts),
        )
        for s in results.shards
    ]
    return RunView(
        title=title,
        frameworks=[(str(k), str(v)) for k, v in (run.get("frameworks") or {}).items()],
        facts=[(k, v) for k, v in facts if v],
        counts=counts,
        total=total,
        commands=commands,
        env=[(str(k), str(v)) for k, v in (run.get("env") or {}).items()],
        shards=shards if results.merged else [],
        interrupted=bool(run.get("interrupted")),
    )
