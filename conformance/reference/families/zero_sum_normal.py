"""ZeroSumNormal(scale σ, event size n) on the zero-sum hyperplane {x ∈ ℝⁿ: Σ x = 0} (NumPyro's,
after PyMC's; one zero-sum axis here): the isotropic normal of the hyperplane, a Normal(0, σ) of
n − 1 coordinates in an orthonormal basis of it, so with respect to its (n − 1)-dimensional
Lebesgue measure

    log p(x) = −(n − 1)·(log σ + ½·log 2π) − ‖x‖²/(2σ²).

The value's gradient here is the derivative along the hyperplane, −x/σ² (already in it). A
density on a hyperplane has no partial derivative along an ambient coordinate: off it a
framework's log_prob is whatever extension it computes (NumPyro reads the first n − 1
coordinates and the last), so the NumPyro binding declares the value's gradient not comparable
(``structure: {value: none}``). The event size is a static Python int (NumPyro takes
``event_shape=(n,)``).
"""

from __future__ import annotations

import numpy as np

from .. import projections
from ..constants import HALF_LOG_2PI
from ..core import Arrays, Family, Options, ParamInfo, ValueInfo


class ZeroSumNormal(Family):
    def _event_shape(self, params: Arrays, parametrization: str | None) -> tuple[int, ...]:
        return (int(np.asarray(params["event_size"])),)

    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        scale = params["scale"]
        n = value.shape[-1]
        z = value / scale[..., None]
        return -(n - 1) * (np.log(scale) + HALF_LOG_2PI) - 0.5 * (z * z).sum(-1)

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        scale = params["scale"]
        n = value.shape[-1]
        z = value / scale[..., None]
        return {
            "scale": (-(n - 1) + (z * z).sum(-1)) / scale,
            "value": -z / scale[..., None],
        }

    def _projections(self, params, parametrization, options):
        n = int(np.asarray(params["event_size"]))
        cov = params["scale"][..., None, None] ** 2 * (np.eye(n) - 1.0 / n)
        mean = np.zeros((*np.shape(params["scale"]), n))
        return projections.gaussian(mean, cov, projections.vector)

    def _pathwise(self, params, draws, weights, parametrization, options):
        """x = P·(σ·ε), NumPyro's Normal(0, σ) draw through its ZeroSumTransform (P linear), so
        ∂(w·x)/∂σ = w·x/σ."""
        return {"scale": (weights * draws).sum(-1) / params["scale"]}

    def _sample(self, params, shape, rng, parametrization):
        """An iid Normal(0, σ) vector projected onto the hyperplane is its isotropic normal."""
        n = int(np.asarray(params["event_size"]))
        z = rng.standard_normal((*shape, n)) * params["scale"][..., None]
        return z - z.mean(-1, keepdims=True)

    def _mean(self, params, parametrization, options):
        n = int(np.asarray(params["event_size"]))
        return np.zeros((*np.shape(params["scale"]), n))

    def _variance(self, params, parametrization, options):
        # The covariance σ²·(I − 11ᵀ/n) has σ²·(1 − 1/n) on its diagonal.
        n = int(np.asarray(params["event_size"]))
        return np.repeat((params["scale"] ** 2 * ((n - 1.0) / n))[..., None], n, axis=-1)


ZERO_SUM_NORMAL = ZeroSumNormal(
    name="ZeroSumNormal",
    parametrizations={
        "scale": {
            "scale": ParamInfo(0, "positive"),
            "event_size": ParamInfo(0, "positive_integer", integer=True, static=True),
        }
    },
    value=ValueInfo(1, "zero_sum"),
)
