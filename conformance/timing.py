"""Where a run's time goes: phase totals per process, sent from xdist workers to the controller.

Phases are exclusive (time in a nested phase is not counted again in the outer one), so the
totals add up to the time items took; ``items`` is what is left for the harness itself. A
framework's own events (JAX's compile times, reported by the NumPyro adapter) are kept beside
them as *included* figures (they happen inside ``framework``). ``conformance bench`` reads the
summary from results.json.
"""

from __future__ import annotations

import contextlib
import functools
import resource
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

_exclusive: dict[str, float] = defaultdict(float)
_included: dict[str, float] = defaultdict(float)
_counts: dict[str, int] = defaultdict(int)
_stack: list[float] = []  # time spent in child phases, per open phase


@contextlib.contextmanager
def phase(name: str) -> Iterator[None]:
    """Counts the time inside, minus nested phases, towards ``name``."""
    start = time.perf_counter()
    _stack.append(0.0)
    try:
        yield
    finally:
        elapsed = time.perf_counter() - start
        children = _stack.pop()
        _exclusive[name] += elapsed - children
        if _stack:
            _stack[-1] += elapsed


def timed(name: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorator form of :func:`phase`."""

    def decorate(fn: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(fn)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            with phase(name):
                return fn(*args, **kwargs)

        return wrapper

    return decorate


def add_included(name: str, seconds: float) -> None:
    """A figure measured by someone else inside our phases (e.g. JAX's compile events)."""
    _included[name] += seconds


def count(name: str) -> None:
    """One more of an event worth reporting beside the times (e.g. a memory release)."""
    _counts[name] += 1


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def snapshot() -> dict[str, Any]:
    return {
        "phases": {k: round(v, 4) for k, v in sorted(_exclusive.items())},
        "included": {k: round(v, 4) for k, v in sorted(_included.items())},
        "counts": dict(sorted(_counts.items())),
        "peak_rss_mb": round(peak_rss_mb(), 1),
    }
