"""ImproperUniform(constraints.greater_than(low), batch_shape = shape of low, ()) — NumPyro only:
log_prob is identically 0 on the support (x > low) and −inf off it. It is not the density of any
probability distribution (its integral is infinite): NumPyro's improper prior for MCMC, where
only log_prob's value, shape, support and gradient (0) matter, which is what is held here.

Its support's end is a parameter (the case's ``low``), as in NumPyro's own example
``ImproperUniform(constraints.greater_than(a), (), ())`` with ``a`` a sampled variable, and
the batch shape is low's shape (the binding passes ``jnp.shape(low)``). The oracle's "sampler"
draws points of the support (there are no samples of an improper distribution): the values the
broadcast variants and the plate/scan sites need.
"""

from __future__ import annotations

import numpy as np

from ..core import Arrays, Family, Options, ParamInfo, Support, ValueInfo


class ImproperUniform(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        return np.zeros(np.broadcast_shapes(np.shape(value), np.shape(params["low"])))

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        zero = np.zeros(np.broadcast_shapes(np.shape(value), np.shape(params["low"])))
        return {"low": zero, "value": zero}

    def support(self, params: Arrays, parametrization: str | None = None) -> Support:
        return Support("real", lower=params["low"], lower_open=True)

    def _sample(self, params, shape, rng, parametrization):
        return params["low"] + rng.exponential(2.0, size=shape)


IMPROPER_UNIFORM = ImproperUniform(
    name="ImproperUniform",
    parametrizations={"greater_than": {"low": ParamInfo(0, "real")}},
    value=ValueInfo(0, "real"),
    no_law=("improper: there is no law to draw from (NumPyro's sample raises NotImplementedError)"),
    no_draws=(
        "improper: there is nothing to draw (NumPyro's sample raises NotImplementedError, "
        "as it documents), so no sampling items"
    ),
)
