"""Write index.html and the reproducer scripts next to a results.json.

Used after every run by the plugin and by ``conformance report``. The report is rendered from
the results *file*, never from the run's memory, so what a run shows is exactly what
``conformance report results.json`` rebuilds later.
"""

from __future__ import annotations

import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from conformance.report.merge import load_results_files
from conformance.report.reproducers import DIRNAME, write_reproducers

INDEX = "index.html"


@dataclass(frozen=True)
class Published:
    html: Path
    reproducers: dict[str, Path]
    #: What is missing when the inputs were shards but not all of one split (else None).
    incomplete: str | None = None


def publish(results_paths: Sequence[str | Path], out: str | Path | None = None) -> Published:
    """Render ``results_paths`` (one run, or its shards) to ``out`` (default: index.html beside
    the first results file) and its reproducers to ``reproducers/`` beside ``out``."""
    from conformance.report.html import render_report, write_text_atomic

    results = load_results_files(results_paths)
    html_path = Path(out) if out is not None else Path(results_paths[0]).parent / INDEX
    written = write_reproducers(results.records, html_path.parent / DIRNAME)
    hrefs = {nodeid: f"{DIRNAME}/{path.name}" for nodeid, path in written.items()}
    write_text_atomic(html_path, render_report(results, hrefs))
    return Published(html_path, written, results.incomplete())


def publish_after_run(results_path: str | Path) -> list[str]:
    """What the plugin calls after writing results.json: never raises (results.json is already
    safe on disk, and a report is not worth failing a run over); returns lines to print."""
    try:
        published = publish([results_path])
    except Exception as exc:
        where = traceback.extract_tb(exc.__traceback__)[-1:]
        at = f" (at {where[0].filename}:{where[0].lineno})" if where else ""
        return [
            f"conformance: WARNING: could not write the HTML report: "
            f"{type(exc).__name__}: {exc}{at}; {results_path} is complete — rerun "
            f"`conformance report {results_path}` to retry"
        ]
    lines = [f"conformance report: {published.html}"]
    if published.reproducers:
        lines.append(
            f"conformance reproducers: {len(published.reproducers)} scripts in "
            f"{published.html.parent / DIRNAME}"
        )
    return lines
