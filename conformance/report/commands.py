"""``conformance report`` and ``conformance diff``: fronts over publish and diff.

Kept apart from ``conformance.cli`` so the CLI only wires subcommands; nothing heavy (jinja2,
the templates) is imported until one of these commands runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

EXIT_OK, EXIT_USAGE = 0, 2
COMMANDS = ("report", "diff")


def add_parsers(sub: argparse._SubParsersAction) -> None:
    report = sub.add_parser(
        "report",
        help="render the HTML report (and reproducer scripts) from results.json",
        description="Render index.html from results.json alone. Several files are the shards "
        "of one run: their records are merged (a nodeid in two shards is an error) and their "
        "counts summed. Reproducer scripts go to reproducers/ beside the HTML.",
    )
    report.add_argument("results", nargs="+", type=Path, help="results.json (or its shards)")
    report.add_argument(
        "-o", "--output", type=Path, help="HTML file (default: index.html beside the first input)"
    )
    diff = sub.add_parser(
        "diff",
        help="compare two results.json: regressions, fixes, changes, new/removed items",
        description="List regressions (passed → failed/error), fixes (failed/error → passed), "
        "other outcome changes, and new and removed items. Exits 0 whatever changed.",
    )
    diff.add_argument("old", type=Path, help="results.json of the earlier run")
    diff.add_argument("new", type=Path, help="results.json of the later run")
    diff.add_argument("--html", type=Path, metavar="OUT", help="also write the diff as HTML")


def run_command(ns: argparse.Namespace) -> int:
    from conformance.report.merge import ResultsError

    try:
        if ns.command == "report":
            return _report(ns.results, ns.output)
        return _diff(ns.old, ns.new, ns.html)
    except ResultsError as exc:
        print(f"conformance {ns.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE


def _report(paths: list[Path], output: Path | None) -> int:
    from conformance.report.publish import publish
    from conformance.report.reproducers import DIRNAME

    published = publish(paths, output)
    print(f"wrote {published.html}")
    if published.reproducers:
        print(
            f"wrote {len(published.reproducers)} reproducer scripts to {published.html.parent / DIRNAME}"
        )
    return EXIT_OK


def _diff(old: Path, new: Path, html: Path | None) -> int:
    from conformance.report.diff import diff_html, diff_results, diff_text
    from conformance.report.merge import load_results_files

    result = diff_results(load_results_files([old]), load_results_files([new]), str(old), str(new))
    sys.stdout.write(diff_text(result))
    if html is not None:
        from conformance.report.html import write_text_atomic

        write_text_atomic(html, diff_html(result))
        print(f"wrote {html}")
    return EXIT_OK
