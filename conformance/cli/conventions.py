"""``conformance conventions``: the registry's framework conventions as Markdown
(docs/conventions.md is its output)."""

from __future__ import annotations

import argparse

from conformance.cli.command import Command
from conformance.cli.output import add_output_file, emit


def _run(ns: argparse.Namespace) -> int:
    from conformance.commands.conventions_page import render

    return emit(render(), ns.output)


COMMAND = Command(
    name="conventions",
    help="the registry's framework conventions as Markdown (docs/conventions.md)",
    arguments=add_output_file,
    run=_run,
)
