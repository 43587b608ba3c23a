"""Family-aware validation of a case: names, parameter sets, shapes and broadcasting.

Runs on shapes alone — no array is allocated — so a case that would need a huge array is
rejected before anything is built. Shapes are checked by the oracle's own batch rules applied
to zero-stride placeholder arrays.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from conformance import reference
from conformance.cases.case_model import CaseSpec, SampleSpec, literal_shape
from conformance.contexts import Call, InputKind, Mode
from conformance.names import unknown_name
from conformance.reference import OracleError

DEFAULT_MAX_ELEMENTS = 1_000_000
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


class SemanticError(ValueError):
    def __init__(self, path: tuple, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message


@dataclass(frozen=True)
class Known:
    """Names the case may refer to besides families: frameworks and checks (None: not checked)."""

    frameworks: frozenset[str] | None = None
    checks: frozenset[str] | None = None
    #: The element cap of this run (``--max-elements``, ``CONFORMANCE_MAX_ELEMENTS``, read by
    #: :class:`~conformance.run.config.settings.Settings`); None: :data:`DEFAULT_MAX_ELEMENTS`.
    max_elements: int | None = None


def spec_shape(spec) -> tuple[int, ...]:
    """Shape of a literal or generator spec, without building it."""
    if hasattr(spec, "generator"):
        return tuple(spec.shape)
    return literal_shape(spec)


def _placeholder(shape: tuple[int, ...]) -> np.ndarray:
    return np.broadcast_to(np.zeros(()), shape)


#: Frameworks and older NumPy hold at most 32 dims; a case never needs that many.
MAX_ARRAY_RANK = 32


def _static_value(pspec) -> np.ndarray:
    """A static parameter's literal value (0-d); a generator's shape stands in for it."""
    if hasattr(pspec, "generator"):
        return _placeholder(tuple(pspec.shape))
    return np.asarray(pspec, dtype=np.float64)


def _check_size(path: tuple, what: str, shape: Iterable[int], cap: int) -> None:
    """Refuse an array over the element cap — from its shape, before anything is allocated."""
    shape = tuple(shape)
    if len(shape) > MAX_ARRAY_RANK:
        raise SemanticError(
            path, f"{what} would have {len(shape)} dims, more than {MAX_ARRAY_RANK}"
        )
    n = math.prod(shape)
    if n > cap:
        raise SemanticError(
            path,
            f"{what} of shape {tuple(shape)} has {n} elements, over the cap of {cap} "
            "(--max-elements or CONFORMANCE_MAX_ELEMENTS raise it)",
        )


@dataclass(frozen=True)
class Resolved:
    """What validation learns about a case: its parametrisation and its shapes."""

    parametrization: str
    batch_shape: tuple[int, ...]
    event_shape: tuple[int, ...]
    log_prob_shape: tuple[int, ...]


def resolve_case(spec: CaseSpec, known: Known | None = None) -> Resolved:
    """Validate ``spec`` against its family; return its parametrisation and shapes."""
    try:
        family = reference.get_family(spec.family)
    except OracleError:
        raise SemanticError(
            ("family",), unknown_name("family", spec.family, reference.family_names(), "is no")
        ) from None

    known = known or Known()
    cap = known.max_elements or DEFAULT_MAX_ELEMENTS
    parametrization = _resolve_parametrization(spec, family)
    info = family.params(parametrization)

    shapes = {}
    for name, pinfo in info.items():
        pspec = spec.params[name]
        shape = spec_shape(pspec)
        _check_size(("params", name), name, shape, cap)
        if len(shape) < pinfo.event_rank:
            raise SemanticError(
                ("params", name),
                f"{name} needs at least {pinfo.event_rank} dims ({pinfo.domain}), got shape {shape}",
            )
        _check_generator(("params", name), pspec, shape)
        shapes[name] = shape

    # A static parameter (LKJCholesky's dimension) sets the event shape by its value, so the
    # shapes must see that value: a placeholder 0 would let `dimension: 100000` through the
    # element cap and allocate a 100000² value when sampled.
    placeholders = {
        k: _static_value(spec.params[k]) if info[k].static else _placeholder(s)
        for k, s in shapes.items()
    }
    try:
        batch = family.batch_shape(placeholders, parametrization)
        event = family.event_shape(placeholders, parametrization)
    except (OracleError, ValueError, ArithmeticError) as exc:
        raise SemanticError(("params",), str(exc)) from None

    value_shape = _value_shape(spec, batch, event, family.value.event_rank)
    _check_size(("value",), "value", value_shape, cap)
    try:
        lp_shape = family.log_prob_shape(placeholders, _placeholder(value_shape), parametrization)
    except (OracleError, ValueError, ArithmeticError) as exc:
        raise SemanticError(("value",), str(exc)) from None
    biggest = max(
        (math.prod(s[len(s) - info[k].event_rank :]) for k, s in shapes.items()), default=1
    )
    _check_size(("value",), "the broadcast batch", (*lp_shape, biggest), cap)

    for name in spec.param_dtypes:
        if name not in info:
            raise SemanticError(
                ("param_dtypes", name), f"param_dtypes names {name!r}, not a parameter"
            )
        if spec.param_dtypes[name] != "float" and not info[name].integer:
            raise SemanticError(
                ("param_dtypes", name),
                f"{name} is not integer-valued; it cannot be {spec.param_dtypes[name]}",
            )
    _check_value_dtype(spec, family)
    _check_grad_wrt(spec, family, parametrization)
    _check_expect(spec, batch, event, lp_shape)
    _check_names(spec, known)
    _check_context(spec, family, parametrization)
    return Resolved(parametrization, tuple(batch), tuple(event), tuple(lp_shape))


def _check_context(spec: CaseSpec, family: reference.Family, parametrization: str) -> None:
    """A pinned calling context names a mode, a call, and kinds of this family's inputs."""
    pinned = spec.context
    if pinned is None:
        return
    for key, enum in (("mode", Mode), ("call", Call)):
        given = getattr(pinned, key)
        if given not in enum.__members__.values():
            raise SemanticError(
                ("context", key), unknown_name(f"context {key}", given, enum, "is no")
            )
    info = family.params(parametrization)
    inputs = [k for k, p in info.items() if not p.static] + ["value"]
    for name, kind in pinned.kinds.items():
        if name in info and info[name].static:
            raise SemanticError(
                ("context", "kinds", name),
                f"{name} is static: it is always given as a Python number, not as {kind!r}",
            )
        if name not in inputs:
            raise SemanticError(
                ("context", "kinds", name), unknown_name(f"input of {family.name}", name, inputs)
            )
        if kind not in InputKind.__members__.values():
            raise SemanticError(
                ("context", "kinds", name), unknown_name("input kind", kind, InputKind, "is no")
            )
    if spec.checks is not None and set(spec.checks) != {"context"}:
        raise SemanticError(
            ("checks",),
            "a case that pins a context runs its 'context' item only: leave 'checks:' out "
            "(or list only 'context')",
        )


