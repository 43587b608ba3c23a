"""``conformance coverage``: every shipped distribution class and whether items build it (the
work is :mod:`conformance.commands.coverage`'s)."""

from __future__ import annotations

import argparse
import json

from conformance.cli.command import Command
from conformance.cli.output import add_output_file, emit


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format", choices=("text", "json", "markdown"), default="text", help="output format"
    )
    add_output_file(parser)


def _run(ns: argparse.Namespace) -> int:
    from conformance.adapters import all_adapters
    from conformance.cases.builtin import builtin_cases
    from conformance.cases.loader import find_case_files
    from conformance.commands.coverage import (
        as_json,
        coverage,
        load_exclusions,
        method_plan,
        render_markdown,
        render_text,
    )
    from conformance.plan.not_offered import not_offered
    from conformance.plan.planner import plan
    from conformance.run.config.settings import Settings, parse_options

    settings = Settings.from_sources(parse_options([f"--cases={builtin_cases()}"])[0], {})
    lacking = not_offered(settings.selection, find_case_files(builtin_cases())).names()
    found = coverage(
        all_adapters(),
        plan(settings.selection),
        load_exclusions(),
        lacking,
        method_specs=method_plan(builtin_cases()),
    )
    if ns.format == "json":
        text = json.dumps(as_json(found), indent=2) + "\n"
    elif ns.format == "markdown":
        text = render_markdown(found)
    else:
        text = render_text(found)
    return emit(text, ns.output)


COMMAND = Command(
    name="coverage",
    help="every distribution class the installed frameworks ship, covered or not, and why",
    description="Each installed framework's public distribution classes (its adapter's "
    "declaration) with their status: covered (the families, checks and item counts of "
    "the default run that build it), excluded (with the reason in the registry's "
    "coverage.yaml) or missing (no family builds it yet).",
    arguments=_arguments,
    run=_run,
)
