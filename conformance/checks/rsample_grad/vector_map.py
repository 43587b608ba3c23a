"""Multivariate draws judged draw by draw through their map of standard noise.

A multivariate draw has no implicit-reparameterisation identity; where its map of standard
noise is one the frameworks share and the noise can be read back from the draw
(MultivariateNormal's loc + chol(Σ)·ε, Wishart's Bartlett map, LogisticNormal's stick-breaking
of a normal draw, …: ``reference.Family.pathwise``), each draw's weighted coordinate sum Σ w·x
(:func:`event_weights`: distinct weights) is held to that map's derivatives at the draw's own
noise, structured matrices by the part their tangent space sees (a covariance's symmetric part,
a factor's lower triangle). The comparison itself is the univariate one (:mod:`.by_draw`).

A parameter the draw does not determine (LowRankMultivariateNormal's cov_factor: more noises
than coordinates) is declared by the family (``Family.pathwise_without``) and not judged, with
why. Vector draws get a script only where their call raised (:mod:`.call`): their expected
derivatives need the oracle's structure.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from conformance.checks.subject import Subject


def event_weights(event: tuple[int, ...]) -> np.ndarray:
    """The weights w of a multivariate draw's coordinates in the derivative judged,
    ∂(Σ w·x)/∂θ: distinct (1, 1 + 1/E, …, 2 − 1/E over the E coordinates in C order), so a
    coordinate's derivative is seen apart from the others' (two swapped coordinates, or one
    wrong where another's error cancels it in the plain sum), and a simplex draw's, whose
    coordinates always sum to 1, is seen at all."""
    size = int(np.prod(event)) if event else 1
    return (1.0 + np.arange(size, dtype=np.float64) / size).reshape(event)


def coordinate_weights(subject: Subject) -> np.ndarray:
    """The weights of the draw's coordinates judged in expectation (1 for a univariate draw)."""
    event = tuple(subject.expected.event_shape)
    return event_weights(event) if event else np.ones(())


def vector_call(subject: Subject, names: list[str], n: int) -> dict[str, Any]:
    """What a vector draw's pathwise call takes besides a univariate one's: each parameter's
    shape per draw, (n, *batch, *its event), and the weights of the draw's coordinates."""
    info = subject.law.facts.parameters
    batch = tuple(subject.expected.batch_shape)
    event = tuple(subject.expected.event_shape)
    extra: dict[str, Any] = {}
    extra["copies"] = {
        k: (n, *batch, *np.shape(subject.inputs.params[k])[
            np.ndim(subject.inputs.params[k]) - info[k].event_rank :
        ])
        for k in names
    }  # fmt: skip
    extra["weights"] = event_weights(event)
    return extra


def map_derivatives(subject: Subject) -> Callable[..., Any]:
    """The declared map's derivatives of the draws' weighted coordinate sums, at the noise
    read back from each draw."""
    event = tuple(subject.expected.event_shape)
    return partial(subject.law.pathwise_derivatives, weights=event_weights(event))
