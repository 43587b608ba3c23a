"""Every ``conformance`` subcommand, in the order ``conformance --help`` lists them.

The suite's own commands are one module each in this package; an adapter brings its own
(NumPyro's ``jax-cache``) through ``RunnerHooks.commands()``, and they are listed here alike.
"""

from __future__ import annotations

from conformance.cli import (
    bench,
    calibrate,
    conventions,
    coverage,
    diff,
    edges,
    init,
    list_items,
    mutants,
    report,
    run,
    schema,
    triage,
)
from conformance.cli.command import Command, Subcommand

#: The suite's own commands; the adapters' come after ``edges``.
BEFORE_ADAPTERS: tuple[Subcommand, ...] = (
    run.COMMAND,
    list_items.COMMAND,
    mutants.COMMAND,
    calibrate.COMMAND,
    bench.COMMAND,
    schema.COMMAND,
    conventions.COMMAND,
    coverage.COMMAND,
    triage.COMMAND,
    edges.COMMAND,
)
AFTER_ADAPTERS: tuple[Subcommand, ...] = (init.COMMAND, report.COMMAND, diff.COMMAND)


def adapter_commands() -> tuple[Command, ...]:
    """The subcommands the built-in adapters bring (NumPyro's ``jax-cache``)."""
    from conformance.adapters import BUILTIN

    return tuple(
        Command(c.name, c.help, c.run, c.arguments, c.description)
        for adapter in BUILTIN
        for c in adapter.commands()
    )


def subcommands() -> dict[str, Subcommand]:
    """Every subcommand by name, in ``--help``'s order."""
    listed = (*BEFORE_ADAPTERS, *adapter_commands(), *AFTER_ADAPTERS)
    return {c.name: c for c in listed}
