"""The shape every subcommand has, so that one table can list them and ``main`` dispatch to them.

A :class:`Command` fills its parser with its arguments and runs on the parsed namespace; a
:class:`ForwardingCommand` parses its own arguments, because most of them go on to pytest (or to
``conformance run``), and runs on the arguments after its name. Both return the exit status.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

#: Exit statuses: all good, mismatches, usage or case-file errors, interrupted (as a shell
#: reports a process ended by SIGINT).
EXIT_OK, EXIT_MISMATCH, EXIT_USAGE = 0, 1, 2
EXIT_INTERRUPTED = 130


def no_arguments(parser: argparse.ArgumentParser) -> None:
    """A subcommand that takes no argument of its own."""


@dataclass(frozen=True)
class Command:
    """A subcommand whose arguments ``main``'s parser parses: ``arguments`` fills its
    subparser, ``run`` gets the namespace."""

    name: str
    help: str
    run: Callable[[argparse.Namespace], int]
    arguments: Callable[[argparse.ArgumentParser], None] = no_arguments
    description: str | None = None


@dataclass(frozen=True)
class ForwardingCommand:
    """A subcommand that parses its own arguments (and passes the rest on): ``conformance
    --help`` lists it, ``run`` gets every argument after its name."""

    name: str
    help: str
    run: Callable[[list[str]], int]
    description: str | None = None


Subcommand = Command | ForwardingCommand
