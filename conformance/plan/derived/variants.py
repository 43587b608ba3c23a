"""Broadcast-pattern variants derived from each case.

Four of the five reports this suite exists for are batch-shape bugs, found with shapes nobody
had tried. From every valid case this module derives, systematically:

* ``size1-<param>``: that parameter's batch dims set to size 1 (index 0 kept);
* ``full-<param>``: that parameter broadcast to the full batch shape;
* ``value-lead``: the value with an extra leading dim (a fresh draw stacked on it; fresh draws
  stay off unplanned boundary points, see :mod:`conformance.expect.fresh_values`);
* ``value-size1``: the value's batch dims set to size 1 (against a larger parameter batch);
* ``value-batch``: a value whose batch part equals the parameters' batch shape;
* ``pad1``: every array left-padded with a size-1 dim.

Each variant is a :class:`~conformance.cases.loader.Case` of its own (id ``<case>+<variant>``, selectable with ``-k``) whose
inputs are derived from the base case's float64 arrays; its expected shapes and values come from
the oracle, like any case. Variants whose shapes equal the base's or another variant's are
dropped.
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Callable

import numpy as np

from conformance import reference
from conformance.cases.loader import Case
from conformance.check_names import CheckName
from conformance.expect.fresh_values import well_conditioned_draw
from conformance.expect.materialize import sample_with_batch
from conformance.reference import OracleError

Arrays = dict[str, np.ndarray]
#: (base params, base value, draw) → the variant's (params, value). With ``draw`` false a fresh
#: value is a stand-in of the drawn shape (zeros): planning needs the variants' shapes only, and
#: drawing well-conditioned values (oracle evaluations) for every variant of the suite in every
#: process was the largest part of planning; the item that runs a variant draws its value.
Derive = Callable[[Arrays, np.ndarray, bool], tuple[Arrays, np.ndarray]]

#: The one check a variant runs: shapes, values and gradient together (see checks/broadcast).
VARIANT_CHECKS = (CheckName.BROADCAST,)


def _index0(array: np.ndarray, dims: range) -> np.ndarray:
    index = tuple(slice(0, 1) if i in dims else slice(None) for i in range(array.ndim))
    return np.ascontiguousarray(array[index])


def _fresh_value(
    case: Case, params: Arrays, own: np.ndarray, batch: tuple[int, ...], tag: str, draw: bool
) -> np.ndarray:
    """A new value with batch part ``batch``, drawn from the oracle (seeded by case and tag) and
    kept off unplanned boundary points (see :mod:`conformance.expect.fresh_values`); ``own`` is the
    case's value, the fallback. Without ``draw``, zeros of the shape a draw has (``batch`` and
    the value's event shape, which a valid case's value shares with its draws)."""
    family = reference.get_family(case.family)
    if not draw:
        event = own.shape[own.ndim - family.value.event_rank :]
        return np.zeros(tuple(batch) + tuple(event))
    rng = np.random.default_rng(zlib.crc32(f"{case.file}::{case.id}::{tag}".encode()))
    return well_conditioned_draw(
        family,
        params,
        case.parametrization,
        lambda: sample_with_batch(family, params, batch, rng, case.parametrization),
        own,
        integer=case.spec.value_dtype != "float",
    )


def _size1(name: str, batch_rank: int) -> Derive:
    """``name``'s batch dims set to size 1 (its first element along each)."""
    return lambda p, v, draw: ({**p, name: _index0(p[name], range(batch_rank))}, v)


def _full(name: str, event_rank: int, batch: tuple[int, ...]) -> Derive:
    """``name`` broadcast to the full batch shape ``batch``, as its own contiguous array."""

    def derive(p: Arrays, v: np.ndarray, draw: bool) -> tuple[Arrays, np.ndarray]:
        event = p[name].shape[p[name].ndim - event_rank :]
        return {**p, name: np.ascontiguousarray(np.broadcast_to(p[name], batch + event))}, v

    return derive


def derive_variants(case: Case, params: Arrays, value: np.ndarray) -> tuple[list[Case], list[str]]:
    """The variants of ``case`` (whose float64 inputs are ``params`` and ``value``), and a
    message for each variant that could not be derived."""
    family = reference.get_family(case.family)
    par = case.parametrization
    info = family.params(par)
    vrank = family.value.event_rank
    batch = case.batch_shape
    candidates: list[tuple[str, str, Derive]] = []

    for name, pinfo in info.items():
        if pinfo.static:
            continue
        array = params[name]
        nb = array.ndim - pinfo.event_rank
        if any(d > 1 for d in array.shape[:nb]):
            candidates.append(
                (
                    f"size1-{name}",
                    f"{name}'s batch dims set to size 1",
                    _size1(name, nb),
                )
            )
        if tuple(array.shape[:nb]) != tuple(batch):
            candidates.append(
                (
                    f"full-{name}",
                    f"{name} broadcast to the full batch shape {batch}",
                    _full(name, pinfo.event_rank, batch),
                )
            )
    vb = value.shape[: value.ndim - vrank]
    candidates.append(
        (
            "value-lead",
            "the value with an extra leading dim of size 2",
            lambda p, v, draw: (
                p,
                np.stack([v, _fresh_value(case, p, v, vb, "value-lead", draw)]),
            ),
        )
    )
    if any(d > 1 for d in vb):
        candidates.append(
            (
                "value-size1",
                "the value's batch dims set to size 1",
                lambda p, v, draw: (p, _index0(v, range(len(vb)))),
            )
        )
    if tuple(vb) != tuple(batch):
        candidates.append(
            (
                "value-batch",
                f"a value whose batch part equals the batch shape {batch}",
                lambda p, v, draw: (p, _fresh_value(case, p, v, batch, "value-batch", draw)),
            )
        )
    candidates.append(
        (
            "pad1",
            "every array left-padded with a size-1 dim",
            lambda p, v, draw: (
                {k: (a if info[k].static else a[None]) for k, a in p.items()},
                v[None],
            ),
        )
    )

    seen = {_signature(params, value)}
    out: list[Case] = []
    problems: list[str] = []
    for name, description, derive in candidates:
        try:
            new_params, new_value = derive(dict(params), value, False)
            new_params = {k: np.asarray(v, dtype=np.float64) for k, v in new_params.items()}
            new_value = np.asarray(new_value, dtype=np.float64)
            new_batch = family.batch_shape(new_params, par)
            new_lp = family.log_prob_shape(new_params, new_value, par)
        except OracleError:
            continue  # shapes this family does not allow (e.g. padding a static parameter)
        except Exception as exc:
            problems.append(f"variant {name} could not be derived: {type(exc).__name__}: {exc}")
            continue
        signature = _signature(new_params, new_value)
        if signature in seen:
            continue
        seen.add(signature)
        source = case.source.rstrip("\n") + f"\n    # variant {name}: {description}\n"
        out.append(
            dataclasses.replace(
                case,
                source=source,
                batch_shape=tuple(new_batch),
                log_prob_shape=tuple(new_lp),
                variant=name,
                base=case,
                derive=derive,
            )
        )
    return out, problems


def _signature(params: Arrays, value: np.ndarray) -> tuple:
    return (tuple(sorted((k, v.shape) for k, v in params.items())), value.shape)
