"""Independent with fixed structure: Independent(Normal(loc, scale), 1).

Parametrisation ``normal``: ``loc`` and ``scale`` of event rank 1 (the reinterpreted batch dim);
they may broadcast with each other along it, as torch's and NumPyro's Normal do. The value is a
vector; log p(x) = Σ_i log N(x_i | loc_i, scale_i).
"""

from __future__ import annotations

import numpy as np

from .. import projections
from ..constants import HALF_LOG_2PI
from ..core import Arrays, Family, Options, OracleError, ParamInfo, ValueInfo


def _fold(grad: np.ndarray, like: np.ndarray) -> np.ndarray:
    """Sum the event axis back to size 1 where the parameter had size 1 there."""
    return grad.sum(-1, keepdims=True) if like.shape[-1] == 1 else grad


class Independent(Family):
    def _event_shape(self, params: Arrays, parametrization: str | None) -> tuple[int, ...]:
        loc_n, scale_n = np.shape(params["loc"])[-1], np.shape(params["scale"])[-1]
        try:
            return tuple(np.broadcast_shapes((loc_n,), (scale_n,)))
        except ValueError:
            raise OracleError(
                f"Independent(Normal): loc ({loc_n}) and scale ({scale_n}) event sizes do not "
                "broadcast"
            ) from None

    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        loc, scale = params["loc"], params["scale"]
        z = (value - loc) / scale
        return (-0.5 * z * z - np.log(scale) - HALF_LOG_2PI).sum(-1)

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        loc, scale = params["loc"], params["scale"]
        z = (value - loc) / scale
        return {
            "loc": _fold(z / scale, loc),
            "scale": _fold((z * z - 1.0) / scale, scale),
            "value": np.broadcast_to(-z / scale, value.shape),
        }

    def _projections(self, params, parametrization, options):
        loc, scale = np.broadcast_arrays(params["loc"], params["scale"])
        cov = scale[..., :, None] ** 2 * np.eye(loc.shape[-1])
        return projections.gaussian(loc, cov, projections.vector)

    def _pathwise(self, params, draws, weights, parametrization, options):
        """x = loc + scale·ε coordinate by coordinate (torch's and NumPyro's Normal):
        ∂(Σ_j w_j·x_j)/∂loc_j = w_j, ∂/∂scale_j = w_j·ε_j."""
        loc, scale = params["loc"], params["scale"]
        noise = (draws - loc) / scale
        w = np.broadcast_to(weights, noise.shape)
        return {"loc": _fold(w, loc), "scale": _fold(w * noise, scale)}

    def _sample(self, params, shape, rng, parametrization):
        loc, scale = np.broadcast_arrays(params["loc"], params["scale"])
        return loc + scale * rng.standard_normal(loc.shape)

    def _of_base(self, summary: str, params: Arrays) -> np.ndarray:
        """The base Normal's ``summary`` of every coordinate (batch + event): the reinterpreted
        dim is one of its batch dims."""
        from .. import get_family

        return get_family("Normal").summary(
            summary, {"loc": params["loc"], "scale": params["scale"]}
        )

    def _mean(self, params, parametrization, options):
        return self._of_base("mean", params)

    def _variance(self, params, parametrization, options):
        return self._of_base("variance", params)

    def _mode(self, params, parametrization, options):
        return self._of_base("mode", params)

    def _entropy(self, params, parametrization, options):
        # The coordinates are independent: their entropies add.
        return self._of_base("entropy", params).sum(-1)


INDEPENDENT = Independent(
    name="Independent",
    parametrizations={"normal": {"loc": ParamInfo(1, "real"), "scale": ParamInfo(1, "positive")}},
    value=ValueInfo(1, "real_vector"),
)
