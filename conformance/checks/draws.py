"""What the sampling checks share: which draws an item asks for and the reading of them."""

from __future__ import annotations

import numpy as np

from conformance.adapters.capabilities import Draws, TracedDrawShapes
from conformance.checks.subject import Subject
from conformance.operations import DrawMode, Operation


def drawing(subject: Subject) -> Draws:
    """The subject's adapter as one that draws: a sampling check runs only where it does."""
    adapter = subject.adapter
    assert isinstance(adapter, Draws), adapter.name
    return adapter


def expected_shape(subject: Subject, sample_shape: tuple[int, ...]) -> tuple:
    """sample_shape + batch_shape + event_shape, from the oracle."""
    exp = subject.expected
    return (*sample_shape, *exp.batch_shape, *exp.event_shape)


def draw(
    subject: Subject, requests: list[tuple[DrawMode, tuple[int, ...]]], seed: int
) -> list[np.ndarray]:
    """The framework's draws for ``requests``, as NumPy arrays."""
    how = subject.adapter.operations.get(Operation.SAMPLE, "draws")
    with subject.framework_call(f"draw ({how})"):
        found = drawing(subject).draw(subject.binding, subject.params(), requests, seed)
    return [subject.numpy(x, "read draws") for x in found]


def draw_shapes(
    subject: Subject, requests: list[tuple[DrawMode, tuple[int, ...]]]
) -> list[tuple[tuple[int, ...], str]] | None:
    """Each request's (shape, dtype) where the framework knows them without drawing, or None."""
    adapter = subject.adapter
    with subject.framework_call("draw shapes (traced)"):
        if not isinstance(adapter, TracedDrawShapes):
            return None
        return adapter.draw_shapes(subject.binding, subject.params(), requests)


def has_rsample(subject: Subject) -> bool:
    with subject.framework_call("has_rsample"):
        return bool(drawing(subject).has_rsample(subject.binding, subject.params()))


def outside_support(subject: Subject, draws: np.ndarray) -> str | None:
    """A description of the draws outside the support (or not numbers), or None."""
    rank = len(subject.expected.event_shape)
    inside = subject.law.in_support(draws)
    if np.all(inside):
        return None
    bad = np.argwhere(~inside)
    first = tuple(int(i) for i in bad[0])
    example = np.asarray(draws)[first]
    shown = example.tolist() if rank else float(example)
    return (
        f"{bad.shape[0]} of {inside.size} draws outside the support or not numbers; "
        f"the first at index {first}: {shown}"
    )
