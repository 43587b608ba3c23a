"""One MLIR context for all of a process's JAX lowerings, instead of a new one per function.

JAX lowers every function it compiles — and, op by op, every primitive of every new shape — into
a module built in a fresh MLIR context that loads all of JAX's dialects
(``jax._src.interpreters.mlir.make_ir_context``). Eager NumPyro items lower dozens of primitives
each, so that set-up dominated them: on the ``eager`` items of Beta, Gamma, StudentT and
MultivariateNormal (146 items, ``-n 0``) context creation was 29% of the profile, and the run
took 50.6 s and 2.16 GB peak RSS with a context per lowering, 21.3 s and 0.72 GB with one
shared context.

The modules lowered in a shared context are the same programs (the persistent cache, keyed on
their serialized text, keeps hitting the entries written without sharing), so the executables
and every result are the same: ``tests/frameworks/test_jax_lowering.py`` compares the lowered text and the
values eagerly and compiled, with and without sharing, in fresh processes. Nothing here touches
numerics. The shared context is dropped with the other compiled caches when a worker outgrows
its memory budget (:meth:`~conformance.adapters.numpyro.adapter.NumpyroAdapter.release_caches`),
so what it accumulates is bounded like they are.

A JAX without this function (an old release in a version-matrix run) lowers as it always did.
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
