"""AsymmetricLaplace(loc, scale, asymmetry κ) (NumPyro): a Laplace with scale·κ on the left of
loc and scale/κ on the right,

    log p = −|x − loc|/s_side − log(scale·κ + scale/κ),   s_side = scale·κ (x < loc), scale/κ.

scipy's ``laplace_asymmetric(kappa=κ, loc, scale)`` is the same density.
"""

from __future__ import annotations

import numpy as np

from ..core import Arrays, Family, Options, ParamInfo, ValueInfo


class AsymmetricLaplace(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        scale, kappa = params["scale"], params["asymmetry"]
        d = value - params["loc"]
        side = np.where(d < 0, scale * kappa, scale / kappa)
        return -np.abs(d) / side - np.log(scale) - np.log(kappa + 1.0 / kappa)

    def _grad(self, params, value, parametrization, options):
        scale, kappa = params["scale"], params["asymmetry"]
        d = value - params["loc"]
        left = d < 0
        # −|d|/side: d/(scale·κ) on the left, −d·κ/scale on the right.
        d_value = np.where(left, 1.0 / (scale * kappa), -kappa / scale)
        d_scale = np.abs(d) / (scale * np.where(left, scale * kappa, scale / kappa)) - 1.0 / scale
        d_kappa = np.where(left, -d / (scale * kappa * kappa), -d / scale) - (
            (1.0 - 1.0 / (kappa * kappa)) / (kappa + 1.0 / kappa)
        )
        return {"loc": -d_value, "scale": d_scale, "asymmetry": d_kappa, "value": d_value}

    def _cdf(self, params, value, parametrization, options):
        # Below loc: κ²/(1 + κ²)·e^{(x − loc)/(scale·κ)}; above: 1 − e^{−κ(x − loc)/scale}/(1 + κ²).
        scale, kappa = params["scale"], params["asymmetry"]
        d = value - params["loc"]
        k2 = kappa * kappa
        with np.errstate(over="ignore"):
            below = k2 / (1.0 + k2) * np.exp(np.minimum(d, 0.0) / (scale * kappa))
            above = 1.0 - np.exp(-kappa * np.maximum(d, 0.0) / scale) / (1.0 + k2)
        return np.where(d < 0.0, below, above)

    def _icdf(self, params, q, parametrization, options):
        loc, scale, kappa = params["loc"], params["scale"], params["asymmetry"]
        k2 = kappa * kappa
        below = scale * kappa * np.log(q * (1.0 + k2) / k2)
        above = -scale / kappa * np.log((1.0 - q) * (1.0 + k2))
        return loc + np.where(q < k2 / (1.0 + k2), below, above)

    def moments_unjudged(self, params: Arrays, parametrization: str | None = None) -> str:
        kappa = np.asarray(params["asymmetry"])
        if np.any((kappa < 0.2) | (kappa > 5.0)):
            return (
                "an asymmetry beyond [0.2, 5]: one side is drawn rarely and far (its scale κ or "
                "1/κ against the other's), so the derivative's mean rests on a few draws"
            )
        return ""

    def _draw_moments(self, params, weights, parametrization, options):
        """x − loc is −scale·κ·e with probability κ²/(1 + κ²), else scale·e/κ (e ~ Exp(1)):
        E[x − loc] = scale·(1/κ − κ), E[(x − loc)²] = 2·scale²·(p·κ² + (1 − p)/κ²)."""
        loc, scale, kappa = params["loc"], params["scale"], params["asymmetry"]
        left = kappa * kappa / (1.0 + kappa * kappa)
        shift = scale * (1.0 / kappa - kappa)
        spread = 2.0 * scale**2 * (left * kappa**2 + (1.0 - left) / kappa**2)
        return weights * (loc + shift), weights**2 * (loc**2 + 2.0 * loc * shift + spread)

    def _sample(self, params, shape, rng, parametrization):
        scale, kappa = params["scale"], params["asymmetry"]
        left = rng.random(size=shape) < kappa * kappa / (1.0 + kappa * kappa)
        e = rng.exponential(size=shape)
        return params["loc"] + np.where(left, -e * scale * kappa, e * scale / kappa)

    def _mean(self, params, parametrization, options):
        # loc + scale·(1/κ − κ), as scale·(1 − κ)(1 + κ)/κ: 1 − κ is exact near κ = 1.
        kappa = params["asymmetry"]
        return params["loc"] + params["scale"] * ((1.0 - kappa) * (1.0 + kappa) / kappa)

    def _variance(self, params, parametrization, options):
        # The two sides' scales l = scale·κ and r = scale/κ: Var = l² + r².
        scale, kappa = params["scale"], params["asymmetry"]
        return (scale * kappa) ** 2 + (scale / kappa) ** 2


ASYMMETRIC_LAPLACE = AsymmetricLaplace(
    name="AsymmetricLaplace",
    parametrizations={
        "loc_scale_asymmetry": {
            "loc": ParamInfo(0, "real"),
            "scale": ParamInfo(0, "positive"),
            "asymmetry": ParamInfo(0, "positive", form_changes=(1.0,)),
        }
    },
    value=ValueInfo(0, "real", kink_at=("loc",)),
)
