"""``conformance report``: the HTML report (and reproducer scripts) rendered from results.json
or its shards (the rendering is :mod:`conformance.report.commands`'s)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from conformance.cli.command import EXIT_USAGE, Command


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", nargs="+", type=Path, help="results.json (or its shards)")
    parser.add_argument(
        "-o", "--output", type=Path, help="HTML file (default: index.html beside the first input)"
    )
    parser.add_argument(
        "--junit", type=Path, metavar="PATH", help="also write one JUnit XML of every record"
    )
    parser.add_argument(
        "--summary",
        type=Path,
        metavar="PATH",
        help="append a Markdown summary (counts, failures by family × framework), e.g. to "
        "$GITHUB_STEP_SUMMARY",
    )
    parser.add_argument("--artifact-url", metavar="URL", help="the summary's link to the report")
    parser.add_argument("--title", default="", help="the summary's title (e.g. the Python version)")


def _run(ns: argparse.Namespace) -> int:
    from conformance.report.commands import ci_files, report
    from conformance.report.merge import ResultsError

    try:
        code = report(ns.results, ns.output)
        ci_files(ns.results, ns.junit, ns.summary, ns.artifact_url, ns.title)
        return code
    except ResultsError as exc:
        print(f"conformance report: error: {exc}", file=sys.stderr)
        return EXIT_USAGE


COMMAND = Command(
    name="report",
    help="render the HTML report (and reproducer scripts) from results.json",
    description="Render index.html from results.json alone. Several files are the shards "
    "of one run: their records are merged (a nodeid in two shards is an error) and their "
    "counts summed. Reproducer scripts go to reproducers/ beside the HTML.",
    arguments=_arguments,
    run=_run,
)
