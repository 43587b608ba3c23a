"""The oracle's gradient of log_prob as data: the cotangent, the VJP and its tolerance.

``expect/gradients.py`` computes an :class:`ExpectedGrad` (its docstring states the
tolerance); ``expect/expectations.py`` puts it in a binding's structures as a
:class:`GradExpectation`, which the gradient and calling-context checks read.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from conformance.compare import project


@dataclass(frozen=True, eq=False)
class ExpectedGrad:
    cotangent: np.ndarray  # float64 holding values exact in the run's dtype
    wrt: tuple[str, ...]
    grads: dict[str, np.ndarray]
    tolerance: dict[str, np.ndarray]
    structure: dict[str, str]
    #: Elements whose sum Σ_b c_b·∂log_prob_b/∂x has terms beyond the run dtype's range of both
    #: signs: evaluating the terms in that dtype gives inf − inf, so NaN is the only answer a
    #: framework can give there (a property of the cotangent, not of the framework).
    indeterminate: dict[str, np.ndarray]

    def projected(self, name: str, structure: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Expected gradient, tolerance and indeterminate mask of ``name`` in ``structure``."""
        expected = project(self.grads[name], structure)
        tol = np.broadcast_to(project(self.tolerance[name], structure), expected.shape)
        unsure = project(self.indeterminate[name].astype(np.float64), structure) != 0.0
        return expected, tol, np.broadcast_to(unsure, expected.shape)


@dataclass(frozen=True, eq=False)
class GradExpectation:
    """The oracle's gradient for one binding: which inputs, the cotangent, and per input the
    structure it is compared in (the binding's, e.g. a diagonal operator's diagonal)."""

    raw: ExpectedGrad
    structure: dict[str, str]

    @property
    def wrt(self) -> tuple[str, ...]:
        return self.raw.wrt

    @property
    def cotangent(self) -> np.ndarray:
        return self.raw.cotangent

    def compared(self) -> list[str]:
        """The inputs whose gradient is compared (``none``: declared not comparable)."""
        return [n for n in self.wrt if self.structure[n] != "none"]

    def projected(self, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Expected gradient, tolerance and indeterminate mask of ``name`` in its structure."""
        return self.raw.projected(name, self.structure[name])
