"""GaussianRandomWalk(scale σ, num_steps T) on ℝᵀ (NumPyro's): x_0 ~ N(0, σ) and each
increment x_t − x_{t−1} ~ N(0, σ), independent, so

    log p(x) = −T·(log σ + ½·log 2π) − (x_0² + Σ_{t≥1} (x_t − x_{t−1})²)/(2σ²)

— MultivariateNormal(0, σ²·min(s, t)) written on the increments. num_steps is a static
Python int.
"""

from __future__ import annotations

import numpy as np

from .. import projections
from ..constants import HALF_LOG_2PI
from ..core import Arrays, Family, Options, ParamInfo, ValueInfo


def _increments(value: np.ndarray) -> np.ndarray:
    return np.diff(value, axis=-1, prepend=0.0)


class GaussianRandomWalk(Family):
    def _event_shape(self, params: Arrays, parametrization: str | None) -> tuple[int, ...]:
        return (int(np.asarray(params["num_steps"])),)

    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        scale = params["scale"]
        z = _increments(value) / scale[..., None]
        steps = value.shape[-1]
        return -steps * (np.log(scale) + HALF_LOG_2PI) - 0.5 * (z * z).sum(-1)

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        scale = params["scale"]
        inc = _increments(value)
        z = inc / scale[..., None]
        steps = value.shape[-1]
        # ∂/∂x_t = −(d_t − d_{t+1})/σ² with d the increments (d_T = 0).
        nxt = np.concatenate([inc[..., 1:], np.zeros_like(inc[..., :1])], axis=-1)
        return {
            "scale": (-steps + (z * z).sum(-1)) / scale,
            "value": -(inc - nxt) / (scale * scale)[..., None],
        }

    def _projections(self, params, parametrization, options):
        steps = int(np.asarray(params["num_steps"]))
        t = np.arange(1, steps + 1)
        cov = params["scale"][..., None, None] ** 2 * np.minimum(t[:, None], t[None, :])
        mean = np.zeros((*np.shape(params["scale"]), steps))
        return projections.gaussian(mean, cov, projections.vector)

    def _pathwise(self, params, draws, weights, parametrization, options):
        """x = σ·cumsum(ε) (NumPyro's and the law's own construction), so ∂(w·x)/∂σ = w·x/σ."""
        return {"scale": (weights * draws).sum(-1) / params["scale"]}

    def _sample(self, params, shape, rng, parametrization):
        steps = int(np.asarray(params["num_steps"]))
        eps = rng.standard_normal((*shape, steps))
        return np.cumsum(eps, axis=-1) * params["scale"][..., None]

    def _mean(self, params, parametrization, options):
        steps = int(np.asarray(params["num_steps"]))
        return np.zeros((*np.shape(params["scale"]), steps))

    def _variance(self, params, parametrization, options):
        # x_t is the sum of t + 1 steps: (t + 1)·σ².
        steps = int(np.asarray(params["num_steps"]))
        return params["scale"][..., None] ** 2 * np.arange(1.0, steps + 1.0)


GAUSSIAN_RANDOM_WALK = GaussianRandomWalk(
    name="GaussianRandomWalk",
    parametrizations={
        "scale": {
            "scale": ParamInfo(0, "positive"),
            "num_steps": ParamInfo(0, "positive_integer", integer=True, static=True),
        }
    },
    value=ValueInfo(1, "real_vector"),
)
