"""What every oracle transform is, so that checks can hold the frameworks' transforms to one
contract: a map between two named spaces, its inverse, its log|det J| and its shapes.

A :class:`Transform` is built from its parameters (float64 arrays, or structural settings
such as a reshape's shapes) and evaluates in float64. ``log_abs_det_jacobian(x, y)`` is
log|det ∂y/∂x| summed over the domain's event dims, shaped like the batch (the broadcast of
``x``'s batch and the parameters'), as the frameworks return it. Where the domain and the
codomain differ in dimension (stick breaking, correlation Cholesky factors, …) the Jacobian is
taken in the coordinates of the codomain each transform names in its docstring — the
coordinates the frameworks' closed forms use.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np

from ..declarations import OracleError


@dataclass(frozen=True, eq=False)
class Space:
    """A domain or codomain by the frameworks' constraint name, with all the event dims it
    takes (an ``independent`` wrapper's included): ``Space("real", 1)`` is ``real_vector``.

    ``low``/``high`` are the bounds of ``greater_than``, ``less_than`` and ``interval``;
    ``parts``, ``dim`` and ``lengths`` describe a ``cat`` or ``stack`` of spaces.
    """

    name: str
    event_dim: int
    low: Any = None
    high: Any = None
    parts: tuple[Space, ...] = ()
    dim: int = 0
    lengths: tuple[int, ...] = ()

    def independent(self, ndims: int) -> Space:
        """This space with ``ndims`` more rightmost dims taken as one event."""
        return replace(self, event_dim=self.event_dim + ndims)

    def __eq__(self, other: object) -> bool:
        """Same name, event dims, bounds (array values compared) and parts."""
        if not isinstance(other, Space):
            return NotImplemented
        same_bounds = all(
            (a is None) == (b is None) and (a is None or np.array_equal(a, b))
            for a, b in ((self.low, other.low), (self.high, other.high))
        )
        return (
            (self.name, self.event_dim, self.dim, self.lengths)
            == (other.name, other.event_dim, other.dim, other.lengths)
            and same_bounds
            and self.parts == other.parts
        )

    __hash__ = None  # type: ignore[assignment]


@dataclass(frozen=True)
class ParamSpec:
    """One parameter a transform takes: how many of its rightmost dims make one value, its
    domain's name, and whether it is a structural setting (a shape, a dim, child transforms)
    rather than an array that broadcasts with the batch."""

    name: str
    event_dim: int = 0
    domain: str = "real"
    static: bool = False
    default: Any = None


def as_array(value: Any) -> np.ndarray:
    """A parameter or an input as float64 (complex inputs stay complex)."""
    arr = np.asarray(value)
    return arr if np.iscomplexobj(arr) else arr.astype(np.float64)


def sum_rightmost(value: np.ndarray, ndims: int) -> np.ndarray:
    """``value`` summed over its ``ndims`` rightmost dims (none for ``ndims <= 0``)."""
    if ndims <= 0:
        return np.asarray(value)
    return np.asarray(value).sum(axis=tuple(range(-ndims, 0)))


def batch_shape(shape: tuple[int, ...], event_dim: int) -> tuple[int, ...]:
    """The leading dims of ``shape`` left after ``event_dim`` event dims."""
    if len(shape) < event_dim:
        raise OracleError(f"shape {shape} has fewer than {event_dim} event dims")
    return tuple(shape[: len(shape) - event_dim])


class Transform(ABC):
    """One transform with its parameters bound. Subclasses set ``name`` (the registry's key),
    ``params`` and ``bijective`` and implement the maps and log|det J|."""

    name: ClassVar[str] = ""
    params: ClassVar[tuple[ParamSpec, ...]] = ()
    bijective: ClassVar[bool] = True

    @property
    @abstractmethod
    def domain(self) -> Space: ...

    @property
    @abstractmethod
    def codomain(self) -> Space: ...

    @abstractmethod
    def forward(self, x: np.ndarray) -> np.ndarray: ...

    @abstractmethod
    def inverse(self, y: np.ndarray) -> np.ndarray: ...

    def log_abs_det_jacobian(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """log|det ∂y/∂x| summed over the domain's event dims, shaped like the batch."""
        raise OracleError(
            f"{self.name} is not bijective: it has no log|det J| (the frameworks raise "
            "NotImplementedError)"
        )

    def forward_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        """The shape of ``forward(x)`` for ``x`` of ``shape``."""
        return tuple(shape)

    def inverse_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        """The shape of ``inverse(y)`` for ``y`` of ``shape``."""
        return tuple(shape)

    @property
    def inv(self) -> Transform:
        """The inverse transform: domain and codomain swapped, log|det J| negated."""
        return Inverse(self)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name})"


class Inverse(Transform):
    """``base`` run backwards: forward is its inverse, log|det J| its negative at (y, x)."""

    name = "inverse"
    params = (ParamSpec("base", static=True),)

    def __init__(self, base: Transform) -> None:
        self.base = base

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return self.base.bijective

    @property
    def domain(self) -> Space:
        return self.base.codomain

    @property
    def codomain(self) -> Space:
        return self.base.domain

    def forward(self, x: np.ndarray) -> np.ndarray:
        return self.base.inverse(x)

    def inverse(self, y: np.ndarray) -> np.ndarray:
        return self.base.forward(y)

    def log_abs_det_jacobian(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return -self.base.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return self.base.inverse_shape(shape)

    def inverse_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return self.base.forward_shape(shape)

    @property
    def inv(self) -> Transform:
        return self.base
