"""The one pathwise call both mechanisms make, and the script that makes it again.

The adapter draws n values with every parameter copied per draw and returns each draw's own
derivatives and rsample((n,))'s summed gradient (``PathwiseDraws.pathwise_draws``). Where that
call raised, the item's script makes the same call, vector draws included, and raises as the
item did.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from conformance.adapters.capabilities import PathwiseDraws
from conformance.checks.base import Check, CheckResult, Reproducer
from conformance.checks.rsample_grad.evaluation import Evaluation
from conformance.checks.rsample_grad.vector_map import vector_call
from conformance.checks.subject import Subject
from conformance.kinds import Kind
from conformance.operations import Operation
from conformance.reproducers.script import Script, array_literal, not_written


def pathwise_draws(
    check: Check, subject: Subject, names: list[str], n: int, last: Evaluation | None
) -> tuple[np.ndarray | CheckResult, dict, Any, Any, dict]:
    """The adapter's draws and their derivatives by ``names`` (copies per draw), as NumPy
    draws (or a shape failure), with the item's metrics. The call is recorded on ``last``
    where it is this subject's evaluation."""
    adapter = subject.adapter
    assert isinstance(adapter, PathwiseDraws)
    batch = tuple(subject.expected.batch_shape)
    event = tuple(subject.expected.event_shape)
    seed = subject.draw_seed(check.name)
    extra: dict[str, Any] = {}
    if subject.law.facts.event_rank > 0:
        extra = vector_call(subject, names, n)
    if last is not None and last.subject is subject:
        last.call = {"names": list(names), "n": n, **extra}
    how = adapter.operations.get(Operation.SAMPLE, "draws")
    with subject.framework_call(f"rsample and its gradient ({how})"):
        each, per_draw, summed, total = adapter.pathwise_draws(
            subject.binding, subject.params(), names, n, seed, **extra
        )
    metrics: dict = {
        "draws_per_element": n,
        "batch_elements": int(np.prod(batch)) if batch else 1,
        "seed": seed,
        "judged_parameters": names,
    }
    x = subject.numpy(each, "read draws")
    want = (n, *batch, *event)
    if tuple(x.shape) != want:
        failed = check.fail(subject, Kind.SHAPE, f"draws of shape {x.shape}, expected {want}")
        return failed, per_draw, summed, total, metrics
    return x, per_draw, summed, total, metrics


def pathwise_lines(script: Script, vector: bool = False) -> list[str] | None:
    """The script's lines that make the item's pathwise draws and derivatives of the
    parameters in ``NAMES`` as the adapter made them (None: its dialect writes none); a
    ``vector`` draw's parameters copied to their shapes in ``COPIES``, its coordinates weighted
    by ``WEIGHTS``."""
    ctx = {"call": script.call, "arrays": script.arrays, "names": "NAMES"}
    if vector:
        ctx.update(copies="COPIES", weights="WEIGHTS")
    return script.dialect.pathwise(ctx)


def raised_reproducer(check: Check, subject: Subject, call: dict[str, Any]) -> Reproducer:
    """The pathwise call that raised, made again as the adapter made it (its names and
    number of draws, a vector draw's per-draw copies and weights): nothing to compare, the
    script raises as the item did."""
    seed = subject.draw_seed(check.name)

    def constants(script: Script) -> list[str]:
        lines = ["", f"SEED = {seed}", f"N = {call['n']}", f"NAMES = {call['names']!r}"]
        if "copies" in call:
            lines.append(f"COPIES = {call['copies']!r}  # each parameter's shape per draw")
        if "weights" in call:
            lines.append(f"WEIGHTS = {array_literal(call['weights'])}  # of the draw's coordinates")
        return lines

    def body(script: Script) -> list[str]:
        made = pathwise_lines(script, vector="copies" in call)
        if made is None:
            return not_written("pathwise draws")
        return [*made, "print('the draws and their derivatives were made')"]

    return Reproducer(subject, check.name, body, constants)
