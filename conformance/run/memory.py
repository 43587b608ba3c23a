"""Keeping a worker's memory bounded: compiled code is dropped when the process outgrows a budget.

Eager JAX compiles every primitive for every new shape and keeps each executable for the life
of the process: about 1.5 MB of XLA CPU code each (200 new shapes of a 7-primitive expression
grew a process by 9.8 MB per shape), so a worker that has run a few thousand differently shaped
items holds gigabytes of code it will never call again (4.7 GB per worker in a full run).
``jax.clear_caches()`` frees it to the C allocator, which keeps the pages until
``malloc_trim`` hands them back (measured: 1,675 MB → 315 MB). So between items, when the
resident set exceeds ``--memory-budget``, every framework used so far drops its compiled-code
caches (:meth:`~conformance.adapters.base.Adapter.release_caches`) and the allocator returns
the freed pages. Executables still needed are rebuilt (from JAX's persistent cache when it is
on). Nothing an item computes depends on this: it only changes what stays cached.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
from typing import Any

from conformance import timing

DEFAULT_BUDGET = 2 << 30


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


def _trim() -> None:
    """Return freed heap pages to the OS (glibc's ``malloc_trim``; elsewhere nothing)."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


class MemoryGuard:
    """Checks the resident set after each item and releases caches above ``budget`` bytes."""

    def __init__(self, budget: int | None) -> None:
        self.budget = budget
        self.releases = 0
        self._used: dict[str, Any] = {}

    def after_item(self, adapter: Any) -> None:
        if self.budget is None:
            return
        self._used.setdefault(adapter.name, adapter)
        rss = resident_bytes()
        if rss is None or rss <= self.budget:
            return
        with timing.phase("memory"):
            for used in self._used.values():
                used.release_caches()
            _trim()
        self.releases += 1
        timing.count("memory_releases")
