"""FoldedDistribution(Normal(loc, scale)) — NumPyro only: |X| for X ~ Normal(loc, scale), the
folded normal on [0, ∞),

    log p(x) = logaddexp(log φ(z₊), log φ(z₋)) − log scale,   z± = (±x − loc)/scale.

Its density at 0 is 2φ(loc/scale)/scale, finite; NumPyro's FoldedDistribution declares support
``positive``, open at 0, so its binding declares ``support_lower: open`` (as Gamma's).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..constants import HALF_LOG_2PI
from ..core import Arrays, Family, Options, ParamInfo, ValueInfo
from .gamma import SUPPORT_LOWER, exclude_zero
from .truncated_normal import log_gauss_mass


def _branches(params: Arrays, value: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """z₊, z₋ and the weight of the + branch, w₊ = φ(z₊)/(φ(z₊) + φ(z₋))."""
    loc, scale = params["loc"], params["scale"]
    z_plus, z_minus = (value - loc) / scale, (-value - loc) / scale
    # log φ(z₋) − log φ(z₊) = (z₊² − z₋²)/2 = −2·x·loc/scale²
    w_plus = 1.0 / (1.0 + np.exp(-2.0 * value * loc / (scale * scale)))
    return z_plus, z_minus, w_plus


def _fold_excess(params: Arrays) -> np.ndarray:
    """δ = E|Y| − |μ| = 2σ·[φ(z) − z·Φ(−z)] ≥ 0 for Y ~ Normal(μ, σ), z = |μ|/σ: what the fold
    adds to the mean (E|Y| = σ·√(2/π)·e^(−z²/2) + |μ|·erf(z/√2), with erf = 1 − erfc)."""
    scale = params["scale"]
    z = np.abs(params["loc"]) / scale
    return 2.0 * scale * (np.exp(-0.5 * z * z - HALF_LOG_2PI) - z * special.ndtr(-z))


class FoldedDistribution(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        scale = params["scale"]
        z_plus, z_minus, _ = _branches(params, value)
        logp = np.logaddexp(-0.5 * z_plus * z_plus, -0.5 * z_minus * z_minus)
        return exclude_zero(logp - HALF_LOG_2PI - np.log(scale), value, options)

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        scale = params["scale"]
        z_plus, z_minus, w_plus = _branches(params, value)
        w_minus = 1.0 - w_plus
        return {
            "loc": (w_plus * z_plus + w_minus * z_minus) / scale,
            "scale": (w_plus * z_plus * z_plus + w_minus * z_minus * z_minus - 1.0) / scale,
            "value": (-w_plus * z_plus + w_minus * z_minus) / scale,
        }

    def _cdf(self, params, value, parametrization, options):
        # P(|Y| ≤ x) = Φ((x − loc)/scale) − Φ((−x − loc)/scale), as the mass of a Gaussian interval.
        loc, scale = params["loc"], params["scale"]
        x = np.maximum(value, 0.0)
        with np.errstate(divide="ignore"):
            mass = np.exp(log_gauss_mass((-x - loc) / scale, (x - loc) / scale, 2.0 * x / scale))
        return np.where(x > 0.0, mass, 0.0)

    def moments_unjudged(self, params: Arrays, parametrization: str | None = None) -> str:
        z = np.abs(np.asarray(params["loc"])) / np.asarray(params["scale"])
        if np.any(z > 2.5):
            return (
                "|loc|/scale above 2.5: fewer than 1 draw in 160 crosses the fold, where the "
                "derivative jumps (d|y|/dθ = sign(y)·dy/dθ), so its mean rests on a few draws"
            )
        return ""

    def _draw_moments(self, params, weights, parametrization, options):
        """|y| for y ~ Normal(μ, σ): E|y| = σ·√(2/π)·e^(−μ²/(2σ²)) + μ·(1 − 2Φ(−μ/σ)),
        E[y²] = μ² + σ²."""
        mu, sigma = params["loc"], params["scale"]
        z = mu / sigma
        mean = sigma * np.sqrt(2.0 / np.pi) * np.exp(-0.5 * z * z) + mu * (
            1.0 - 2.0 * special.ndtr(-z)
        )
        return weights * mean, weights**2 * (mu * mu + sigma * sigma)

    def _sample(self, params, shape, rng, parametrization):
        return np.abs(params["loc"] + params["scale"] * rng.standard_normal(shape))

    def _mean(self, params, parametrization, options):
        return np.abs(params["loc"]) + _fold_excess(params)

    def _variance(self, params, parametrization, options):
        # μ² + σ² − (|μ| + δ)² = σ² − δ·(2|μ| + δ): no μ² is formed to cancel.
        excess = _fold_excess(params)
        return params["scale"] ** 2 - excess * (2.0 * np.abs(params["loc"]) + excess)


FOLDED_DISTRIBUTION = FoldedDistribution(
    name="FoldedDistribution",
    parametrizations={
        "normal": {"loc": ParamInfo(0, "real"), "scale": ParamInfo(0, "positive")},
    },
    value=ValueInfo(0, "nonnegative"),
    options=dict(SUPPORT_LOWER),
)
