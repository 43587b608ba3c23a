"""What a family declares as data: its parameters and its value, the inputs they make, and the
error for inputs outside them. ``core`` and ``pathwise_law`` both build on it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

Arrays = Mapping[str, np.ndarray]
Options = Mapping[str, Any]


@dataclass(frozen=True)
class ParamInfo:
    """What the oracle knows of one parameter: its event rank and its mathematical domain."""

    event_rank: int
    domain: str
    integer: bool = False
    structure: str = "dense"  # how a gradient is compared: dense | symmetric | lower_triangular
    #: A plain Python number (e.g. LKJCholesky's dimension), not an array: never broadcast,
    #: not part of the batch shape, passed to frameworks as int/float.
    static: bool = False
    #: Values inside the domain where the density changes form at the support's end (Gamma's
    #: concentration 1: the density at 0 goes from +inf to rate to 0): edges worth a case.
    form_changes: tuple[float, ...] = ()
    #: Read for its shape alone (ExpandedDistribution's ``expand_to``: the target batch shape),
    #: so its values carry no batch and copies of the other parameters per draw cannot be
    #: expressed against it.
    shape_only: bool = False

    @property
    def differentiable(self) -> bool:
        return not self.integer


@dataclass(frozen=True)
class ValueInfo:
    """The value's event rank, whether it is discrete, and its support (by name)."""

    event_rank: int
    support: str
    discrete: bool = False
    structure: str = "dense"  # how a gradient w.r.t. the value is compared (see ParamInfo)
    #: Parameters at whose value the density has a kink in the value (|x − loc|): there it has
    #: no derivative, so generated points that land on one compare values only.
    kink_at: tuple[str, ...] = ()


class OracleError(ValueError):
    """Inputs that the oracle cannot evaluate (wrong parameters, shapes that do not broadcast)."""


def as_float64(params: Arrays) -> dict[str, np.ndarray]:
    return {k: np.asarray(v, dtype=np.float64) for k, v in params.items()}
