"""The sampling checks' reproducer scripts: the item's own draws, made by the framework from the
item's seed as the adapter made them (the dialect's :meth:`~conformance.reproducers.dialects.Dialect.draw`),
held to what the item held them to.

A script holds draws to shape, dtype and support with the lines here, the same for every
sampling check; ``sample_fit`` adds its statistics (the check's own functions, their source).
The support a script can state without the oracle is an interval's closed hull for a scalar
draw and finiteness for a vector draw (:func:`outside_draws`); where that would not see what the
oracle saw, no script is written (:func:`script_sees_support_failure`).
"""

from __future__ import annotations

import inspect

import numpy as np

from conformance.checks.draws import draw, expected_shape, outside_support
from conformance.checks.subject import FrameworkError, Subject
from conformance.operations import DrawMode
from conformance.reproducers.dialects import draw_modes_class, requests_literal
from conformance.reproducers.script import Script, array_literal, not_written

Requests = list[tuple[DrawMode, tuple[int, ...]]]


def outside_draws(x, lower, upper, rank):
    """Which draws a script calls outside the support: a scalar draw that is NaN, or outside
    [lower, upper] with neither float neighbour inside (a draw is a rounded number); a vector
    draw with a component that is not finite. Never stricter than the oracle's support."""
    x = np.asarray(x)
    if rank:
        return ~np.all(np.isfinite(x), axis=tuple(range(x.ndim - rank, x.ndim)))
    value = x.astype(np.float64)
    inside = (value >= lower) & (value <= upper)
    if x.dtype.kind == "f":
        for way in (-np.inf, np.inf):
            with np.errstate(over="ignore"):
                near = np.nextafter(x, x.dtype.type(way)).astype(np.float64)
            inside |= (near >= lower) & (near <= upper)
    return ~inside | np.isnan(value)


def _bounds(subject: Subject) -> tuple[np.ndarray, np.ndarray]:
    """LOWER and UPPER as the script states them (±inf for a vector draw: not read)."""
    if subject.law.facts.event_rank:
        return np.array(-np.inf), np.array(np.inf)
    return subject.law.support_bounds()


def script_sees_support_failure(
    subject: Subject, requests: Requests, seed: int, drawn: list[np.ndarray] | None = None
) -> bool:
    """Whether the script's support rule sees what the oracle sees in the item's draws (drawn
    again here, under the item's precision): False where the oracle finds a draw outside the
    support and the script would find none (a vector draw inside the reals but not the
    support), so that no script prints "OK" for a failing item. ``drawn``: the item's own
    draws, where its check kept them."""
    if drawn is None:  # the item's draws, made again
        try:
            with subject.adapter.precision(subject.dtype):
                drawn = draw(subject, requests, seed)
        except FrameworkError:
            return True  # the script's draws raise as the item's did, and it reports that
    lower, upper = _bounds(subject)
    rank = len(subject.expected.event_shape)
    for (_, shape), x in zip(requests, drawn, strict=True):
        if tuple(x.shape) != expected_shape(subject, shape):
            continue  # the script reports the shape, as the item did, before the support
        if outside_support(subject, x) and not np.any(outside_draws(x, lower, upper, rank)):
            return False
    return True


def constants(subject: Subject, seed: int, named: dict[str, Requests]) -> list[str]:
    """The draws' seed, the requests by name, the dtypes allowed and the support's hull."""
    lower, upper = _bounds(subject)
    return [
        "",
        f"SEED = {seed}",
        "",
        "",
        *draw_modes_class(),
        "",
        "",
        *(f"{name} = {requests_literal(requests)}" for name, requests in named.items()),
        f"DTYPE = {subject.dtype!r}",
        "# A discrete law may draw in an integer or boolean dtype (the framework's choice).",
        f"DISCRETE = {subject.law.facts.discrete!r}",
        f"RANK = {len(subject.expected.event_shape)}",
        f"LOWER = {array_literal(np.asarray(lower, np.float64))}  # the support's closed hull",
        f"UPPER = {array_literal(np.asarray(upper, np.float64))}",
    ]


#: Script lines defining ``draw_problems(label, x, sample_shape)``: what is wrong with one
#: request's draws (shape, dtype, support), as a list of lines; ``shape_problems(label,
#: shape, dtype, sample_shape)`` for a traced request's shape and dtype alone.
DRAW_PROBLEMS = [
    *inspect.getsource(outside_draws).splitlines(),
    "",
    "",
    "def dtype_allowed(dtype):",
    "    dtype = np.dtype(dtype)",
    "    return dtype == np.dtype(DTYPE) or (DISCRETE and dtype.kind in 'iub')",
    "",
    "",
    "def shape_problems(label, shape, dtype, sample_shape):",
    "    want = (*sample_shape, *EXPECTED_SHAPES['batch_shape'], *EXPECTED_SHAPES['event_shape'])",
    "    if tuple(shape) != want:",
    "        return [f'{label}: shape {tuple(shape)}, expected {want}']",
    "    if not dtype_allowed(dtype):",
    "        return [f'{label}: dtype {dtype}, expected {DTYPE}']",
    "    return []",
    "",
    "",
    "def draw_problems(label, x, sample_shape):",
    "    wrong = shape_problems(label, x.shape, x.dtype, sample_shape)",
    "    if wrong:",
    "        return wrong",
    "    bad = outside_draws(x, LOWER, UPPER, RANK)",
    "    if not np.any(bad):",
    "        return []",
    "    first = tuple(int(i) for i in np.argwhere(bad)[0])",
    "    return [",
    "        f'{label}: {int(bad.sum())} of {bad.size} draws outside the support or not numbers; '",
    "        f'the first at index {first}: {x[first].tolist()}'",
    "    ]",
]


def drawn(script: Script, subject: Subject, requests: str, into: str) -> list[str]:
    """The dialect's lines that leave ``into``, the draws of the script's list ``requests``."""
    lines = script.dialect.draw(
        {"call": script.call, "arrays": script.arrays, "requests": requests, "into": into}
    )
    if lines is None:
        return not_written("draws")
    return lines


def definitions(script: Script) -> list[str]:
    return script.dialect.draw_definitions({"call": script.call, "arrays": script.arrays})
