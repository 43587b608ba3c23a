"""What the plan reads of a run: the items it selects, apart from how the run executes them.

The runner builds one :class:`Selection` from its settings
(:attr:`conformance.run.config.settings.Settings.selection`); the planner, the listing, the
bench baseline and the coverage command read nothing else of the run.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from conformance.adapters import Adapter
from conformance.cases.validate import Known
from conformance.check_names import CheckName
from conformance.checks import CHECKS, OPT_IN
from conformance.operations import Operation

if TYPE_CHECKING:
    from conformance.known_failures.entries import Index


@dataclass(frozen=True)
class Selection:
    """Which case files, frameworks, families, dtypes and checks a run plans, with what it
    derives (variants, edges), ``--quick`` and ``--shard``. Patterns are globs; an empty
    tuple selects everything."""

    #: The case roots a plan reads when it is given no paths.
    case_roots: tuple[Path, ...]
    #: The run's adapters by framework name.
    adapters: Mapping[str, Adapter]
    #: What case files are validated against (frameworks, checks, the element cap).
    known: Known
    #: The known-failure entries each check item is matched to.
    known_failures: Index
    frameworks: tuple[str, ...] = ()
    families: tuple[str, ...] = ()
    checks: tuple[str, ...] = ()
    dtypes: tuple[str, ...] = ()
    #: Whether the opt-in ``property`` check runs (``--property`` with examples).
    property_checks: bool = False
    #: The opt-in operations the run turns on.
    opted_in: frozenset[Operation] = frozenset()
    device: str = "cpu"
    variants: bool = True
    edges: bool = True
    bulk_edges: bool = False
    quick: bool = False
    #: ``--shard K/N`` (1-based K), or None for every item.
    shard: tuple[int, int] | None = None

    def selected_frameworks(self, listed: list[str] | None) -> list[str]:
        """The frameworks of ``listed`` (a case's ``frameworks:``; None: every adapter) that
        the run has an adapter for and its patterns select."""
        names = list(self.adapters) if listed is None else [n for n in listed if n in self.adapters]
        if not self.frameworks:
            return names
        return [n for n in names if any(fnmatch.fnmatchcase(n, p) for p in self.frameworks)]

    def selects_family(self, family: str) -> bool:
        return not self.families or any(fnmatch.fnmatchcase(family, p) for p in self.families)

    def selected_dtypes(self, listed: list[str]) -> list[str]:
        return [d for d in listed if not self.dtypes or d in self.dtypes]

    def selected_checks(self, listed: list[str] | None) -> list[CheckName]:
        """The checks of ``listed`` (a case's ``checks:``, validated; None: every check but the
        opt-in ones this run does not turn on) that the run's ``--check`` patterns select.

        An opt-in check runs when ``--check`` names it exactly (``property`` also with
        ``--property N``)."""
        enabled = {CheckName.PROPERTY} if self.property_checks else set()
        enabled |= {c for c in OPT_IN if c in self.checks}
        names = (
            [c for c in CHECKS if c not in OPT_IN or c in enabled]
            if listed is None
            else [CheckName(c) for c in listed]
        )
        return [
            c
            for c in names
            if not self.checks or any(fnmatch.fnmatchcase(c, p) for p in self.checks)
        ]
