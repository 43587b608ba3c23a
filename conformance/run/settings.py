"""The run's selection and settings, from pytest options, ini values and CONFORMANCE_* variables.

Command-line options win over environment variables, which win over ini values. The same
object serves collection (which items exist) and execution (device, adapters).
"""

from __future__ import annotations

import argparse
import fnmatch
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conformance import reference
from conformance.adapters import Adapter, AdapterLoadError, all_adapters
from conformance.cases.validate import Known
from conformance.checks import CHECKS, NON_CHECK_ITEMS, OPT_IN
from conformance.dtypes import FLOAT_DTYPES
from conformance.names import unmatched_pattern
from conformance.operations import Operation
from conformance.run import memory, robustness
from conformance.run.arguments import builtin_cases
from conformance.run.options import DEFAULT_RESULTS, add_options, env_list, split_list

if TYPE_CHECKING:
    from conformance.records.known_failures import Index


def parse_options(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    """The run's options from ``argv`` without pytest: (options, arguments not recognised)."""
    parser = argparse.ArgumentParser(add_help=False)
    add_options(parser.add_argument)
    return parser.parse_known_args(argv)


class SettingsError(ValueError):
    """An option or variable whose value cannot be used (a usage error: exit 2)."""


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
    #: ``--edges``: see :mod:`conformance.cases.edges` (on by default).
    edges: bool = True
    property_examples: int = 0
    known_failure_files: list[Path] = field(default_factory=list)
    builtin_known_failures: bool = True
    strict_known_failures: bool = True
    shard: tuple[int, int] | None = None  # (k, n), 1-based k
    #: ``--quick``: see :func:`conformance.run.plan.quick_selection`.
    quick: bool = False
    #: Opt-in operations to run where an adapter offers them only on request (names).
    opt_in: list[str] = field(default_factory=list)
    #: Robustness (see :mod:`conformance.run.robustness`): seconds per case item (None: none),
    #: each xdist worker's RLIMIT_DATA in bytes (None: none), the element cap of a case array.
    item_timeout: float | None = None
    worker_memory: int | None = None
    #: Resident-set size above which a process drops compiled-code caches between items
    #: (None: never; see :mod:`conformance.run.memory`).
    memory_budget: int | None = None
    max_elements: int | None = None
    #: Times an item that crashed its worker is run again on a fresh one (xdist only).
    crash_retries: int = 0

    @classmethod
    def from_sources(
        cls, opt: Any, env: Mapping[str, str], ini_roots: list[Path] | None = None
    ) -> Settings:
        """The settings of a run: command-line options (``opt``, as parsed by the plugin's
        options), then ``CONFORMANCE_*`` variables in ``env``, then ini values.

        Raises :class:`SettingsError` for a value that cannot be used.
        """

        def given(name: str, var: str) -> str | None:
            value = getattr(opt, name, None)
            return value if value is not None else env.get(var) or None

        def listed(name: str, var: str) -> list[str]:
            return split_list(getattr(opt, name, None)) or env_list(var, env)

        roots = [Path(p).resolve() for p in split_list(opt.cases)]
        roots += [Path(p).resolve() for p in env_list("CONFORMANCE_CASES", env)]
        roots += [Path(p).resolve() for p in ini_roots or ()]
        if getattr(opt, "builtin_cases", False) or env.get("CONFORMANCE_BUILTIN_CASES") in (
            "1",
            "true",
            "on",
        ):
            roots.append(builtin_cases().resolve())
        roots = list(dict.fromkeys(roots))  # a root named twice is read once
        results = given("results", "CONFORMANCE_RESULTS") or DEFAULT_RESULTS
        examples = given("property", "CONFORMANCE_PROPERTY")
        try:
            property_examples = int(examples or 0)
        except ValueError:
            raise SettingsError(f"--property {examples!r}: expected a count, e.g. 20") from None
        return cls(
            case_roots=roots,
            frameworks=listed("framework", "CONFORMANCE_FRAMEWORKS"),
            families=listed("family", "CONFORMANCE_FAMILIES"),
            checks=listed("check", "CONFORMANCE_CHECKS"),
            dtypes=listed("dtype", "CONFORMANCE_DTYPES"),
            device=given("device", "CONFORMANCE_DEVICE") or "cpu",
            adapter_specs=tuple(split_list(opt.adapter) + env_list("CONFORMANCE_ADAPTERS", env)),
            results_path=None if opt.no_results else Path(results),
            variants=(given("variants", "CONFORMANCE_VARIANTS") or "on") == "on",
            edges=(given("edges", "CONFORMANCE_EDGES") or "on") == "on",
            property_examples=property_examples,
            known_failure_files=[
                Path(p)
                for p in split_list(opt.known_failures)
                + env_list("CONFORMANCE_KNOWN_FAILURES", env)
            ],
            builtin_known_failures=not opt.no_builtin_known_failures,
            strict_known_failures=(
                opt.strict_known_failures if opt.strict_known_failures is not None else True
            ),
            shard=parse_shard(given("shard", "CONFORMANCE_SHARD")),
            quick=bool(getattr(opt, "quick", None)) or env.get("CONFORMANCE_QUICK") == "1",
            opt_in=listed("opt_in", "CONFORMANCE_OPT_IN")
            + (["jit"] if env.get("CONFORMANCE_TORCH_COMPILE") == "1" else []),
            **_robustness(given),
        )

    @property
    def all_known_failure_files(self) -> list[Path]:
        """The suite's own known-failure files (unless switched off), then the user's."""
        from conformance.records import known_failures

        builtin = known_failures.builtin_files() if self.builtin_known_failures else []
        return builtin + list(self.known_failure_files)

    @cached_property
    def known_failures(self) -> list:
        """Every entry of the run's known-failure files, its names checked against the
        families, adapters, checks and dtypes this run knows."""
        from conformance.records import known_failures

        vocabulary = known_failures.Vocabulary(
            families=frozenset(reference.family_names()),
            frameworks=frozenset(self.adapters),
            checks=frozenset(CHECKS) | NON_CHECK_ITEMS,
            dtypes=frozenset(FLOAT_DTYPES),
        )
        return known_failures.load(self.all_known_failure_files, vocabulary)

    @cached_property
    def known_failure_index(self) -> Index:
        """The entries that apply here, indexed for matching every collected item."""
        from conformance.records import known_failures

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

    @cached_property
    def opted_in(self) -> frozenset[Operation]:
        """The opt-in operations this run turns on (unknown names are :meth:`problems`)."""
        return frozenset(Operation(n) for n in self.opt_in if n in Operation.__members__.values())

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
        try:
            adapters = list(self.adapters)
        except AdapterLoadError as exc:  # a misspelt --adapter: a usage error, not a crash
            return [f"--adapter: {exc}"]
        out = []
        selections = (
            ("--framework", "adapter", self.frameworks, adapters),
            ("--family", "family", self.families, reference.family_names()),
            ("--check", "check", self.checks, list(CHECKS)),
            ("--dtype", "dtype", self.dtypes, list(FLOAT_DTYPES)),
        )
        for option, what, patterns, known in selections:
            for pattern in patterns:
                problem = unmatched_pattern(what, pattern, known)
                if problem:
                    out.append(f"{option} {problem}")
        for name in self.opt_in:
            if name not in Operation.__members__.values():
                out.append(f"--opt-in {name!r} is not one of {', '.join(Operation)}")
        if self.device not in ("cpu", "cuda"):
            out.append(f"--device {self.device!r} is not one of cpu, cuda")
        if self.shard is not None and not 1 <= self.shard[0] <= self.shard[1]:
            out.append(f"--shard {self.shard[0]}/{self.shard[1]}: K must be between 1 and N")
        try:
            _ = self.known_failures  # load now: a broken file is a usage error, not a crash
        except Exception as exc:
            out.append(f"known failures: {exc}")
        return out


def parse_shard(text: str | None) -> tuple[int, int] | None:
    if not text:
        return None
    try:
        k, n = (int(t) for t in text.split("/"))
    except ValueError:
        raise SettingsError(f"--shard {text!r}: expected K/N, e.g. 1/4") from None
    return k, n


def _robustness(given: Callable[[str, str], str | None]) -> dict:
    """--item-timeout, --worker-memory, --memory-budget, --max-elements, --crash-retries."""
    out: dict = {}
    timeout = given("item_timeout", "CONFORMANCE_ITEM_TIMEOUT")
    cap_text = given("worker_memory", "CONFORMANCE_WORKER_MEMORY")
    budget = given("memory_budget", "CONFORMANCE_MEMORY_BUDGET")
    cap = given("max_elements", "CONFORMANCE_MAX_ELEMENTS")
    retries = given("crash_retries", "CONFORMANCE_CRASH_RETRIES")
    try:
        out["crash_retries"] = 0 if retries is None else int(retries)
    except ValueError:
        out["crash_retries"] = -1
    if out["crash_retries"] < 0:
        raise SettingsError(f"--crash-retries {retries!r}: expected a count, e.g. 1")
    try:
        seconds = robustness.DEFAULT_ITEM_TIMEOUT if timeout is None else float(timeout)
        out["item_timeout"] = seconds if seconds > 0 else None
    except ValueError:
        raise SettingsError(f"--item-timeout {timeout!r}: expected seconds, e.g. 120") from None
    try:
        out["worker_memory"] = (
            robustness.DEFAULT_WORKER_MEMORY
            if cap_text is None
            else robustness.parse_size(cap_text)
        )
    except ValueError as exc:
        raise SettingsError(f"--worker-memory: {exc}") from None
    try:
        out["memory_budget"] = (
            memory.DEFAULT_BUDGET if budget is None else robustness.parse_size(budget)
        )
    except ValueError as exc:
        raise SettingsError(f"--memory-budget: {exc}") from None
    try:
        out["max_elements"] = None if cap is None else int(cap)
    except ValueError:
        out["max_elements"] = 0
    if out["max_elements"] is not None and out["max_elements"] < 1:
        raise SettingsError(f"--max-elements {cap!r}: expected a positive integer")
    return out
