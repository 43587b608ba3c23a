"""Which calling contexts run, since the product of all of them is far too large.

The axis (:mod:`conformance.contexts`) is input kinds × modes × calls × dtypes. Each family ×
parametrization × framework of a case file gets :func:`row_count` rows of a Latin design: row
``i`` takes mode ``i mod M``, and its call, kinds and dtype shift by offsets from a CRC of those
three names. So it is deterministic and meets every level the framework offers
(``tests/case_files/test_context_design.py``). A row the framework cannot call takes the next
call, then the next kinds. Rows go to the family's eligible cases in file order. A case that
pins ``context:`` runs that context alone (:func:`pinned_context`). Users' view:
docs/case-format.md.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from conformance import reference
from conformance.cases.loader import Case
from conformance.contexts import (
    FLOAT32_MODES,
    FLOAT_WIDTH,
    GRADIENT_CALLS,
    Call,
    CallingContext,
    ContextAxis,
    ContextDtypes,
    ContextInput,
    InputKind,
    Mode,
)
from conformance.dtypes import value_numpy_dtype

#: The parameter-kind patterns beyond "every parameter as one kind".
MIXED = "mixed"


def row_count(axis: ContextAxis) -> int:
    """Rows per family × parametrization × framework: the axis's own number, or every mode
    once and at least half the calls."""
    return axis.rows or max(len(axis.modes), -(-len(axis.calls) // 2))


def patterns(axis: ContextAxis) -> list[str]:
    """The parameter-kind levels: each offered kind for every parameter, then ``mixed``."""
    levels = [k.value for k in axis.param_kinds]
    return levels + ([MIXED] if len(axis.param_kinds) > 1 else [])


def _offsets(case: Case, framework: str) -> tuple[int, int, int, int]:
    seed = zlib.crc32(f"{case.family}|{case.parametrization}|{framework}".encode())
    return seed % 97, seed // 97 % 89, seed // (97 * 89) % 83, seed // (97 * 89 * 83) % 79


@dataclass(frozen=True)
class CaseShape:
    """What the design reads of a case: its inputs' names, dims and dtypes per item dtype."""

    params: dict[str, int]  # non-static parameter → ndim, in the family's order
    param_dtypes: dict[str, str]  # a parameter's declared dtype ("float", "int32", "int64")
    value_ndim: int
    value_dtype: str  # the case's value_dtype ("float", "int64", …)
    differentiable: tuple[str, ...]

    @classmethod
    def of(cls, case: Case, params64: Mapping[str, np.ndarray], value64: np.ndarray) -> CaseShape:
        info = reference.get_family(case.family).params(case.parametrization)
        return cls(
            {k: np.ndim(params64[k]) for k, p in info.items() if not p.static},
            dict(case.spec.param_dtypes),
            np.ndim(value64),
            case.spec.value_dtype,
            case.differentiable_inputs,
        )

    def inputs(self, context: CallingContext, dtype: str) -> list[ContextInput]:
        """Every non-static input as ``context`` gives it in an item of ``dtype``."""
        out = []
        for name, ndim in self.params.items():
            declared = self.param_dtypes.get(name, "float")
            out.append(
                ContextInput(
                    name, context.kind(name), dtype if declared == "float" else declared, ndim
                )
            )
        value_dtype = value_numpy_dtype(self.value_dtype, dtype).name  # type: ignore[arg-type]
        out.append(ContextInput("value", context.kind("value"), value_dtype, self.value_ndim, True))
        return out

    def traced(self, call: Call) -> tuple[str, ...]:
        """The input a call traces: a gradient's first differentiable parameter (the value
        when there is none, and always for ``latent-grad``), vmap's first parameter (else the
        value); none for the others (``jit``'s arguments are every parameter)."""
        params = [k for k in self.differentiable if k != "value"]
        if call is Call.LATENT_GRAD:
            return ("value",) if "value" in self.differentiable else ()
        if call is Call.LOG_DENSITY_GRAD:
            return tuple(params[:1])
        if call in GRADIENT_CALLS:
            return tuple(params[:1]) or (("value",) if "value" in self.differentiable else ())
        if call is Call.VMAP:
            return (next(iter(self.params), "value"),)
        return ()


class Framework(Protocol):
    """What the design asks of a framework's adapter: its axis, the dtypes its promotion
    rules give, and the kinds it documents it does not take."""

    @property
    def context_axis(self) -> ContextAxis | None: ...

    def context_dtypes(
        self, inputs: list[ContextInput], mode: Mode, dtype: str
    ) -> ContextDtypes: ...

    def context_restriction(self, given: ContextInput) -> str | None: ...


