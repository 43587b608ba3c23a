"""What changed between two runs: regressions, fixes, other outcome changes, new and removed items.

Items are matched by nodeid, which is stable across runs (case id, framework, dtype, check).
A regression is an item that passed and now fails or errors; a fix is the reverse; any other
change of outcome (skipped → failed, xfailed → xpassed, …) is listed apart, so that a framework
upgrade's effect can be read at a glance.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from conformance.records.record import Record
from conformance.report.data import summary_line
from conformance.report.merge import Results

BAD = ("failed", "error")


@dataclass(frozen=True)
class Change:
    nodeid: str
    old: str | None  # outcome before (None: the item is new)
    new: str | None  # outcome after (None: the item was removed)
    kind: str
    summary: str


@dataclass
class Diff:
    old_label: str
    new_label: str
    regressions: list[Change] = field(default_factory=list)
    fixes: list[Change] = field(default_factory=list)
    changed: list[Change] = field(default_factory=list)
    new: list[Change] = field(default_factory=list)
    removed: list[Change] = field(default_factory=list)
    unchanged: int = 0

    def sections(self) -> Iterator[tuple[str, str, list[Change]]]:
        """(id, title, changes) in the order people want to read them."""
        yield "regressions", "Regressions (passed → failed/error)", self.regressions
        yield "fixes", "Fixes (failed/error → passed)", self.fixes
        yield "changed", "Other outcome changes", self.changed
        yield "new", "New items", self.new
        yield "removed", "Removed items", self.removed


def _change(nodeid: str, old: Record | None, new: Record | None) -> Change:
    shown = new if new is not None else old
    assert shown is not None
    return Change(
        nodeid=nodeid,
        old=None if old is None else old.outcome,
        new=None if new is None else new.outcome,
        kind=shown.kind or "",
        summary=summary_line(shown),
    )


def diff_results(old: Results, new: Results, old_label: str, new_label: str) -> Diff:
    before = {rec.nodeid: rec for rec in old.records}
    after = {rec.nodeid: rec for rec in new.records}
    out = Diff(old_label, new_label)
    for nodeid, rec in after.items():
        prev = before.get(nodeid)
        if prev is None:
            out.new.append(_change(nodeid, None, rec))
            continue
        was, now = prev.outcome, rec.outcome
        if was == now:
            out.unchanged += 1
        elif was == "passed" and now in BAD:
            out.regressions.append(_change(nodeid, prev, rec))
        elif was in BAD and now == "passed":
            out.fixes.append(_change(nodeid, prev, rec))
        else:
            out.changed.append(_change(nodeid, prev, rec))
    out.removed = [_change(n, rec, None) for n, rec in before.items() if n not in after]
    return out


def failing_changes(diff: Diff, fail_on: Iterable[str]) -> dict[str, int]:
    """How many changes of each ``--fail-on`` category (see
    :data:`conformance.report.commands.FAIL_ON`) the diff has; only non-zero ones."""
    counts = {
        "regression": len(diff.regressions),
        "new-failure": sum(c.new in BAD for c in diff.new),
        "removed": len(diff.removed),
        "changed": len(diff.regressions) + len(diff.changed),
    }
    return {name: counts[name] for name in fail_on if counts[name]}


def _line(change: Change) -> str:
    arrow = f"{change.old or '(new)'} → {change.new or '(removed)'}"
    tail = f"  [{change.kind}] {change.summary}" if change.kind or change.summary else ""
    return f"  {change.nodeid}: {arrow}{tail}".rstrip()


def diff_text(diff: Diff) -> str:
    """Plain text for a terminal or a CI log."""
    lines = [f"conformance diff: {diff.old_label} → {diff.new_label}"]
    counts = ", ".join(f"{len(changes)} {name}" for name, _, changes in diff.sections())
    lines.append(f"{counts}, {diff.unchanged} unchanged")
    for _, title, changes in diff.sections():
        lines.append("")
        lines.append(f"{title}: {len(changes)}")
        lines.extend(_line(c) for c in changes)
    return "\n".join(lines) + "\n"


def diff_html(diff: Diff) -> str:
    """A static page (no script at all) with the same sections as :func:`diff_text`."""
    from markupsafe import Markup

    from conformance.report.html import asset, environment

    template = environment().get_template("diff.html.j2")
    return template.render(diff=diff, style=Markup(asset("report.css")))
