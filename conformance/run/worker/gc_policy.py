"""Python's garbage collector, tuned for a run of thousands of items.

A worker holds hundreds of thousands of long-lived objects (items, their specs, the frameworks'
modules, JAX's traced programs), and every full collection walks them all: with Python's
defaults that is most of the time a JAX-heavy worker does not spend in XLA. After collection
the plugin freezes what exists (moved out of the collector's reach; nothing is freed that would
have been) and lets the young generation grow larger before a collection. Only what the
collector spends changes, never what an item computes; both are undone when the session ends,
except in a process the session's end ends (an xdist worker): there everything is frozen instead,
since pytest collects once more on the way out and a worker's heap of JAX programs and torch
kernels took seconds to walk for nothing.
"""

from __future__ import annotations

import gc

#: Allocations before a young collection (Python's default is 700 on 3.11).
YOUNG_THRESHOLD = 50_000

_saved: tuple[int, ...] | None = None


def tune() -> None:
    global _saved
    if _saved is not None:
        return
    _saved = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, _saved[1], _saved[2])


def restore(exiting: bool = False) -> None:
    """Undo :func:`tune`; ``exiting``: the process ends with the session, so freeze what is
    left instead (pytest's last collection at exit then has nothing to walk)."""
    global _saved
    if _saved is None:
        return
    gc.set_threshold(*_saved)
    if exiting:
        gc.freeze()
    else:
        gc.unfreeze()
    _saved = None
