"""Keeps a worker's memory bounded: compiled code is dropped when the process outgrows a budget.

Eager JAX keeps an executable for every primitive and shape it has run. So between items, when
the resident set exceeds ``--memory-budget``, every framework used so far drops its compiled
caches (:meth:`~conformance.adapters.hooks.RunnerHooks.release_caches`) and ``malloc_trim``
returns the pages. Executables still needed are rebuilt, and results never depend on this. XLA
executables also hold memory mappings, and a process past ``vm.max_map_count`` dies in XLA. So
the guard also releases past :data:`MAPPING_SHARE` of that limit, whatever the budget. Counting
mappings is slow, so counts are spaced (:data:`MAPPING_CHECK_S`). Measurements:
docs/robustness.md.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import time
from typing import Any

from conformance import timing

DEFAULT_BUDGET = 2 << 30
#: Release once the process holds this share of the mappings the kernel allows it.
MAPPING_SHARE = 0.75
#: Seconds between two counts of the mappings at least. Reading ``/proc/self/maps`` costs
#: about 20 ms at 20,000 mappings, so the next count waits as long as the fastest growth seen
#: (:data:`MAPPING_GROWTH_PER_S`) would take to reach the threshold. A process loading stored
#: executables back to back grew by 5,400 mappings a second (about 53 each, jaxlib 0.10.2), a
#: NumPyro-only run by 1,100: at the 2,000 once assumed, ``--memory-budget=off`` over six
#: families' compiled checks aborted in XLA (``conformance run -n 0 --framework=numpyro
#: --family=Normal,Gamma,Beta,StudentT,Wishart,Dirichlet --memory-budget=off``).
MAPPING_CHECK_S = 1.0
MAPPING_GROWTH_PER_S = 10_000


def resident_bytes() -> int | None:
    """This process's resident set now (not its peak), or None where /proc is not there."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


@functools.cache
def _malloc_trim() -> Any:
    """glibc's ``malloc_trim``, looked up once (``find_library`` runs ldconfig), or None."""
    name = ctypes.util.find_library("c")
    if not name:
        return None
    try:
        return ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):
        return None


def mapping_count() -> int | None:
    """How many memory mappings this process holds, or None where /proc is not there."""
    try:
        with open("/proc/self/maps", "rb") as f:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))
    except OSError:
        return None


@functools.cache
def mapping_limit() -> int | None:
    """The kernel's limit on a process's mappings (``vm.max_map_count``), or None."""
    try:
        with open("/proc/sys/vm/max_map_count", encoding="ascii") as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def _trim() -> None:
    """Return freed heap pages to the OS (glibc's ``malloc_trim``; elsewhere nothing)."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


class MemoryGuard:
    """Checks the process after each item and releases caches above ``budget`` bytes resident,
    or above :data:`MAPPING_SHARE` of ``max_mappings`` (default: the kernel's limit)."""

    def __init__(self, budget: int | None, max_mappings: int | str | None = "kernel") -> None:
        self.budget = budget
        self.max_mappings = mapping_limit() if max_mappings == "kernel" else max_mappings
        self.releases = 0
        self._used: dict[str, Any] = {}
        self._next_mapping_count = float("-inf")

    def after_item(self, adapter: Any) -> None:
        self._used.setdefault(adapter.name, adapter)
        if not (self._over_budget() or self._over_mappings()):
            return
        with timing.phase("memory"):
            for used in self._used.values():
                used.release_caches()
            _trim()
        self.releases += 1
        timing.count("memory_releases")

    def _over_budget(self) -> bool:
        if self.budget is None:
            return False
        rss = resident_bytes()
        return rss is not None and rss > self.budget

    def _over_mappings(self) -> bool:
        if not isinstance(self.max_mappings, int):
            return False
        now = time.monotonic()
        if now < self._next_mapping_count:
            return False
        count = mapping_count()
        threshold = MAPPING_SHARE * self.max_mappings
        headroom_s = (threshold - (count or 0)) / MAPPING_GROWTH_PER_S
        self._next_mapping_count = now + max(MAPPING_CHECK_S, headroom_s)
        if count is None or count <= threshold:
            return False
        timing.count("memory_releases_for_mappings")
        return True
