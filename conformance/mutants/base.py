"""What a mutant is: a replica of one framework bug, patched into today's release at run time.

A mutant never changes a file on disk. Its ``apply`` swaps attributes of the imported framework
modules (through a :class:`Patcher`, which remembers every original so the suite's own tests can
undo it in-process); ``conformance mutants`` applies it inside the pytest process that runs the
items — the xdist workers included — via :mod:`conformance.mutants.plugin`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from conformance.kinds import Kind

_MISSING = object()


class Patcher:
    """Monkeypatching with undo, in reverse order (like pytest's monkeypatch, usable anywhere)."""

    def __init__(self) -> None:
        self._undo: list[Callable[[], None]] = []

    def setattr(self, target: Any, name: str, value: Any) -> None:
        """Replace ``target.name`` (a module, class or object attribute) until :meth:`undo`."""
        original = target.__dict__.get(name, _MISSING) if hasattr(target, "__dict__") else _MISSING
        if original is _MISSING and not hasattr(target, name):
            raise AttributeError(f"{target!r} has no attribute {name!r} to patch")

        def restore() -> None:
            if original is _MISSING:
                delattr(target, name)  # it was inherited: drop our override
            else:
                setattr(target, name, original)

        setattr(target, name, value)
        self._undo.append(restore)

    def on_undo(self, restore: Callable[[], None]) -> None:
        """Register a custom restore step (e.g. re-registering a singledispatch overload)."""
        self._undo.append(restore)

    def undo(self) -> None:
        while self._undo:
            self._undo.pop()()


@dataclass(frozen=True)
class Mutant:
    """One replicated bug and the slice of the suite that should catch it.

    ``selection`` is the ``conformance run`` arguments that restrict a run to the families,
    frameworks, checks (and dtypes) the bug can touch, so a mutant run takes seconds.
    ``killers`` are node-id globs that must be among the killed items, ``spared`` globs that
    must not be (e.g. log_prob items for a gradient-only bug: the suite must say *what* is
    wrong), ``message`` a text that a killed item's message must contain (the upstream error,
    verbatim) and ``kinds`` the failure kinds every killed item must have. In these globs only
    ``*`` is special, so item ids are written as they read.
    """

    name: str
    title: str
    replicates: str
    apply: Callable[[Patcher], None] = field(repr=False)
    selection: tuple[str, ...]
    framework: str
    seed: int | None = None
    link: str | None = None
    killers: tuple[str, ...] = ()
    spared: tuple[str, ...] = ()
    message: str | None = None
    kinds: tuple[Kind, ...] = ()
