"""Which items a mutant killed, whether that is what the catalogue expects, and the kill table.

An item is *killed* when, in runs of the same selection, it fails (or errors) with the mutant
applied and did not fail without it — it passed, or it was a known failure that passed (XPASS)
or failed with the expected kind (xfailed; the mutant changed how it fails). Failures today's
frameworks already have are not the mutant's doing. Runs are non-strict, so an XPASS is an
outcome of its own and never counts as a kill. An item that passed without the mutant and is
xfailed with it failed too, but a known-failure entry matched its kind: it is counted as a kill
and marked ``masked`` (the registry would hide that regression in a normal run).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache

from conformance.mutants.base import Mutant
from conformance.records.record import Record

BASELINE_OK = frozenset({"passed", "xpassed", "xfailed"})
BASELINE_PASSED = frozenset({"passed", "xpassed"})
FAILING = frozenset({"failed", "error"})


@cache
def _glob(pattern: str) -> re.Pattern:
    """A glob where only ``*`` is special: item ids contain ``[`` and ``]`` literally."""
    return re.compile(".*".join(re.escape(part) for part in pattern.split("*")) + r"\Z")


def glob_match(pattern: str, nodeid: str) -> bool:
    """``pattern`` against an item id, wherever the run was started: an id is relative to the
    working directory (``cases/normal.yaml::…`` from the repository root, ``normal.yaml::…``
    from an installed copy or another directory), so ``*/normal.yaml::…`` matches either."""
    regex = _glob(pattern)
    return bool(regex.match(nodeid) or regex.match("/" + nodeid))


@dataclass(frozen=True)
class Kill:
    """An item the mutant killed: its record in the mutant's run, and its baseline outcome."""

    record: Record
    baseline: str
    #: Xfailed under the mutant: a known-failure entry would hide this regression.
    masked: bool = False

    @property
    def nodeid(self) -> str:
        return self.record.nodeid


@dataclass
class Verdict:
    """One mutant's outcome: its killed items and any expectation it did not meet."""

    mutant: Mutant
    selected: int = 0
    killed: list[Kill] = field(default_factory=list)
    already_failing: int = 0  # failing with and without the mutant: not counted
    problems: list[str] = field(default_factory=list)
    run_error: str | None = None

    @property
    def status(self) -> str:
        if self.run_error:
            return "error"
        if not self.killed:
            return "survived"
        return "killed" if not self.problems else "killed, unexpected"

    @property
    def ok(self) -> bool:
        return self.status == "killed"

    def by_check(self) -> Counter:
        return Counter(k.record.static.check or "?" for k in self.killed)

    def to_json(self) -> dict:
        m = self.mutant
        return {
            "name": m.name,
            "seed": m.seed,
            "title": m.title,
            "replicates": m.replicates,
            "link": m.link,
            "framework": m.framework,
            "selection": list(m.selection),
            "status": self.status,
            "selected": self.selected,
            "killed_count": len(self.killed),
            "already_failing": self.already_failing,
            "by_check": dict(sorted(self.by_check().items())),
            "problems": self.problems,
            "run_error": self.run_error,
            "killed": [
                {
                    "nodeid": k.nodeid,
                    "check": k.record.static.check,
                    "outcome": k.record.outcome,
                    "kind": k.record.kind,
                    "masked": k.masked,
                    "baseline": k.baseline,
                    "message": k.record.message,
                }
                for k in self.killed
            ],
        }


def symptom(message: str, limit: int = 6) -> list[str]:
    """A failure message without its source location lines, at most ``limit`` lines."""
    lines = [ln.strip() for ln in message.strip().splitlines() if ln.strip()]
    lines = [ln for ln in lines if not ln.startswith("at /")]
    return [ln[:240] for ln in lines[:limit]]


def _is_killer(mutant: Mutant, nodeid: str) -> bool:
    return any(glob_match(p, nodeid) for p in mutant.killers)


