"""The run's selection and settings, from pytest options, ini values and CONFORMANCE_* variables.

Command-line options win over environment variables, which win over ini values. The same
object serves collection (which items exist) and execution (device, adapters).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conformance import reference
from conformance.adapters import Adapter, AdapterLoadError, all_adapters
from conformance.cases.builtin import builtin_cases
from conformance.cases.validate import Known
from conformance.check_names import NON_CHECK_ITEMS
from conformance.checks import CHECKS
from conformance.dtypes import FLOAT_DTYPES
from conformance.names import unknown_name, unmatched_pattern
from conformance.operations import Operation
from conformance.plan.selection import Selection
from conformance.run.config.options import DEFAULT_RESULTS, add_options, env_list, split_list
from conformance.run.worker import memory, robustness
from conformance.sizes import parse_size

if TYPE_CHECKING:
    from conformance.known_failures.entries import Index


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
    #: ``--edges``: see :mod:`conformance.plan.derived.edges` (on by default).
    edges: bool = True
    #: ``--edges=bulk``: the edges and, beside them, where the density lives at each moved
    #: parameter (``edges.BULK_TAG``); triaged, off by default for its cost (docs/performance.md).
    bulk_edges: bool = False
    property_examples: int = 0
    sample_seed: int = 0
    known_failure_files: list[Path] = field(default_factory=list)
    builtin_known_failures: bool = True
    strict_known_failures: bool = True
    shard: tuple[int, int] | None = None  # (k, n), 1-based k
    #: ``--quick``: see :func:`conformance.plan.quick.quick_selection`.
    quick: bool = False
    #: Opt-in operations to run where an adapter offers them only on request (names).
    opt_in: list[str] = field(default_factory=list)
    #: Robustness (see :mod:`conformance.run.worker.robustness`): seconds per case item (None: none),
    #: each xdist worker's RLIMIT_DATA in bytes (None: none), the element cap of a case array.
    item_timeout: float | None = None
    worker_memory: int | None = None
    #: Resident-set size above which a process drops compiled-code caches between items
    #: (None: never; see :mod:`conformance.run.worker.memory`).
    memory_budget: int | None = None
    max_elements: int | None = None
    #: Times an item that crashed its worker is run again on a fresh one (xdist only).
    crash_retries: int = 0
    #: How the user gave each setting (``--family``, ``--conformance-family`` or
    #: ``CONFORMANCE_FAMILIES``), by dest: messages name what the user typed.
    named: dict[str, str] = field(default_factory=dict)

    def option(self, dest: str) -> str:
        """The option or variable that set ``dest``, as the user gave it."""
        return self.named.get(dest) or "--" + dest.replace("_", "-")

    @classmethod
    def from_sources(
        cls,
        opt: Any,
        env: Mapping[str, str],
        ini_roots: list[Path] | None = None,
        prefix: str = "--",
    ) -> Settings:
        """The settings of a run: command-line options (``opt``, under the short dests
        :func:`~conformance.run.config.options.add_options` declares), then ``CONFORMANCE_*``
        variables in ``env``, then ini values. ``prefix`` is how the user spells the options
        (``--`` for ``conformance run``, ``--conformance-`` under plain pytest), for messages.

        Raises :class:`SettingsError`, naming the option or variable as the user gave it, for
        a value that cannot be used.
        """
        src = _Sources(opt, env, prefix)
        given, listed = src.given, src.listed
        roots = [Path(p).resolve() for p in split_list(opt.cases)]
        roots += [Path(p).resolve() for p in env_list("CONFORMANCE_CASES", env)]
        roots += [Path(p).resolve() for p in ini_roots or ()]
        if getattr(opt, "builtin_cases", False) or src.flag("CONFORMANCE_BUILTIN_CASES"):
            roots.append(builtin_cases().resolve())
        roots = list(dict.fromkeys(roots))  # a root named twice is read once
        results = given("results", "CONFORMANCE_RESULTS") or DEFAULT_RESULTS
        return cls(
            case_roots=roots,
            frameworks=listed("framework", "CONFORMANCE_FRAMEWORKS"),
            families=listed("family", "CONFORMANCE_FAMILIES"),
            checks=listed("check", "CONFORMANCE_CHECKS"),
            dtypes=listed("dtype", "CONFORMANCE_DTYPES"),
            device=given("device", "CONFORMANCE_DEVICE") or "cpu",
            adapter_specs=tuple(split_list(opt.adapter) + env_list("CONFORMANCE_ADAPTERS", env)),
            results_path=None if opt.no_results else Path(results),
            variants=src.on_off("variants", "CONFORMANCE_VARIANTS"),
            edges=src.on_off("edges", "CONFORMANCE_EDGES", also=("bulk",)),
            bulk_edges=(src.given("edges", "CONFORMANCE_EDGES") or "").strip().lower() == "bulk",
            property_examples=src.count("property", "CONFORMANCE_PROPERTY", 0, "a count, e.g. 20"),
            sample_seed=src.count("sample_seed", "CONFORMANCE_SAMPLE_SEED", 0, "a seed, e.g. 3"),
            known_failure_files=[
                Path(p)
                for p in split_list(opt.known_failures)
                + env_list("CONFORMANCE_KNOWN_FAILURES", env)
            ],
            builtin_known_failures=not opt.no_builtin_known_failures,
            strict_known_failures=(
                opt.strict_known_failures if opt.strict_known_failures is not None else True
            ),
            shard=parse_shard(
                given("shard", "CONFORMANCE_SHARD"), src.named("shard", "CONFORMANCE_SHARD")
            ),
            quick=bool(getattr(opt, "quick", None)) or src.flag("CONFORMANCE_QUICK"),
            opt_in=listed("opt_in", "CONFORMANCE_OPT_IN")
            + (["jit"] if src.flag("CONFORMANCE_TORCH_COMPILE") else []),
            named={**src.names, "quick": src.named("quick", "CONFORMANCE_QUICK")},
            **_robustness(src),
        )

    @property
    def all_known_failure_files(self) -> list[Path]:
        """The suite's own known-failure files (unless switched off), then the user's."""
        from conformance.known_failures import entries as known_failures

        builtin = (
            known_failures.builtin_files(bulk=self.bulk_edges)
            if self.builtin_known_failures
            else []
        )
        return builtin + list(self.known_failure_files)

    @cached_property
    def known_failures(self) -> list:
        """Every entry of the run's known-failure files, its names checked against the
        families, adapters, checks and dtypes this run knows."""
        from conformance.known_failures import entries as known_failures

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
        from conformance.known_failures import entries as known_failures

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

    @cached_property
    def selection(self) -> Selection:
        """What the plan reads of this run (see :mod:`conformance.plan.selection`)."""
        return Selection(
            case_roots=tuple(self.case_roots),
            adapters=self.adapters,
            known=self.known,
            known_failures=self.known_failure_index,
            frameworks=tuple(self.frameworks),
            families=tuple(self.families),
            checks=tuple(self.checks),
            dtypes=tuple(self.dtypes),
            property_checks=self.property_examples > 0,
            opted_in=self.opted_in,
            device=self.device,
            variants=self.variants,
            edges=self.edges,
            bulk_edges=self.bulk_edges,
            quick=self.quick,
            shard=self.shard,
        )

    def problems(self) -> list[str]:
        """Selections that name nothing: a typo should not silently select zero items."""
        try:
            adapters = list(self.adapters)
        except AdapterLoadError as exc:  # a misspelt --adapter: a usage error, not a crash
            return [f"{self.option('adapter')}: {exc}"]
        out = []
        selections = (
            ("framework", "adapter", self.frameworks, adapters),
            ("family", "family", self.families, reference.family_names()),
            ("check", "check", self.checks, list(CHECKS)),
            ("dtype", "dtype", self.dtypes, list(FLOAT_DTYPES)),
        )
        for dest, what, patterns, known in selections:
            for pattern in patterns:
                problem = unmatched_pattern(what, pattern, known)
                if problem:
                    out.append(f"{self.option(dest)} {problem}")
        for name in self.opt_in:
            if name not in Operation.__members__.values():
                out.append(
                    f"{self.option('opt_in')} "
                    + unknown_name("operation", name, [str(o) for o in Operation], "is no")
                )
        if self.device not in ("cpu", "cuda"):
            out.append(
                f"{self.option('device')} "
                + unknown_name("device", self.device, ["cpu", "cuda"], "is no")
            )
        if self.shard is not None and not 1 <= self.shard[0] <= self.shard[1]:
            out.append(
                f"{self.option('shard')} {self.shard[0]}/{self.shard[1]}: K must be between 1 and N"
            )
        try:
            _ = self.known_failures  # load now: a broken file is a usage error, not a crash
        except Exception as exc:
            out.append(f"known failures: {exc}")
        return out


_TRUE = ("1", "true", "on", "yes")
_FALSE = ("0", "false", "off", "no", "")


@dataclass
class _Sources:
    """Where each setting comes from: the option (spelt with ``prefix``), else the variable.
    Records how the user gave each one (:attr:`names`), so messages name what was typed."""

    opt: Any
    env: Mapping[str, str]
    prefix: str
    names: dict[str, str] = field(default_factory=dict)

    def named(self, dest: str | None, var: str) -> str:
        if dest is not None and getattr(self.opt, dest, None) not in (None, [], False):
            return self.prefix + dest.replace("_", "-")
        if self.env.get(var):
            return var
        return self.prefix + (dest or var).replace("_", "-")

    def given(self, dest: str, var: str) -> str | None:
        value = getattr(self.opt, dest, None)
        value = value if value is not None else self.env.get(var) or None
        self.names[dest] = self.named(dest, var)
        return value

    def listed(self, dest: str, var: str) -> list[str]:
        self.names[dest] = self.named(dest, var)
        return split_list(getattr(self.opt, dest, None)) or env_list(var, self.env)

    def flag(self, var: str) -> bool:
        """A variable that switches something on (``1``, ``true``, ``on``, ``yes``, or off)."""
        text = self.env.get(var, "").strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        raise SettingsError(f"{var}={self.env[var]!r}: expected 1 or 0 (true/false, on/off)")

    def on_off(self, dest: str, var: str, also: tuple[str, ...] = ()) -> bool:
        """``--edges on|off`` (argparse checks the option's choices), or its variable; a
        word of ``also`` (another choice of the option) counts as on."""
        text = (self.given(dest, var) or "on").strip().lower()
        if text in _TRUE or text in also:
            return True
        if text in _FALSE:
            return False
        choices = " or ".join(["on", "off", *also])
        raise SettingsError(f"{self.names[dest]} {text!r}: expected {choices}")

    def count(self, dest: str, var: str, default: int, example: str, least: int = 0) -> int:
        text = self.given(dest, var)
        try:
            value = default if text is None else int(text)
        except ValueError:
            value = least - 1
        if value < least:
            raise SettingsError(f"{self.names[dest]} {text!r}: expected {example}")
        return value


def parse_shard(text: str | None, option: str = "--shard") -> tuple[int, int] | None:
    if not text:
        return None
    try:
        k, n = (int(t) for t in text.split("/"))
    except ValueError:
        raise SettingsError(f"{option} {text!r}: expected K/N, e.g. 1/4") from None
    return k, n


def _robustness(src: _Sources) -> dict:
    """--item-timeout, --worker-memory, --memory-budget, --max-elements, --crash-retries."""
    out: dict = {}
    timeout = src.given("item_timeout", "CONFORMANCE_ITEM_TIMEOUT")
    cap_text = src.given("worker_memory", "CONFORMANCE_WORKER_MEMORY")
    budget = src.given("memory_budget", "CONFORMANCE_MEMORY_BUDGET")
    out["crash_retries"] = src.count(
        "crash_retries", "CONFORMANCE_CRASH_RETRIES", 0, "a count, e.g. 1"
    )
    try:
        seconds = robustness.DEFAULT_ITEM_TIMEOUT if timeout is None else float(timeout)
        out["item_timeout"] = seconds if seconds > 0 else None
    except ValueError:
        raise SettingsError(
            f"{src.names['item_timeout']} {timeout!r}: expected seconds, e.g. 120"
        ) from None
    try:
        out["worker_memory"] = (
            robustness.DEFAULT_WORKER_MEMORY if cap_text is None else parse_size(cap_text)
        )
    except ValueError as exc:
        raise SettingsError(f"{src.names['worker_memory']}: {exc}") from None
    try:
        out["memory_budget"] = memory.DEFAULT_BUDGET if budget is None else parse_size(budget)
    except ValueError as exc:
        raise SettingsError(f"{src.names['memory_budget']}: {exc}") from None
    cap = src.given("max_elements", "CONFORMANCE_MAX_ELEMENTS")
    out["max_elements"] = (
        None
        if cap is None
        else src.count("max_elements", "CONFORMANCE_MAX_ELEMENTS", 0, "a positive integer", least=1)
    )
    return out
