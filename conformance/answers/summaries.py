"""The oracle's summary of one case's distribution (its mean, variance, …, entropy) in one dtype,
with the tolerance a framework's answer is held to, as data."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class SummaryAnswer:
    """What the oracle says of one summary; NaN where it is undefined, ±inf where infinite."""

    name: str
    #: ``batch + event`` (``batch`` for the entropy).
    value: np.ndarray
    #: Absolute, elementwise: ULPs of the dtype times 1 + |value| + how far the value moves
    #: when each parameter moves by one relative unit.
    tolerance: np.ndarray


@dataclass(frozen=True, eq=False)
class GradientAnswer:
    """What the oracle says of ∂(Σ cotangent · f)/∂x for each input x it differentiates (a
    KL's parameters of either side, named ``p:<name>`` and ``q:<name>``)."""

    cotangent: np.ndarray
    #: Input → the gradient, shaped as the input.
    grads: dict[str, np.ndarray]
    #: Input → the absolute elementwise tolerance.
    tolerance: dict[str, np.ndarray]
    #: Input → why it is not differentiated (a matrix, a simplex, an integer), for the record.
    left_out: dict[str, str]


@dataclass(frozen=True, eq=False)
class IcdfAnswer:
    """What the oracle says of icdf at one case: the probabilities the framework is given and
    the quantiles it is held to, log_prob-shaped."""

    #: F(value) at the case's inputs rounded to the run's dtype (½ where not judged).
    q: np.ndarray
    #: F⁻¹(q) in float64: the support's ends where q is 0 or 1.
    value: np.ndarray
    #: Absolute, elementwise: ULPs of the dtype times |x| plus how far x moves when q (on the
    #: nearer side, q or 1 − q) and each parameter move by one relative unit.
    tolerance: np.ndarray
    #: The value inside the support and every parameter in its domain.
    judged: np.ndarray
    #: For icdf(cdf(value)) = value: the tolerance above plus the cdf's own, through dx/dq.
    round_trip_tolerance: np.ndarray
