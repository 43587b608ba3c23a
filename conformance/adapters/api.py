"""The stable surface for third-party adapters: what a downstream framework imports, and all it
needs to import.

Subclass :class:`Adapter` (the core every framework gives: names, bindings, arrays in and out,
construction, shapes, log_prob), implement the capability protocols of the operations the
framework offers and name each in ``operations`` with how it runs, and register the class under
the ``conformance.adapters`` entry point group (:data:`ENTRY_POINT_GROUP`). Everything else in
the package (the runner's hooks, the built-in adapters, NumPyro's executable store) is internal
and may change between releases; ``examples/scipy_adapter`` imports only from here.
"""

from __future__ import annotations

from conformance.adapters import ENTRY_POINT_GROUP
from conformance.adapters.base import Adapter
from conformance.adapters.capabilities import (
    CallingContexts,
    Compiles,
    Differentiates,
    Draws,
    EffectHandlers,
    PathwiseDraws,
    TracedDrawShapes,
    Vmaps,
)
from conformance.contexts import (
    CallingContext,
    ContextAxis,
    ContextDtypes,
    ContextInput,
    ContextOutcome,
    Mode,
)
from conformance.operations import DrawMode, DrawRaised, Operation
from conformance.registry import Binding, Bindings
from conformance.reproducers.dialects import Dialect

__all__ = [
    "ENTRY_POINT_GROUP",
    "Adapter",
    "Binding",
    "Bindings",
    "CallingContext",
    "CallingContexts",
    "Compiles",
    "ContextAxis",
    "ContextDtypes",
    "ContextInput",
    "ContextOutcome",
    "Dialect",
    "Differentiates",
    "DrawMode",
    "DrawRaised",
    "Draws",
    "EffectHandlers",
    "Mode",
    "Operation",
    "PathwiseDraws",
    "TracedDrawShapes",
    "Vmaps",
]
