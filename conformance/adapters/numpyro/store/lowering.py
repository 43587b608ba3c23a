"""One MLIR context for all of a process's JAX lowerings, since building one per lowering was slow.

JAX builds a fresh MLIR context for every lowering (``mlir.make_ir_context``), and eager items
lower every primitive of every new shape. A shared context lowers the same programs, so
executables, cache keys and results do not change (``tests/frameworks/test_jax_lowering.py``).
Nothing here touches numerics. The shared context is dropped with the other compiled caches
when a worker outgrows its memory budget
(:meth:`~conformance.adapters.numpyro.adapter.NumpyroAdapter.release_caches`), so it stays
bounded. A JAX without ``make_ir_context`` lowers as before. Measurements:
docs/performance.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_SHARED_MARK = "_conformance_shared_context"
_context: Any = None


def share_context() -> bool:
    """Make JAX's lowerings in this process reuse one MLIR context; idempotent.

    Returns False (and changes nothing) where this JAX has no ``make_ir_context`` to wrap.
    """
    try:
        from jax._src.interpreters import mlir
    except ImportError:
        return False
    original: Callable[[], Any] | None = getattr(mlir, "make_ir_context", None)
    if original is None:
        return False
    if getattr(original, _SHARED_MARK, False):
        return True

    def make_shared_context() -> Any:
        global _context
        if _context is None:
            _context = original()
        return _context

    setattr(make_shared_context, _SHARED_MARK, True)
    make_shared_context.__wrapped__ = original  # type: ignore[attr-defined]
    mlir.make_ir_context = make_shared_context
    return True


def drop_context() -> None:
    """Let the shared context go (with what it has uniqued); the next lowering makes a new one."""
    global _context
    _context = None


def unshare_context() -> None:
    """Give JAX its own ``make_ir_context`` back (the tests compare both ways)."""
    try:
        from jax._src.interpreters import mlir
    except ImportError:
        return
    current = getattr(mlir, "make_ir_context", None)
    if getattr(current, _SHARED_MARK, False):
        mlir.make_ir_context = current.__wrapped__  # type: ignore[union-attr]
    drop_context()
