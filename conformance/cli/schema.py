"""``conformance schema``: the JSON Schema of the case file, or of results.json (``--results``)."""

from __future__ import annotations

import argparse
import json

from conformance.cli.command import Command
from conformance.cli.output import add_output_file, emit


def _arguments(parser: argparse.ArgumentParser) -> None:
    add_output_file(parser)
    parser.add_argument(
        "--results", action="store_true", help="results.json's schema instead of the case file's"
    )


def _run(ns: argparse.Namespace) -> int:
    from conformance.cases.case_model import json_schema
    from conformance.records.schema import results_schema

    schema = results_schema() if ns.results else json_schema()
    return emit(json.dumps(schema, indent=2, ensure_ascii=False) + "\n", ns.output)


COMMAND = Command(
    name="schema",
    help="export the case-file (or results.json) JSON Schema",
    arguments=_arguments,
    run=_run,
)
