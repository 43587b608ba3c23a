"""The oracle's law of a case's draws, as the sampling checks read it: data and a protocol.

``expect/laws.py``'s ``DrawLaw`` answers from the oracle; a check names only :class:`DrawLaw`
here and reads what it returns: the family's facts the checks decide by
(:class:`FamilyFacts`), the draws' derivatives (:class:`ImplicitDerivatives`), the
projections with known laws (:class:`ProjectedDraws`) and the bounded test functions
(:class:`BoundedTests`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np


@dataclass(frozen=True)
class ParameterFacts:
    """What a sampling check reads of one parameter: its event rank, the structure its
    derivatives are compared in, and whether it sets the batch by its shape alone."""

    event_rank: int
    structure: str
    shape_only: bool


@dataclass(frozen=True)
class FamilyFacts:
    """What the sampling checks read of the case's family, in the case's parametrization."""

    name: str
    #: The value's event rank (0: univariate draws) and whether its law is discrete.
    event_rank: int
    discrete: bool
    parameters: dict[str, ParameterFacts]
    #: The parameters a declared map of noise gives no derivative by, each with why.
    pathwise_without: dict[str, str]
    #: Whether the oracle knows the draws' map of noise, their moments' derivatives, and
    #: bounded test functions' expectations' derivatives.
    has_pathwise: bool
    has_pathwise_moments: bool
    has_bounded_pathwise: bool


@dataclass(frozen=True)
class ProjectedDraws:
    """One projection of every draw, and the CDF at the ends of each projected value's cell."""

    name: str
    values: np.ndarray
    lower: np.ndarray
    upper: np.ndarray


@dataclass(frozen=True)
class ImplicitDerivatives:
    """What implicit reparameterisation says of draws x: dx/dθ = −(∂F/∂θ)(x) / f(x) for each
    parameter, how much that moves when x moves by one relative unit (the tolerance's
    sensitivity), and which draws the oracle can judge (away from the far tails)."""

    derivatives: dict[str, np.ndarray]
    sensitivity: dict[str, np.ndarray]
    #: Per parameter, the draws the oracle judges: a derivative the differences cannot resolve
    #: (a bound far in the tail moves F by less than they see) leaves that parameter's
    #: derivative unjudged there, not the draw's others.
    judged_by: dict[str, np.ndarray]

    @property
    def judged(self) -> np.ndarray:
        """The draws judged for at least one parameter."""
        return np.logical_or.reduce(list(self.judged_by.values()))


@dataclass(frozen=True, eq=False)
class BoundedTests:
    """The bounded test functions g₁, g₂ that judge draws' derivatives in expectation, for the
    run's dtype: the bumps' placement per batch element, the scale they are placed on, each
    parameter's (∂E[g₁]/∂θ, ∂E[g₂]/∂θ), the batch elements judged, and the terms' function
    with its source (a reproducer script defines the terms by it)."""

    centre: np.ndarray
    width: np.ndarray
    log_scale: bool
    derivatives: dict[str, tuple[np.ndarray, np.ndarray]]
    #: Per batch element: placed, converged, and the bumps within the range of the dtype's draws.
    judged: np.ndarray
    #: Why no batch element can be judged ("" where some can).
    unjudged: str
    #: The test functions as an item's metrics state them.
    description: dict[str, Any]
    #: Each draw's g₁'(s)·∂s/∂θ and g₂'(s)·∂s/∂θ, from the draws s and derivatives ∂s/∂θ.
    terms: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]
    #: The source lines that define the terms in a script.
    source: tuple[str, ...]


class DrawLaw(Protocol):
    """The law of one case's draws, at the case's rounded parameters with the binding's
    declared conventions: what the sampling checks hold a framework's draws to."""

    @property
    def kind(self) -> str:
        """``cdf``, ``pmf``, ``projections`` or "" (no law the draws are held to)."""
        ...

    @property
    def facts(self) -> FamilyFacts: ...

    def moments_unjudged(self) -> str:
        """Why the draws' mean pathwise derivatives cannot be judged here ("" where they can)."""
        ...

    def in_support(self, draws: np.ndarray) -> np.ndarray: ...

    def support_bounds(self) -> tuple[np.ndarray, np.ndarray]: ...

    def cdf_cells(self, draws: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None: ...

    def projected(self, draws: np.ndarray) -> list[ProjectedDraws]: ...

    def implicit_derivatives(self, draws: np.ndarray, names: list[str]) -> ImplicitDerivatives: ...

    def pathwise_derivatives(
        self, draws: np.ndarray, names: list[str], weights: np.ndarray | None = None
    ) -> ImplicitDerivatives: ...

    def pathwise_moments(
        self, weights: np.ndarray, batch: tuple[int, ...], names: list[str]
    ) -> dict[str, tuple[np.ndarray, np.ndarray]]: ...

    def bounded_pathwise(
        self, weights: np.ndarray, batch: tuple[int, ...], names: list[str]
    ) -> BoundedTests: ...
