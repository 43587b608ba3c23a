"""A case's inputs in one dtype and the oracle's answers for log_prob there, as data.

``expect/materialize.py`` builds them (inputs rounded to the run's dtype, the oracle evaluated
on exactly those numbers); checks and reproducers read them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True, eq=False)
class Inputs:
    """Concrete inputs of a case in one dtype; every float array already holds rounded values."""

    params: dict[str, np.ndarray]
    value: np.ndarray
    dtype: str
    value_dtype: np.dtype
    parametrization: str
    param_dtypes: dict[str, str] = field(default_factory=dict)
    static: frozenset[str] = frozenset()

    def framework_params(self) -> dict[str, np.ndarray]:
        """The parameters in the dtype the framework receives (static ones stay 0-d)."""
        out = {}
        for k, v in self.params.items():
            wanted = self.param_dtypes.get(k, "float")
            out[k] = v.astype(self.dtype if wanted == "float" else wanted)
        return out

    def framework_value(self) -> np.ndarray:
        return self.value.astype(self.value_dtype)

    def shapes(self) -> dict[str, tuple[int, ...]]:
        return {**{k: v.shape for k, v in self.params.items()}, "value": self.value.shape}


@dataclass(frozen=True, eq=False)
class Expected:
    """What the oracle says for one :class:`Inputs`."""

    batch_shape: tuple[int, ...]
    event_shape: tuple[int, ...]
    log_prob_shape: tuple[int, ...]
    log_prob: np.ndarray
    #: Σ over inputs and their elements of |x|·|∂log_prob/∂x| (plus a normwise term for
    #: matrices): how much log_prob moves when every input moves by one relative unit.
    sensitivity: np.ndarray
    event_size: int
    #: Elementwise (log_prob-shaped): value inside the support / every parameter in its domain.
    in_support: np.ndarray
    params_valid: np.ndarray
    options: tuple = ()

    @property
    def valid(self) -> np.ndarray:
        return self.in_support & self.params_valid

    @property
    def all_valid(self) -> bool:
        return bool(np.all(self.valid))


@dataclass(frozen=True, eq=False)
class SiteExpectation:
    """A value drawn for a sample site under effect handlers, and the oracle's answer there."""

    value: np.ndarray  # in the case's value dtype
    log_prob: np.ndarray
    sensitivity: np.ndarray
