"""The suite's own hooks into an adapter, apart from the public core: what the runner, the CLI
and the benchmark ask of a framework around the items.

Every hook has a default that does nothing, so a third-party adapter needs none of them; the
built-in ones use them for what a framework keeps between runs (NumPyro's JAX caches) and what
a run reports. Not part of the stable surface (:mod:`conformance.adapters.api`).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class Command:
    """A ``conformance`` subcommand a framework's adapter brings (NumPyro's cache pruning for
    CI caches): its parser is filled by ``arguments``, ``run`` gets the parsed namespace and
    returns the exit status."""

    name: str
    help: str
    description: str
    arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


class RunnerHooks:
    """What the runner, the CLI and the benchmark ask of a framework, each with a default."""

    #: Installed distributions whose versions a run reports (results.json's ``frameworks``,
    #: the report header, ``conformance --version``), the framework's own and what it runs on.
    reported_packages: ClassVar[tuple[str, ...]] = ()
    #: Modules a user's program imports to use the framework (the benchmark times their import
    #: in a fresh interpreter).
    imported_modules: ClassVar[tuple[str, ...]] = ()

    # ----- the run around the items (class-level: no instance, no framework import) --------
    @classmethod
    def after_run(cls, started: float) -> None:
        """On the controller, once xdist workers ran items: e.g. share what each worker
        cached with the others, so the next run starts warm everywhere. ``started``: the run's
        start (``time.time()``). Nothing, for a framework that keeps nothing between runs."""
        return None

    @classmethod
    def commands(cls) -> tuple[Command, ...]:
        """The ``conformance`` subcommands this framework brings."""
        return ()

    @classmethod
    def fresh_cache_environment(cls, directory: str) -> dict[str, str]:
        """Variables that give a run an empty compilation cache under ``directory``
        (``conformance bench --cold``); empty where the framework keeps none between runs."""
        return {}

    def release_caches(self) -> None:
        """Drop the compiled code the framework keeps between calls (see :mod:`conformance.run.worker.memory`).

        Called between items when a worker outgrows its memory budget; most frameworks keep
        nothing worth dropping.
        """
        return None
