"""ExpandedDistribution(Normal(loc, scale), batch_shape) — NumPyro only (``Normal(…).expand``):
the base's log_prob broadcast to a larger batch shape, and its gradient summed back over the
dims the expansion added. The mathematics is Normal's own (``normal.NORMAL``'s hooks, called on
loc and scale); this family adds the target shape and the check that the base expands to it.

``batch_shape`` is a shape, not an array; the case gives it as ``expand_to``, an array whose
shape is the target batch shape (its entries are never read: the binding passes
``jnp.shape(expand_to)``). The base's batch shape (of loc and scale) must expand to it: where it
does not (a larger base), NumPyro raises and the oracle says the shapes do not fit, so no case
or variant asks for it.
"""

from __future__ import annotations

import numpy as np

from ..core import Arrays, Family, Options, OracleError, ParamInfo, ValueInfo
from .normal import NORMAL


def _base(params: Arrays) -> dict[str, np.ndarray]:
    """The base Normal's parameters: everything but ``expand_to``, whose shape alone counts."""
    return {"loc": params["loc"], "scale": params["scale"]}


class ExpandedDistribution(Family):
    def _event_shape(self, params: Arrays, parametrization: str | None) -> tuple[int, ...]:
        target = np.shape(params["expand_to"])
        base = np.broadcast_shapes(np.shape(params["loc"]), np.shape(params["scale"]))
        fits = len(base) <= len(target) and all(
            b in (1, t) for b, t in zip(base[::-1], target[::-1], strict=False)
        )
        if not fits:
            raise OracleError(
                f"ExpandedDistribution: the base's batch shape {base} does not expand to {target}"
            )
        return ()

    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        return NORMAL._log_prob(_base(params), value, NORMAL.default_parametrization, options)

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        return NORMAL._grad(_base(params), value, NORMAL.default_parametrization, options)

    def _cdf(self, params, value, parametrization, options):
        return NORMAL._cdf(_base(params), value, NORMAL.default_parametrization, options)

    def _sample(self, params, shape, rng, parametrization):
        return NORMAL._sample(_base(params), shape, rng, NORMAL.default_parametrization)


EXPANDED_DISTRIBUTION = ExpandedDistribution(
    name="ExpandedDistribution",
    parametrizations={
        "normal": {
            "loc": ParamInfo(0, "real"),
            "scale": ParamInfo(0, "positive"),
            # Only its shape is read: never differentiated, entries whole numbers (zeros).
            "expand_to": ParamInfo(0, "integer", integer=True, shape_only=True),
        },
    },
    value=ValueInfo(0, "real"),
)
