"""``conformance diff OLD NEW``: regressions, fixes, other changes, new and removed items between
two runs; ``--fail-on`` makes some of them fail (the comparing is
:mod:`conformance.report.commands`'s)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from conformance.cli.command import EXIT_USAGE, Command
from conformance.names import unknown_name
from conformance.report.commands import FAIL_ON


def _fail_on(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    for name in names:
        if name not in FAIL_ON:
            raise argparse.ArgumentTypeError(unknown_name("change", name, FAIL_ON, "is no"))
    return names


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("old", type=Path, help="results.json of the earlier run")
    parser.add_argument("new", type=Path, help="results.json of the later run")
    parser.add_argument("--html", type=Path, metavar="OUT", help="also write the diff as HTML")
    parser.add_argument(
        "--fail-on",
        metavar="WHAT",
        type=_fail_on,
        default=[],
        help="exit 1 when the diff has these changes (comma-separated): "
        + "; ".join(f"{k}: {v}" for k, v in FAIL_ON.items()),
    )


def _run(ns: argparse.Namespace) -> int:
    from conformance.report.commands import diff
    from conformance.report.merge import ResultsError

    try:
        return diff(ns.old, ns.new, ns.html, ns.fail_on)
    except ResultsError as exc:
        print(f"conformance diff: error: {exc}", file=sys.stderr)
        return EXIT_USAGE


COMMAND = Command(
    name="diff",
    help="compare two results.json: regressions, fixes, changes, new/removed items",
    description="List regressions (passed → failed/error), fixes (failed/error → passed), "
    "other outcome changes, and new and removed items. Exits 0 whatever changed, "
    "unless --fail-on names a kind of change that happened (then 1).",
    arguments=_arguments,
    run=_run,
)
