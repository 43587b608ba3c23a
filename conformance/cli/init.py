"""``conformance init DIR``: the downstream example written into a repository (see
:mod:`conformance.commands.scaffold`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from conformance.cli.command import EXIT_OK, EXIT_USAGE, Command


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", nargs="?", type=Path, default=Path("."), help="default: here")
    parser.add_argument("--force", action="store_true", help="overwrite files that exist")


def _run(ns: argparse.Namespace) -> int:
    from conformance.commands import scaffold

    target: Path = ns.dir
    try:
        written = scaffold.scaffold(target, ns.force, scaffold.installed_commit())
    except FileExistsError as exc:
        print(f"conformance init: error: these exist (--force overwrites): {exc}", file=sys.stderr)
        return EXIT_USAGE
    for path in written:
        print(f"wrote {path}")
    print(f"\nRun them: {scaffold.run_command(target)}")
    return EXIT_OK


COMMAND = Command(
    name="init",
    help="write the downstream example into a repository: cases, known failures, a workflow",
    description="Write conformance/cases/, conformance/known_failures.yaml and "
    ".github/workflows/conformance.yml (pull requests --quick, nightly the full run; the "
    "reusable workflow pinned to the commit this suite was installed from) under DIR.",
    arguments=_arguments,
    run=_run,
)