def _resolve_parametrization(spec: CaseSpec, family: reference.Family) -> str:
    given = set(spec.params)
    if spec.parametrization is not None:
        if spec.parametrization not in family.parametrizations:
            raise SemanticError(
                ("parametrization",),
                unknown_name(
                    f"parametrization of {family.name}",
                    spec.parametrization,
                    family.parametrizations,
                    "is no",
                ),
            )
        _check_param_set(family, spec.parametrization, given, inferred=False)
        return spec.parametrization
    matches = [p for p, params in family.parametrizations.items() if set(params) == given]
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:  # same parameter names, different layouts (MultitaskMultivariateNormal)
        raise SemanticError(
            ("params",),
            f"the parameters fit {family.name}'s parametrizations {', '.join(matches)} alike; "
            "say which with 'parametrization:'",
        )
    # No exact match: report against the closest parametrisation, naming the offending key.
    best = max(family.parametrizations, key=lambda p: len(given & set(family.parametrizations[p])))
    _check_param_set(family, best, given, inferred=True)
    raise AssertionError("unreachable: the parameter sets differ")


def _check_param_set(
    family: reference.Family, parametrization: str, given: set, inferred: bool
) -> None:
    expected = set(family.parametrizations[parametrization])
    missing, extra = sorted(expected - given), sorted(given - expected)
    label = f"{family.name}({parametrization})"
    if inferred and len(family.parametrizations) > 1:
        options = "; ".join(f"{p}: {sorted(ps)}" for p, ps in family.parametrizations.items())
        label += f" — the closest of its parametrizations ({options})"
    if extra:
        close = difflib.get_close_matches(extra[0], sorted(expected - given), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise SemanticError(
            ("params", extra[0]), f"unexpected parameter {extra[0]!r}{hint} for {label}"
        )
    if missing:
        raise SemanticError(("params",), f"missing parameter {missing[0]!r} for {label}")


def _check_generator(path: tuple, pspec, shape: tuple[int, ...]) -> None:
    gen = getattr(pspec, "generator", None)
    if gen in ("spd", "cholesky") and (len(shape) < 2 or shape[-1] != shape[-2]):
        raise SemanticError(
            path, f"generator {gen!r} needs a square shape (..., n, n), got {shape}"
        )
    if gen == "simplex" and (len(shape) < 1 or shape[-1] < 1):
        raise SemanticError(path, f"generator 'simplex' needs a last dim of size ≥ 1, got {shape}")
    blocks = getattr(pspec, "blocks", None)
    if blocks is not None and (shape[-1] % blocks or blocks > max(shape[-1], 1)):
        # Checked here, not only in the generator: `blocks` sizes a loop, so a huge count on an
        # empty matrix would spin before any array exists.
        raise SemanticError(path, f"spd: {blocks} blocks do not divide size {shape[-1]}")
    kron = getattr(pspec, "kronecker", None)
    if kron is not None and kron[0] * kron[1] != shape[-1]:
        raise SemanticError(
            path, f"spd: kronecker factor sizes {kron[0]}×{kron[1]} do not make size {shape[-1]}"
        )
    if gen == "integers":
        for bound in ("low", "high"):
            if not INT64_MIN <= getattr(pspec, bound) <= INT64_MAX:
                raise SemanticError(path, f"generator 'integers': {bound} is beyond int64")
    for lo, hi in (
        ("low", "high"),
        ("min_eigenvalue", "max_eigenvalue"),
        ("diag_low", "diag_high"),
    ):
        if hasattr(pspec, lo) and getattr(pspec, lo) > getattr(pspec, hi):
            raise SemanticError(path, f"generator {gen!r}: {lo} is greater than {hi}")


def _value_shape(
    spec: CaseSpec, batch: tuple[int, ...], event: tuple[int, ...], rank: int
) -> tuple[int, ...]:
    value = spec.value
    value_event = event[len(event) - rank :] if rank else ()
    if not isinstance(value, SampleSpec):
        shape = spec_shape(value)
        _check_generator(("value",), value, shape)
        return shape
    opts = value.sample
    if opts.shape is not None:
        vbatch = tuple(opts.shape)
        try:
            np.broadcast_shapes(vbatch, batch)
        except ValueError:
            raise SemanticError(
                ("value", "sample", "shape"),
                f"sample shape {vbatch} does not broadcast with the batch shape {batch}",
            ) from None
        return vbatch + value_event
    return tuple(opts.sample_shape or ()) + batch + value_event


def _check_value_dtype(spec: CaseSpec, family: reference.Family) -> None:
    if spec.value_dtype == "float":
        return
    if not family.value.discrete:
        raise SemanticError(
            ("value_dtype",),
            f"value_dtype {spec.value_dtype} needs a discrete family; {family.name} is continuous",
        )
    value = spec.value
    if not isinstance(value, SampleSpec) and not hasattr(value, "generator"):
        flat = np.asarray(value, dtype=np.float64).ravel()
        if flat.size and not np.all(np.isfinite(flat) & (flat == np.round(flat))):
            raise SemanticError(("value",), f"value_dtype {spec.value_dtype} needs integral values")
        if spec.value_dtype in ("int32", "int64"):
            info = np.iinfo(spec.value_dtype)
            if flat.size and not np.all((flat >= info.min) & (flat <= info.max)):
                raise SemanticError(
                    ("value",), f"value outside the range of value_dtype {spec.value_dtype}"
                )


def differentiable(
    spec: CaseSpec, family: reference.Family, parametrization: str
) -> dict[str, str]:
    """Every input of the case → why a gradient check cannot differentiate it ("" if it can)."""
    out = {}
    for name, info in family.params(parametrization).items():
        if info.static:
            out[name] = "static (it sets shapes, not values)"
        elif not info.differentiable:
            out[name] = f"not differentiable ({info.domain})"
        elif spec.param_dtypes.get(name, "float") != "float":
            out[name] = f"integer-valued here (param_dtypes: {spec.param_dtypes[name]})"
        else:
            out[name] = ""
    if family.value.discrete:
        out["value"] = "discrete (the family's support is countable)"
    elif spec.value_dtype != "float":
        out["value"] = f"integer-valued here (value_dtype: {spec.value_dtype})"
    else:
        out["value"] = ""
    return out


def _check_grad_wrt(spec: CaseSpec, family: reference.Family, parametrization: str) -> None:
    if spec.grad_wrt is None:
        return
    why_not = differentiable(spec, family, parametrization)
    for i, name in enumerate(spec.grad_wrt):
        if name not in why_not:
            raise SemanticError(
                ("grad_wrt", i), "grad_wrt " + unknown_name("input", name, why_not, "is no")
            )
        if why_not[name]:
            raise SemanticError(
                ("grad_wrt", i), f"grad_wrt names {name!r}, which is {why_not[name]}"
            )


def _check_expect(spec: CaseSpec, batch, event, lp_shape) -> None:
    if spec.expect is None:
        return
    for key, actual in (
        ("batch_shape", batch),
        ("event_shape", event),
        ("log_prob_shape", lp_shape),
    ):
        stated = getattr(spec.expect, key)
        if stated is not None and tuple(stated) != tuple(actual):
            raise SemanticError(
                ("expect", key),
                f"expect.{key} {tuple(stated)} disagrees with the oracle's {tuple(actual)}",
            )


def _check_names(spec: CaseSpec, known: Known) -> None:
    for key, names in (("frameworks", known.frameworks), ("checks", known.checks)):
        listed = getattr(spec, key)
        if listed is None or names is None:
            continue
        for i, name in enumerate(listed):
            if name not in names:
                raise SemanticError((key, i), unknown_name(key[:-1], name, names, "is no"))
