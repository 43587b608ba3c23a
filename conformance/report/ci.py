"""What a CI job shows of a run: a Markdown job summary and one JUnit file for all shards.

Both are read from the merged records alone (``conformance report --summary/--junit``), so the
reusable workflow's report job writes them after merging its shards' results.json.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

from conformance.records.record import Record
from conformance.records.results import counts
from conformance.report.merge import Results

#: Outcomes that fail a run.
FAILING = ("failed", "error", "xpassed")
#: Failing items listed one by one under the table (the report has the rest).
LISTED = 25


def _first_line(text: object) -> str:
    return str(text or "").strip().splitlines()[0][:200] if text else ""


def summary_markdown(results: Results, artifact_url: str | None = None, title: str = "") -> str:
    """Counts, failures by family × framework, the first failing items, and the report link."""
    total = counts(results.records)
    heading = ", ".join(f"{n:,} {o}" for o, n in total.items() if n) or "no items"
    lines = [f"## Conformance{f' ({title})' if title else ''}: {heading}", ""]
    versions = results.run.get("frameworks") or {}
    shown = ", ".join(f"{k} {v}" for k, v in versions.items() if v and v != "not installed")
    if shown:
        lines += [f"Frameworks: {shown}", ""]
    incomplete = results.incomplete()
    if incomplete:
        lines += [f"**Incomplete:** {incomplete}", ""]
    failing = [r for r in results.records if r.outcome in FAILING]
    if failing:
        cells = Counter((r.static.family or "(file)", r.static.framework or "—") for r in failing)
        frameworks = sorted({fw for _, fw in cells})
        lines += ["### Failures by family × framework", ""]
        lines += ["| family | " + " | ".join(frameworks) + " |"]
        lines += ["|---|" + "---|" * len(frameworks)]
        for family in sorted({f for f, _ in cells}):
            row = [str(cells.get((family, fw), "")) for fw in frameworks]
            lines.append(f"| {family} | " + " | ".join(row) + " |")
        lines += ["", f"### Failing items ({len(failing)})", ""]
        for r in failing[:LISTED]:
            kind = f"[{r.kind}] " if r.kind else ""
            lines.append(f"- `{r.nodeid}` ({r.outcome}): {kind}{_first_line(r.message)}")
        if len(failing) > LISTED:
            lines.append(f"- … and {len(failing) - LISTED} more in the report")
        lines.append("")
    else:
        lines += ["No failures.", ""]
    if artifact_url:
        lines += [
            f"Report: [index.html, results.json, junit.xml and reproducers]({artifact_url})",
            "",
        ]
    return "\n".join(lines)


def junit_xml(results: Results) -> str:
    """One JUnit document for every shard's records: a testsuite per case file."""
    by_file: dict[str, list[Record]] = {}
    for record in results.records:
        by_file.setdefault(record.static.file or "(unknown)", []).append(record)
    root = ET.Element("testsuites", name="conformance")
    for file, records in by_file.items():
        tally = counts(records)
        suite = ET.SubElement(
            root,
            "testsuite",
            name=file,
            tests=str(len(records)),
            failures=str(tally["failed"] + tally["xpassed"]),
            errors=str(tally["error"]),
            skipped=str(tally["skipped"] + tally["xfailed"]),
            time=f"{sum(r.duration or 0 for r in records):.3f}",
        )
        for record in records:
            case = ET.SubElement(
                suite,
                "testcase",
                classname=file,
                name=record.nodeid.split("::", 1)[-1],
                time=f"{record.duration or 0:.3f}",
            )
            outcome, message = record.outcome, record.message
            tag = {"failed": "failure", "xpassed": "failure", "error": "error"}.get(outcome)
            if tag:
                ET.SubElement(case, tag, message=_first_line(message), type=record.kind or outcome).text = message  # fmt: skip
            elif outcome in ("skipped", "xfailed"):
                ET.SubElement(case, "skipped", message=_first_line(message) or str(outcome))
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write(path: Path, text: str, append: bool = False) -> None:
    """``text`` to ``path`` (appended: GitHub's job summary file is shared by a job's steps)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a" if append else "w", encoding="utf-8") as out:
        out.write(text)
