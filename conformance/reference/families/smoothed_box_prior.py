"""SmoothedBoxPrior(a, b, sigma) (GPyTorch): a box [a, b] with Gaussian shoulders, per
component of a vector event,

    log p(x) = Σ_i [log N(d_i; 0, σ_i) − log(1 + (b_i − a_i)/(√(2π)·σ_i))],
    d_i = max(|x_i − c_i| − r_i, 0),  c = (a + b)/2,  r = (b − a)/2,

i.e. flat inside the box and a half-Normal's tail outside, normalised (the box holds
(b − a)/(√(2π)σ) of the mass for the tails' 1). Parameters need a < b; a scalar parameter is a
1-vector (GPyTorch views it so), so the event rank is 1.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from .. import projections
from ..constants import HALF_LOG_2PI
from ..core import Arrays, Family, Options, ParamInfo, ValueInfo

SQRT_2PI = float(np.sqrt(2.0 * np.pi))


def _distance(params: Arrays, value: np.ndarray) -> np.ndarray:
    """d = the distance from x to the box, 0 inside; signed as x − nearest point of the box."""
    a, b = params["a"], params["b"]
    return np.where(value > b, value - b, np.where(value < a, value - a, 0.0))


class SmoothedBoxPrior(Family):
    def _event_shape(self, params: Arrays, parametrization: str | None) -> tuple[int, ...]:
        sizes = [np.shape(params[k])[-1] for k in ("a", "b", "sigma")]
        return (int(np.broadcast_shapes(*[(n,) for n in sizes])[0]),)

    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        sigma, width = params["sigma"], params["b"] - params["a"]
        d = _distance(params, value)
        tail = -0.5 * (d / sigma) ** 2 - np.log(sigma) - HALF_LOG_2PI
        return (tail - np.log1p(width / (SQRT_2PI * sigma))).sum(-1)

    def _params_valid(self, params: Arrays, parametrization: str, options: Options) -> np.ndarray:
        return super()._params_valid(params, parametrization, options) & np.all(
            params["a"] < params["b"], axis=-1
        )

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        sigma, width = params["sigma"], params["b"] - params["a"]
        d = _distance(params, value)  # signed: ∂ log p/∂x = −d/σ² on either side
        shape = np.broadcast_shapes(np.shape(value), np.shape(d))
        mass = 1.0 / (SQRT_2PI * sigma + width)  # −∂/∂b of the normaliser's log, ∂/∂a of it
        below, above = value < params["a"], value > params["b"]
        return {
            "a": np.broadcast_to(np.where(below, d / sigma**2, 0.0) + mass, shape),
            "b": np.broadcast_to(np.where(above, d / sigma**2, 0.0) - mass, shape),
            "sigma": np.broadcast_to(d * d / sigma**3 - 1.0 / sigma + width * mass / sigma, shape),
            "value": np.broadcast_to(-d / sigma**2, shape),
        }

    def _projections(self, params, parametrization, options):
        # Each coordinate independently: the box [a, b] with mass w = (b − a)/(b − a + √(2π)σ),
        # and half-normal shoulders of mass (1 − w)/2 on either side.
        a, b, sigma = np.broadcast_arrays(params["a"], params["b"], params["sigma"])
        found = []
        for i in projections.coordinates(a.shape[-1]):
            ai, bi, si = a[..., i], b[..., i], sigma[..., i]
            w = (bi - ai) / (bi - ai + SQRT_2PI * si)

            def cdf(y, ai=ai, bi=bi, si=si, w=w):
                left = (1.0 - w) * special.ndtr((np.minimum(y, ai) - ai) / si)
                inside = w * np.clip((y - ai) / (bi - ai), 0.0, 1.0)
                right = (1.0 - w) * (special.ndtr((np.maximum(y, bi) - bi) / si) - 0.5)
                return left + inside + right

            found.append(projections.coordinate(i, cdf))
        return found

    def _sample(self, params, shape, rng, parametrization):
        a, b, sigma = np.broadcast_arrays(params["a"], params["b"], params["sigma"])
        shape = a.shape  # the batch and the event
        in_box = rng.random(shape) < (b - a) / (b - a + SQRT_2PI * sigma)
        uniform = a + rng.random(shape) * (b - a)
        shoulder = np.abs(rng.standard_normal(shape)) * sigma
        left = rng.random(shape) < 0.5
        tails = np.where(left, a - shoulder, b + shoulder)
        return np.where(in_box, uniform, tails)


SMOOTHED_BOX_PRIOR = SmoothedBoxPrior(
    name="SmoothedBoxPrior",
    parametrizations={
        "a_b_sigma": {
            "a": ParamInfo(1, "real"),
            "b": ParamInfo(1, "real"),
            "sigma": ParamInfo(1, "positive"),
        }
    },
    value=ValueInfo(1, "real_vector"),
)
