"""``conformance``: a thin front over the pytest plugin; ``main`` parses, dispatches to one
subcommand and returns its exit status.

The subcommands are listed in :mod:`conformance.cli.table`, one module each. ``conformance run
[pytest args]`` runs the suite and writes reports/results.json; exit codes: 0 all good, 1
mismatches, 2 usage or case-file errors.
"""

from __future__ import annotations

import argparse
import sys

from conformance.cli.command import EXIT_OK, EXIT_USAGE, Command, ForwardingCommand, Subcommand
from conformance.cli.table import subcommands


def version_line() -> str:
    """``conformance --version``: the suite's version and the frameworks it would test."""
    from conformance import __version__
    from conformance.adapters import reported_packages
    from conformance.versions import installed_version

    found = [
        f"{name} {v}" for name in reported_packages() if (v := installed_version(name)) is not None
    ]
    return f"conformance {__version__} ({', '.join(found) or 'no framework installed'})"


def build_parser(commands: dict[str, Subcommand]) -> argparse.ArgumentParser:
    """``conformance``'s parser: one subparser per command. A forwarding command's subparser
    only lists it in ``--help``; its own parser reads its arguments."""
    from conformance.names import SuggestingParser

    parser = SuggestingParser(prog="conformance", description="Distribution conformance suite.")
    parser.add_argument(
        "--version", action="store_true", help="print the version and the frameworks' versions"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for command in commands.values():
        if isinstance(command, ForwardingCommand):
            sub.add_parser(
                command.name, help=command.help, description=command.description, add_help=False
            )
        else:
            command.arguments(
                sub.add_parser(command.name, help=command.help, description=command.description)
            )
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--version"]:
        print(version_line())
        return EXIT_OK
    commands = subcommands()
    parser = build_parser(commands)
    if argv and not argv[0].startswith("-") and argv[0] not in commands:
        from conformance.names import unknown_name

        print(
            f"conformance: error: {unknown_name('command', argv[0], commands, 'is no')}",
            file=sys.stderr,
        )
        return EXIT_USAGE
    forwarding = commands.get(argv[0]) if argv else None
    if isinstance(forwarding, ForwardingCommand):
        return forwarding.run(argv[1:])
    ns = parser.parse_args(argv)
    command = commands[ns.command]
    assert isinstance(command, Command)
    return command.run(ns)
