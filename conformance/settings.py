"""The run's selection and settings, from pytest options, ini values and CONFORMANCE_* variables.

Command-line options win over environment variables, which win over ini values. The same
object serves collection (which items exist) and execution (device, adapters).
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import reference
from conformance.adapters import Adapter, all_adapters
from conformance.checks import CHECKS, OPT_IN
from conformance.dtypes import FLOAT_DTYPES
from conformance.validate import Known

if TYPE_CHECKING:
    from conformance.known_failures import Index

DEFAULT_RESULTS = "reports/results.json"


def split_list(values: list[str] | None) -> list[str]:
    """``["a,b", "c"]`` → ``["a", "b", "c"]``: options accept repeats and commas alike."""
    out = []
    for v in values or ():
        out.extend(part.strip() for part in v.split(",") if part.strip())
    return out


def env_list(name: str) -> list[str]:
    return split_list([os.environ.get(name, "")])


@dataclass
class Settings:
    case_roots: list[Path] = field(default_factory=list)
    frameworks: list[str] = field(default_factory=list)  # patterns; empty: all
    families: list[str] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)
    dtypes: list[str] = field(default_factory=list)
    device: str = "cpu"
    adapter_specs: tuple[str, ...] = ()
    results_path: Path | None = Path(DEFAULT_RESULTS)
    variants: bool = True
    property_examples: int = 0
    known_failure_files: list[Path] = field(default_factory=list)
    builtin_known_failures: bool = True
    strict_known_failures: bool = True
    shard: tuple[int, int] | None = None  # (k, n), 1-based k
    #: Robustness (see :mod:`conformance.robustness`): seconds per case item (None: none),
    #: each xdist worker's RLIMIT_DATA in bytes (None: none), the element cap of a case array.
    item_timeout: float | None = None
    worker_memory: int | None = None
    #: Resident-set size above which a process drops compiled-code caches between items
    #: (None: never; see :mod:`conformance.memory`).
    memory_budget: int | None = None
    max_elements: int | None = None
    #: Times an item that crashed its worker is run again on a fresh one (xdist only).
    crash_retries: int = 0

    @cached_property
    def known_failures(self) -> list:
        from conformance import known_failures

        files = (known_failures.builtin_files() if self.builtin_known_failures else []) + list(
            self.known_failure_files
        )
        return known_failures.load(files)

    @cached_property
    def known_failure_index(self) -> Index:
        """The entries that apply here, indexed for matching every collected item."""
        from conformance import known_failures

        return known_failures.Index(self.known_failures)

    @cached_property
    def adapters(self) -> dict[str, Adapter]:
        return all_adapters(self.adapter_specs)

    @cached_property
    def known(self) -> Known:
        return Known(
            frameworks=frozenset(self.adapters),
            checks=frozenset(CHECKS),
            max_elements=self.max_elements,
        )

    def selected_frameworks(self, listed: list[str] | None) -> list[str]:
        names = list(self.adapters) if listed is None else [n for n in listed if n in self.adapters]
        if not self.frameworks:
            return names
        return [n for n in names if any(fnmatch.fnmatchcase(n, p) for p in self.frameworks)]

    def selects_family(self, family: str) -> bool:
        return not self.families or any(fnmatch.fnmatchcase(family, p) for p in self.families)

    def selected_dtypes(self, listed: list[str]) -> list[str]:
        return [d for d in listed if not self.dtypes or d in self.dtypes]

    def selected_checks(self, listed: list[str] | None) -> list[str]:
        enabled = {"property"} if self.property_examples > 0 else set()
        names = [c for c in CHECKS if c not in OPT_IN or c in enabled] if listed is None else listed
        return [
            c
            for c in names
            if not self.checks or any(fnmatch.fnmatchcase(c, p) for p in self.checks)
        ]

    def problems(self) -> list[str]:
        """Selections that name nothing: a typo should not silently select zero items."""
        out = []
        for pattern in self.frameworks:
            if not any(fnmatch.fnmatchcase(n, pattern) for n in self.adapters):
                out.append(
                    f"--framework {pattern!r} matches no adapter ({', '.join(self.adapters)})"
                )
        for pattern in self.families:
            if not any(fnmatch.fnmatchcase(n, pattern) for n in reference.family_names()):
                out.append(f"--family {pattern!r} matches no family")
        for pattern in self.checks:
            if not any(fnmatch.fnmatchcase(n, pattern) for n in CHECKS):
                out.append(f"--check {pattern!r} matches no check ({', '.join(CHECKS)})")
        for d in self.dtypes:
            if d not in FLOAT_DTYPES:
                out.append(f"--dtype {d!r} is not one of {', '.join(FLOAT_DTYPES)}")
        if self.device not in ("cpu", "cuda"):
            out.append(f"--device {self.device!r} is not one of cpu, cuda")
        if self.shard is not None and not 1 <= self.shard[0] <= self.shard[1]:
            out.append(f"--shard {self.shard[0]}/{self.shard[1]}: K must be between 1 and N")
        try:
            _ = self.known_failures  # load now: a broken file is a usage error, not a crash
        except Exception as exc:
            out.append(f"known failures: {exc}")
        return out
