"""``conformance triage``: known-failure entries drafted from a run's failing records (the
drafting is :mod:`conformance.known_failures.triage`'s)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from conformance.cli.command import EXIT_USAGE, Command
from conformance.cli.output import add_output_file, emit
from conformance.records.results import read_records


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "results", nargs="?", type=Path, default=Path("reports/results.json"),
        help="results.json of the run (default: reports/results.json)",
    )  # fmt: skip
    add_output_file(parser)


def _run(ns: argparse.Namespace) -> int:
    from conformance.known_failures.triage import draft_entries, render

    results: Path = ns.results
    try:
        records = read_records(results)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"conformance triage: cannot read {results}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    entries = draft_entries(records)
    code = emit(render(entries, str(results)), ns.output)
    if ns.output is not None:
        print(f"conformance triage: {len(entries)} draft entries in {ns.output}", file=sys.stderr)
    return code


COMMAND = Command(
    name="triage",
    help="draft known-failure entries from a run's failing records, grouped by symptom",
    description="One entry per family × framework × kind × symptom (the exception, the "
    "partial derivative) and set of checks × dtypes, case lists exact; each reason is a "
    "draft for a person to write.",
    arguments=_arguments,
    run=_run,
)
