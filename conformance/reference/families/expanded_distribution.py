"""ExpandedDistribution(Normal(loc, scale), batch_shape) — NumPyro only (``Normal(…).expand``):
the base's log_prob broadcast to a larger batch shape, and its gradient summed back over the
dims the expansion added.

``batch_shape`` is a shape, not an array; the case gives it as ``expand_to``, an array whose
shape is the target batch shape (its entries are never read: the binding passes
``jnp.shape(expand_to)``). The base's batch shape (of loc and scale) must expand to it: where it
does not (a larger base), NumPyro raises and the oracle says the shapes do not fit, so no case
or variant asks for it.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..constants import HALF_LOG_2PI
from ..core import Arrays, Family, Options, OracleError, ParamInfo, ValueInfo


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
        loc, scale = params["loc"], params["scale"]
        z = (value - loc) / scale
        return -0.5 * z * z - np.log(scale) - HALF_LOG_2PI

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        loc, scale = params["loc"], params["scale"]
        z = (value - loc) / scale
        return {"loc": z / scale, "scale": (z * z - 1.0) / scale, "value": -z / scale}

    def _cdf(self, params, value, parametrization, options):
        return special.ndtr((value - params["loc"]) / params["scale"])

    def _sample(self, params, shape, rng, parametrization):
        return params["loc"] + params["scale"] * rng.standard_normal(shape)


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
