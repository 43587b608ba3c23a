"""HorseshoePrior(scale τ) (GPyTorch): what its log_prob computes and documents — the average of
Carvalho, Polson & Scott's (2010) lower and upper bounds on the horseshoe density, taken at
A = (τ/x)²,

    log p(x) = log((lb + ub)/2),   lb = K/2·log(1 + 4A),   ub = K·log(1 + 2A),   K = (2π³)^−½.

It is not the horseshoe density (GPyTorch's docstring says so: "pdf(x) ∼ (lb(x) + ub(x))/2").
The paper's bounds are for τ = 1; the scaled horseshoe's density is p₁(x/τ)/τ, so for τ ≠ 1 the
average is off by a further factor τ (no 1/τ): it integrates to (1 + √2)/√(2π)·τ = 0.963·τ.
The gap to the true density (an integral over the local scale, in
tests/oracle/test_oracle_univariate.py) is docs/findings/univariate.md's.

With t = log A = 2·log(τ/|x|), log(1 + cA) = softplus(t + log c), so neither x → 0 (A → ∞,
log p → +inf at x = 0) nor |x| ≫ τ (A → 0, where 1 + cA rounds to 1) loses the answer; below
t = −30 the sum S = ½·softplus(t + log 4) + softplus(t + log 2) is taken as
4e^t·(1 − 1.5e^t), its expansion (error e^{2t} relative).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..constants import LOG_2
from ..core import Arrays, Family, Options, ParamInfo, ValueInfo

LOG_K = -0.5 * np.log(2.0 * np.pi**3)
LOG_4 = np.log(4.0)
#: Below this t the sum and its derivative are taken from their expansions in e^t.
SERIES_BELOW = -30.0


def _softplus(u: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, u)


def _log_t(params: Arrays, value: np.ndarray) -> np.ndarray:
    """t = log A = 2·log(τ/|x|) (+inf at x = 0)."""
    with np.errstate(divide="ignore"):
        return 2.0 * (np.log(params["scale"]) - np.log(np.abs(value)))


def _log_sum_and_ratio(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """log S and S'/S (d/dt) for S(t) = ½·softplus(t + log 4) + softplus(t + log 2)."""
    far = t < SERIES_BELOW
    tn = np.where(far, 0.0, t)
    with np.errstate(all="ignore"):
        s = 0.5 * _softplus(tn + LOG_4) + _softplus(tn + LOG_2)
        ds = 0.5 * special.expit(tn + LOG_4) + special.expit(tn + LOG_2)
        e = np.exp(np.where(far, t, 0.0))
        log_s = np.where(far, t + LOG_4 + np.log1p(-1.5 * e), np.log(s))
        # S'/S = (4e^t − 12e^{2t} + …)/(4e^t − 6e^{2t} + …) = 1 − 1.5e^t + O(e^{2t}).
        ratio = np.where(far, 1.0 - 1.5 * e, np.where(np.isinf(t), 0.0, ds / s))
    return log_s, ratio


#: The trapezoid rule over v = log λ: step and half-width. With λ = e^v the local scale's
#: HalfCauchy weight is sech(v)/π dv, analytic in a strip, so the rule converges exponentially
#: (1e-16 against mpmath at h = 1/8); e^(−50) of the weight lies beyond the ends.
LOG_SCALE_STEP, LOG_SCALE_HALF_WIDTH = 1.0 / 8.0, 50.0
#: Values integrated at a time (each against every node).
CHUNK = 4096


def _over_local_scale(scale, value, integrand) -> np.ndarray:
    """(1/π)·∫ integrand(x·e^(−v)/τ, v)·sech(v) dv, elementwise over scale and value."""
    v = np.arange(-LOG_SCALE_HALF_WIDTH, LOG_SCALE_HALF_WIDTH + LOG_SCALE_STEP / 2, LOG_SCALE_STEP)
    w = LOG_SCALE_STEP / (np.pi * np.cosh(v))
    scale, value = np.broadcast_arrays(np.asarray(scale, float), np.asarray(value, float))
    flat_scale, flat_value = scale.ravel(), value.ravel()
    out = np.empty(flat_value.shape)
    for start in range(0, flat_value.size, CHUNK):
        part = slice(start, start + CHUNK)
        z = flat_value[part, None] * np.exp(-v) / flat_scale[part, None]
        with np.errstate(over="ignore", invalid="ignore"):
            out[part] = (integrand(z, v) * w).sum(-1)
    return out.reshape(value.shape)


class HorseshoePrior(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        log_s, _ = _log_sum_and_ratio(_log_t(params, value))
        return LOG_K - LOG_2 + log_s

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        _, ratio = _log_sum_and_ratio(_log_t(params, value))
        with np.errstate(divide="ignore", invalid="ignore"):
            return {"scale": 2.0 * ratio / params["scale"], "value": -2.0 * ratio / value}

    def _cdf(self, params, value, parametrization, options):
        """The horseshoe's (what the sampler draws): F(x) = E_λ[Φ(x/(λτ))], λ ~ HalfCauchy(1)
        (:func:`_over_local_scale`)."""
        return _over_local_scale(params["scale"], value, lambda z, v: special.ndtr(z))

    def draw_log_density(self, params, value, parametrization, options):
        """The horseshoe's density E_λ[N(x; 0, (λτ)²)], not log_prob's bounds' average."""
        found = _over_local_scale(
            params["scale"],
            value,
            lambda z, v: np.exp(-0.5 * z * z - v) / np.sqrt(2.0 * np.pi),
        )
        with np.errstate(divide="ignore"):
            return np.log(found / params["scale"])

    def _sample(self, params, shape, rng, parametrization):
        # The horseshoe itself: x ~ Normal(0, λ·τ), λ ~ HalfCauchy(1).
        lam = np.abs(rng.standard_cauchy(size=shape))
        return params["scale"] * lam * rng.standard_normal(size=shape)


HORSESHOE_PRIOR = HorseshoePrior(
    name="HorseshoePrior",
    parametrizations={"scale": {"scale": ParamInfo(0, "positive")}},
    value=ValueInfo(0, "real"),
)
