"""SineSkewed(base, skewness s) (NumPyro's; Ameijeiras-Alonso & Ley 2022) over a base that is
symmetric about its mean on the torus; here the base is Independent(VonMises(loc, concentration),
1), a product of von Mises angles (parametrisation ``von_mises``):

    log p(x) = Σ_i [κ_i·cos(x_i − μ_i) − log(2π·I0(κ_i))] + log1p(Σ_i s_i·sin(x_i − μ_i))

normalised for any ‖s‖₁ ≤ 1 (the skewing term integrates to 0 against a symmetric base).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from .. import projections
from ..constants import CIRCLE, LOG_2PI
from ..core import Arrays, Family, Options, OracleError, ParamInfo, ValueInfo
from .von_mises import VON_MISES


def _fold(grad: np.ndarray, like: np.ndarray) -> np.ndarray:
    """Sum the event axis back to size 1 where the parameter had size 1 there."""
    return grad.sum(-1, keepdims=True) if like.shape[-1] == 1 else grad


class SineSkewed(Family):
    def _event_shape(self, params: Arrays, parametrization: str | None) -> tuple[int, ...]:
        sizes = {np.shape(params[k])[-1] for k in ("loc", "concentration", "skewness")}
        n = np.shape(params["skewness"])[-1]
        if not sizes <= {1, n}:
            raise OracleError(
                f"SineSkewed: event sizes {sorted(sizes)} do not match skewness's {n}"
            )
        return (n,)

    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        kappa, skew = params["concentration"], params["skewness"]
        d = value - params["loc"]
        base = kappa * np.cos(d) - LOG_2PI - (np.log(special.i0e(kappa)) + kappa)
        s = np.broadcast_to(skew, np.broadcast_shapes(skew.shape, d.shape))
        return base.sum(-1) + np.log1p((s * np.sin(d)).sum(-1))

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        kappa, skew = params["concentration"], params["skewness"]
        d = value - params["loc"]
        shape = np.broadcast_shapes(skew.shape, d.shape, kappa.shape)
        s = np.broadcast_to(skew, shape)
        k = np.broadcast_to(kappa, shape)
        w = 1.0 + (s * np.sin(d)).sum(-1, keepdims=True)
        d_x = -k * np.sin(d) + s * np.cos(d) / w
        ratio = special.i1e(k) / special.i0e(k)
        return {
            "loc": _fold(-d_x, params["loc"]),
            "concentration": _fold(np.cos(d) - ratio, kappa),
            "skewness": _fold(np.broadcast_to(np.sin(d) / w, shape), skew),
            "value": d_x,
        }

    def _params_valid(self, params: Arrays, parametrization: str, options: Options) -> np.ndarray:
        ok = super()._params_valid(params, parametrization, options)
        return ok & (np.abs(params["skewness"]).sum(-1) <= 1.0)

    def _projections(self, params, parametrization, options):
        """Each coordinate x_i: the other coordinates' skewing terms integrate to 0 against
        their von Mises factors, so x_i has density vM(x_i; μ_i, κ_i)·(1 + s_i·sin(x_i − μ_i))
        and CDF F_vM(x) + s_i·(e^(κ(cos(π + μ) − 1)) − e^(κ(cos(x − μ) − 1)))/(2π·κ·I0e(κ))
        (∫ sin(t − μ)·e^(κ cos(t − μ)) dt = −e^(κ cos(t − μ))/κ), the difference of
        exponentials taken by expm1 so a small κ keeps its digits."""
        n = np.shape(params["skewness"])[-1]
        shape = (*np.broadcast_shapes(*(np.shape(params[k]) for k in params))[:-1], n)
        loc, kappa, skew = (
            np.broadcast_to(params[k], shape) for k in ("loc", "concentration", "skewness")
        )
        found = []
        for i in projections.coordinates(n):
            mu, k, si = loc[..., i], kappa[..., i], skew[..., i]

            def cdf(x, mu=mu, k=k, si=si):
                x = np.clip(x, -np.pi, np.pi)
                base = VON_MISES.cdf({"loc": mu, "concentration": k}, x)
                at_x = k * (np.cos(x - mu) - 1.0)
                start = k * (np.cos(np.pi + mu) - 1.0)
                term = np.exp(at_x) * np.expm1(start - at_x) / k
                return np.clip(base + si * term / (2.0 * np.pi * special.i0e(k)), 0.0, 1.0)

            found.append(projections.coordinate(i, cdf))
        return found

    def _sample(self, params, shape, rng, parametrization):
        """NumPyro's construction (§2.3): a base draw y, kept with probability (1 + Σ s sin(y − μ))/2,
        reflected about μ otherwise."""
        n = np.shape(params["skewness"])[-1]
        loc = np.broadcast_to(params["loc"], (*shape, n))
        kappa = np.broadcast_to(params["concentration"], (*shape, n))
        skew = np.broadcast_to(params["skewness"], (*shape, n))
        y = loc + rng.vonmises(0.0, kappa)
        keep = rng.random(shape) <= 0.5 * (1.0 + (skew * np.sin(y - loc)).sum(-1))
        x = np.where(keep[..., None], y, 2.0 * loc - y)
        return (x + np.pi) % (2.0 * np.pi) - np.pi


SINE_SKEWED = SineSkewed(
    name="SineSkewed",
    parametrizations={
        "von_mises": {
            "loc": ParamInfo(1, "circular"),
            "concentration": ParamInfo(1, "positive"),
            "skewness": ParamInfo(1, "real"),
        }
    },
    value=ValueInfo(1, CIRCLE),
)