def judge(mutant: Mutant, mutated: Iterable[Record], baseline: Iterable[Record]) -> Verdict:
    """Compare a mutant run's records with the baseline run's, item by item."""
    before = {r.nodeid: r.outcome for r in baseline}
    verdict = Verdict(mutant)
    for record in mutated:
        verdict.selected += 1
        outcome, was = record.outcome, before.get(record.nodeid)
        if outcome in FAILING:
            if was is not None and was in BASELINE_OK:
                verdict.killed.append(Kill(record, was))
            else:
                verdict.already_failing += 1
        elif outcome == "xfailed" and was is not None and was in BASELINE_PASSED:
            verdict.killed.append(Kill(record, was, masked=True))
    verdict.problems = expectation_problems(mutant, verdict.killed)
    return verdict


def expectation_problems(mutant: Mutant, killed: list[Kill]) -> list[str]:
    """What the catalogue says must (not) be killed, and how, checked against ``killed``."""
    ids = [k.nodeid for k in killed]
    problems = []
    for pattern in mutant.killers:
        if not any(glob_match(pattern, i) for i in ids):
            problems.append(f"expected killer not killed: {pattern}")
    for pattern in mutant.spared:
        hit = [i for i in ids if glob_match(pattern, i)]
        if hit:
            problems.append(f"{len(hit)} item(s) matching {pattern} killed, e.g. {hit[0]}")
    if mutant.message is not None:
        # The upstream message must come from the items that reproduce the report.
        named = [k for k in killed if _is_killer(mutant, k.nodeid)]
        if not any(mutant.message in k.record.message for k in named or killed):
            problems.append(f"no killed item's message contains {mutant.message!r}")
    if mutant.kinds:
        # An item that was already a known failure (xfailed) fails under the mutant with its
        # own kind: the eager item of a case whose compiled evaluation is a known bug names the
        # part's kind, not eager_only. Its kill still counts; its kind proves nothing here.
        wrong = [k for k in killed if k.record.kind not in mutant.kinds and k.baseline != "xfailed"]
        if wrong:
            kinds = sorted({str(k.record.kind) for k in wrong})
            problems.append(
                f"{len(wrong)} killed item(s) of kind {kinds}, expected {[str(k) for k in mutant.kinds]}, "
                f"e.g. {wrong[0].nodeid}"
            )
    return problems


def table(verdicts: list[Verdict], show: int = 8) -> str:
    """The kill table: one summary row per mutant, then the killed items of each."""
    header = ("mutant", "seed", "status", "killed", "checks that killed it")
    rows = [
        (
            v.mutant.name,
            str(v.mutant.seed or "-"),
            v.status,
            f"{len(v.killed)}/{v.selected}",
            ", ".join(f"{c} {n}" for c, n in sorted(v.by_check().items())) or "-",
        )
        for v in verdicts
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in [header, *rows]
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    for v in verdicts:
        lines.append("")
        lines.append(f"{v.mutant.name}: {v.mutant.title}")
        lines.append(
            f"  replicates: {v.mutant.replicates}"
            + (f" ({v.mutant.link})" if v.mutant.link else "")
        )
        lines.append(f"  selection: {' '.join(v.mutant.selection)}")
        if v.run_error:
            lines.append(f"  RUN ERROR: {v.run_error}")
        ordered = sorted(v.killed, key=lambda k: not _is_killer(v.mutant, k.nodeid))
        shown = ordered if show <= 0 else ordered[:show]
        for kill in shown:
            masked = " masked by a known failure" if kill.masked else ""
            lines.append(f"  killed by {kill.nodeid}  [{kill.record.kind}]{masked}")
        if len(shown) < len(ordered):
            lines.append(f"  … and {len(ordered) - len(shown)} more (all in mutants.json)")
        if ordered:
            lines.append(f"  message of {ordered[0].nodeid}:")
            lines += [f"    {line}" for line in symptom(ordered[0].record.message)]
        for problem in v.problems:
            lines.append(f"  PROBLEM: {problem}")
    survived = [v.mutant.name for v in verdicts if not v.ok]
    lines.append("")
    lines.append(
        f"{len(verdicts) - len(survived)}/{len(verdicts)} mutants killed"
        + (f"; not killed as expected: {', '.join(survived)}" if survived else "")
    )
    return "\n".join(lines)
