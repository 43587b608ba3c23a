"""TransformedDistribution with fixed structure: Normal(loc, scale) pushed through
AffineTransform(shift, factor) and then SigmoidTransform, so

    y = sigmoid(shift + factor·x),   x ~ Normal(loc, scale),   y in (0, 1),
    log p(y) = log N(x; loc, scale) − log|factor| − log y − log(1 − y),
    x = (logit(y) − shift)/factor,  logit(y) = log y − log1p(−y).

It exercises what every framework's TransformedDistribution does for any chain: inverting
each transform in turn, adding each log|det J| with its sign handled (``factor`` may be
negative), and broadcasting the transforms' parameters with the base's.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..constants import HALF_LOG_2PI
from ..core import Arrays, Family, Options, ParamInfo, ValueInfo


def _pre_image(params: Arrays, value: np.ndarray) -> np.ndarray:
    """x = (logit(y) − shift)/factor: the base Normal's value."""
    logit = np.log(value) - np.log1p(-value)
    return (logit - params["shift"]) / params["factor"]


class TransformedDistribution(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        scale = params["scale"]
        z = (_pre_image(params, value) - params["loc"]) / scale
        base = -0.5 * z * z - np.log(scale) - HALF_LOG_2PI
        return base - np.log(np.abs(params["factor"])) - np.log(value) - np.log1p(-value)

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        scale, factor = params["scale"], params["factor"]
        x = _pre_image(params, value)
        z = (x - params["loc"]) / scale
        d_x = -z / scale  # ∂ log N / ∂x
        y1y = value * (1.0 - value)
        return {
            "loc": z / scale,
            "scale": (z * z - 1.0) / scale,
            "shift": -d_x / factor,
            "factor": -d_x * x / factor - 1.0 / factor,
            "value": d_x / (factor * y1y) - (1.0 - 2.0 * value) / y1y,
        }

    def _cdf(self, params, value, parametrization, options):
        # y = σ(shift + factor·x): y ≤ v where x ≤ pre-image (factor > 0) or x ≥ it (factor < 0).
        y = np.clip(value, 0.0, 1.0)
        with np.errstate(divide="ignore"):
            z = (_pre_image(params, y) - params["loc"]) / params["scale"]
        return special.ndtr(np.where(params["factor"] > 0, z, -z))

    def _sample(self, params, shape, rng, parametrization):
        x = params["loc"] + params["scale"] * rng.standard_normal(shape)
        u = params["shift"] + params["factor"] * x
        return 0.5 * (1.0 + np.tanh(0.5 * u))  # sigmoid without overflow


TRANSFORMED_DISTRIBUTION = TransformedDistribution(
    name="TransformedDistribution",
    parametrizations={
        "normal_affine_sigmoid": {
            "loc": ParamInfo(0, "real"),
            "scale": ParamInfo(0, "positive"),
            "shift": ParamInfo(0, "real"),
            "factor": ParamInfo(0, "nonzero"),
        }
    },
    value=ValueInfo(0, "open_unit_interval"),
)