def narrows(inputs: list[ContextInput], dtypes: ContextDtypes) -> bool:
    """Whether the framework's rules take a float input narrower than the item gives it."""
    for given in inputs:
        taken = dtypes.inputs.get(given.name, given.dtype)
        if given.floating and FLOAT_WIDTH.get(taken, 0) < FLOAT_WIDTH[given.dtype]:
            return True
    return False


def _kinds(
    shape: CaseShape, pattern: str, value_kind: InputKind, axis: ContextAxis, traced: tuple
) -> dict[str, str]:
    kinds: dict[str, str] = {}
    for i, name in enumerate(shape.params):
        if pattern == MIXED:
            kinds[name] = axis.param_kinds[(i + 1) % len(axis.param_kinds)].value
        else:
            kinds[name] = pattern
    kinds["value"] = value_kind.value
    if axis.traced_native:
        kinds.update({name: InputKind.NATIVE.value for name in traced})
    return kinds


def fits(
    context: CallingContext,
    shape: CaseShape,
    dtype: str,
    framework: Framework,
    restricted: bool = False,
) -> bool:
    """Whether ``framework`` can call ``context`` on this case in ``dtype``; with an input of a
    kind it documents it does not take only where ``restricted`` allows it."""
    axis = framework.context_axis
    if axis is None or axis.offers(context):
        return False
    if context.mode in FLOAT32_MODES and dtype != "float32":
        return False
    needs_trace = context.call in GRADIENT_CALLS or context.call is Call.VMAP
    if needs_trace and not shape.traced(context.call):
        return False
    inputs = shape.inputs(context, dtype)
    if not restricted and any(framework.context_restriction(g) for g in inputs):
        return False
    return not narrows(inputs, framework.context_dtypes(inputs, context.mode, dtype))


def design(
    case: Case,
    shape: CaseShape,
    name: str,
    framework: Framework,
    slot: tuple[int, int],
) -> list[tuple[CallingContext, str]]:
    """The (context, dtype) rows of ``case`` for the framework ``name``, the ``slot[0]``-th of
    ``slot[1]`` eligible cases of its family and parametrization in its file (see the module's
    docstring)."""
    axis = framework.context_axis
    if axis is None:
        return []
    index, count = slot
    order = (*shape.params, "value")
    a, b, c, d = _offsets(case, name)
    levels = patterns(axis)
    allowed = [t for t in ("float32", "float64") if t in case.spec.dtypes]
    out: list[tuple[CallingContext, str]] = []
    for i in range(index, row_count(axis), count):
        # Fewer rows than modes: the modes rotate from family to family (offset ``b``).
        shift = b if axis.rows and axis.rows < len(axis.modes) else 0
        mode = axis.modes[(i + shift) % len(axis.modes)]
        if mode in FLOAT32_MODES:
            dtype = "float32"
        else:
            dtype = allowed[(i + d) % len(allowed)] if allowed else ""
        if dtype not in allowed:
            continue
        found = _repair(i, (a, b, c), mode, dtype, shape, framework, levels, order)
        if found is not None:
            out.append((found, dtype))
    return out


def _repair(
    i: int,
    offsets: tuple[int, int, int],
    mode: Mode,
    dtype: str,
    shape: CaseShape,
    framework: Framework,
    levels: list[str],
    order: tuple,
) -> CallingContext | None:
    """Row ``i`` as drawn, or the next call, then the next kinds, that the framework can call.

    Only the family's last row (with one row, every other family's) may give an input of a
    kind the framework documents it does not take (its restriction is then checked once, not
    in most rows of a family whose inputs all have dims)."""
    axis = framework.context_axis
    assert axis is not None
    rows = row_count(axis)
    # One row per family: every other family's (by its offset) may take a restricted kind.
    restricted = i == rows - 1 if rows > 1 else offsets[1] % 2 == 0
    a, b, c = offsets
    for shift_kinds in range(len(levels) * len(axis.value_kinds)):
        pattern = levels[(i + c + shift_kinds) % len(levels)]
        value_kind = axis.value_kinds[(i + b + shift_kinds // len(levels)) % len(axis.value_kinds)]
        for shift_call in range(len(axis.calls)):
            call = axis.calls[(i + a + shift_call) % len(axis.calls)]
            kinds = _kinds(shape, pattern, value_kind, axis, shape.traced(call))
            context = CallingContext.of(mode, call, kinds, order)
            if fits(context, shape, dtype, framework, restricted):
                return context
    return None


def pinned_context(case: Case) -> CallingContext | None:
    """The context a case file pins (``context:``), or None."""
    pinned = case.spec.context
    if pinned is None:
        return None
    info = reference.get_family(case.family).params(case.parametrization)
    order = (*(k for k, p in info.items() if not p.static), "value")
    return CallingContext.of(pinned.mode, pinned.call, pinned.kinds, order)
