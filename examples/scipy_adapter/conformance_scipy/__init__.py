"""A complete third-party adapter: scipy.stats, registered under ``conformance.adapters``.

It shows everything a downstream library implements: its bindings (which scipy object builds
each family, what its parameters are called there), array conversion, shapes and log_prob. The
suite's checks, oracle, tolerances and reports do the rest.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from scipy import stats

from conformance.adapters.api import Adapter, Binding

_DISCRETE = {"bernoulli"}


class ScipyAdapter(Adapter):
    name = "scipy"
    package = "scipy"
    module = "scipy.stats"
    # scipy never raises for bad inputs: it returns nan for invalid parameters and -inf outside
    # the support, which is what the suite holds a non-validating framework to.
    validation = "none"
    bindings: ClassVar = {
        "Normal": (Binding(constructor="scipy.stats.norm"),),
        "Bernoulli": (
            Binding(
                constructor="scipy.stats.bernoulli",
                rename={"probs": "p"},
                parametrizations=("probs",),
            ),
        ),
        "MultivariateNormal": (
            Binding(
                constructor="scipy.stats.multivariate_normal",
                rename={"loc": "mean", "covariance_matrix": "cov"},
                parametrizations=("covariance_matrix",),
            ),
        ),
    }

    def asarray(self, array: np.ndarray, device: str) -> Any:
        return np.array(array)

    def to_numpy(self, array: Any) -> np.ndarray:
        return np.asarray(array)

    def batch_shape(self, dist: Any) -> tuple[int, ...]:
        if isinstance(dist, stats._multivariate.multi_rv_frozen):
            return ()  # scipy's multivariate distributions are never batched
        return tuple(np.broadcast(*dist.args, *dist.kwds.values()).shape)

    def event_shape(self, dist: Any) -> tuple[int, ...]:
        if isinstance(dist, stats._multivariate.multi_rv_frozen):
            return (dist.dim,)
        return ()

    def log_prob(self, dist: Any, value: Any) -> Any:
        if isinstance(dist, stats._multivariate.multi_rv_frozen):
            return dist.logpdf(value)
        if dist.dist.name in _DISCRETE:
            return dist.logpmf(value)
        return dist.logpdf(value)
