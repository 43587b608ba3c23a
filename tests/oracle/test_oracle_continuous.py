"""The continuous univariate oracles (issue 5, part a) against independent references.

* log_prob vs ``scipy.stats`` over moderate parameters, and vs mpmath closed forms (40 digits)
  over wide ones and for the families scipy lacks (Kumaraswamy, ContinuousBernoulli);
* boundary points — +inf, finite and 0 densities at the ends of a support, values outside it,
  parameters outside their domain — where scipy raises, returns nan, or is imprecise;
* every declared convention (``options``) doing exactly what its registry note says;
* closed-form gradients vs ``mpmath.diff`` of the mpmath log density and vs the oracle's own
  Richardson fallback;
* the mpmath references themselves integrate to 1, and the oracle's samplers pass a KS test
  against the reference CDF — so a wrong reference or sampler cannot hide.

Errors are measured as |actual − expected| / max(|expected|, 1): relative, with an absolute floor
of 1 nat, because an absolute error δ in a log density is a relative error δ in the density
(the same floor the conformance tolerance uses). Where a log density is a small difference of
large terms no float64 algorithm can do better than that.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import mpmath
import numpy as np
import pytest
from scipy import special, stats

from conformance import reference
from conformance.reference.core import OracleError
from tests.oracle.mp_partials import (
    CONDITION_ULPS,
    assert_partial_close,
    input_scale,
    sensitivity_terms,
)

RTOL = 1e-12
GRAD_RTOL = 1e-8
#: The Richardson fallback's own truncation error (first step a tenth of the input's scale)
#: reaches ~2e-7 relative on small partials such as TruncatedNormal's ∂/∂low in a tail.
FD_RTOL = 1e-6
MP_DPS = 40
EPS = float(np.finfo(np.float64).eps)

mp = mpmath.mp
Params = dict[str, np.ndarray]
MpParams = dict[str, mpmath.mpf]


def rel_err(actual, expected) -> np.ndarray:
    """|a − e| / max(|e|, 1); 0 where both are the same infinity or both NaN, inf otherwise."""
    a = np.asarray(actual, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64)
    same = (a == e) | (np.isnan(a) & np.isnan(e))
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.abs(a - e) / np.maximum(np.abs(e), 1.0)
    return np.where(same, 0.0, np.where(np.isfinite(err), err, np.inf))


def assert_close(actual, expected, rtol: float = RTOL, what: str = "") -> None:
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    err = rel_err(actual, expected)
    worst = int(np.argmax(err)) if err.size else 0
    assert np.max(err, initial=0.0) <= rtol, (
        f"{what} max err {np.max(err):.3g} at flat index {worst}: "
        f"actual {actual.ravel()[worst]!r}, expected {expected.ravel()[worst]!r}"
    )


# ----- mpmath log densities (40 digits), written from the textbook definitions ---------------
def _mp_log_beta(a, b):
    return mp.loggamma(a) + mp.loggamma(b) - mp.loggamma(a + b)


def mp_beta(p: MpParams, x):
    a, b = p["concentration1"], p["concentration0"]
    return (a - 1) * mp.log(x) + (b - 1) * mp.log(1 - x) - _mp_log_beta(a, b)


def mp_beta_proportion(p: MpParams, x):
    m, c = p["mean"], p["concentration"]
    return mp_beta({"concentration1": m * c, "concentration0": (1 - m) * c}, x)


def mp_gamma(p: MpParams, x):
    a, r = p["concentration"], p["rate"]
    return (a - 1) * mp.log(x) + a * mp.log(r) - r * x - mp.loggamma(a)


def mp_exponential(p: MpParams, x):
    return mp.log(p["rate"]) - p["rate"] * x


def mp_chi2(p: MpParams, x):
    return mp_gamma({"concentration": p["df"] / 2, "rate": mp.mpf(1) / 2}, x)


def mp_student_t(p: MpParams, x):
    nu, z = p["df"], (x - p["loc"]) / p["scale"]
    return (
        mp.loggamma((nu + 1) / 2)
        - mp.loggamma(nu / 2)
        - mp.log(nu * mp.pi) / 2
        - mp.log(p["scale"])
        - (nu + 1) / 2 * mp.log(1 + z * z / nu)
    )


def mp_cauchy(p: MpParams, x):
    z = (x - p["loc"]) / p["scale"]
    return -mp.log(mp.pi * p["scale"]) - mp.log(1 + z * z)


def mp_laplace(p: MpParams, x):
    return -mp.log(2 * p["scale"]) - abs(x - p["loc"]) / p["scale"]


def mp_log_normal(p: MpParams, x):
    z = (mp.log(x) - p["loc"]) / p["scale"]
    return -z * z / 2 - mp.log(x * p["scale"] * mp.sqrt(2 * mp.pi))


def mp_gumbel(p: MpParams, x):
    z = (x - p["loc"]) / p["scale"]
    return -mp.log(p["scale"]) - z - mp.exp(-z)


def mp_half_normal(p: MpParams, x):
    z = x / p["scale"]
    return mp.log(mp.sqrt(2 / mp.pi) / p["scale"]) - z * z / 2


def mp_half_cauchy(p: MpParams, x):
    z = x / p["scale"]
    return mp.log(2 / (mp.pi * p["scale"])) - mp.log(1 + z * z)


def mp_pareto(p: MpParams, x):
    a, s = p["alpha"], p["scale"]
    return mp.log(a) + a * mp.log(s) - (a + 1) * mp.log(x)


def mp_generalized_pareto(p: MpParams, x):
    z, xi = (x - p["loc"]) / p["scale"], p["concentration"]
    if xi == 0:
        return -mp.log(p["scale"]) - z
    return -mp.log(p["scale"]) - (1 / xi + 1) * mp.log1p(xi * z)


def mp_transformed_normal_affine_sigmoid(p: MpParams, y):
    x = (mp.log(y) - mp.log1p(-y) - p["shift"]) / p["factor"]
    base = -(((x - p["loc"]) / p["scale"]) ** 2) / 2 - mp.log(p["scale"]) - mp.log(2 * mp.pi) / 2
    return base - mp.log(abs(p["factor"])) - mp.log(y) - mp.log1p(-y)


def mp_logistic(p: MpParams, x):
    z = (x - p["loc"]) / p["scale"]
    return -z - 2 * mp.log1p(mp.exp(-z)) - mp.log(p["scale"])


def mp_soft_laplace(p: MpParams, x):
    z = (x - p["loc"]) / p["scale"]
    return mp.log(2 / mp.pi) - mp.log(p["scale"]) - mp.log(mp.exp(z) + mp.exp(-z))


def mp_levy(p: MpParams, x):
    c, y = p["scale"], x - p["loc"]
    return mp.log(c / (2 * mp.pi)) / 2 - c / (2 * y) - mp.mpf(3) / 2 * mp.log(y)


def mp_log_uniform(p: MpParams, x):
    return -mp.log(x) - mp.log(mp.log(p["high"]) - mp.log(p["low"]))


def mp_asymmetric_laplace(p: MpParams, x):
    s, k, d = p["scale"], p["asymmetry"], x - p["loc"]
    side = s * k if d < 0 else s / k
    return -abs(d) / side - mp.log(s * k + s / k)


def mp_gompertz(p: MpParams, x):
    c, b = p["concentration"], p["rate"]
    return mp.log(c) + mp.log(b) + b * x - c * mp.expm1(b * x)


def mp_uniform(p: MpParams, x):
    return -mp.log(p["high"] - p["low"])


def mp_von_mises(p: MpParams, x):
    k = p["concentration"]
    return k * mp.cos(x - p["loc"]) - mp.log(2 * mp.pi * mp.besseli(0, k))


def mp_weibull(p: MpParams, x):
    k, s = p["concentration"], p["scale"]
    t = x / s
    return mp.log(k / s) + (k - 1) * mp.log(t) - t**k


def mp_inverse_gamma(p: MpParams, x):
    a, b = p["concentration"], p["rate"]
    return a * mp.log(b) - mp.loggamma(a) - (a + 1) * mp.log(x) - b / x


def mp_kumaraswamy(p: MpParams, x):
    a, b = p["concentration1"], p["concentration0"]
    return mp.log(a * b) + (a - 1) * mp.log(x) + (b - 1) * mp.log(1 - x**a)


def mp_fisher_snedecor(p: MpParams, x):
    d1, d2 = p["df1"], p["df2"]
    return (
        (d1 * mp.log(d1 * x) + d2 * mp.log(d2) - (d1 + d2) * mp.log(d1 * x + d2)) / 2
        - mp.log(x)
        - _mp_log_beta(d1 / 2, d2 / 2)
    )


def _mp_cb(logit, log_lam, log_1m_lam, x):
    """log(C·λ^x·(1 − λ)^(1−x)) with C = 2·atanh(1 − 2λ)/(1 − 2λ) = l/tanh(l/2), l = logit λ.

    Written in the logit so that 40 digits suffice for any λ (1 − 2λ would round to 1 at
    λ = 1e-300), with the limit C = 2 at l = 0.
    """
    log_c = mp.log(2) if logit == 0 else mp.log(logit / mp.tanh(logit / 2))
    return x * log_lam + (1 - x) * log_1m_lam + log_c


def mp_cb_probs(p: MpParams, x):
    lam = p["probs"]
    log_lam, log_1m = mp.log(lam), mp.log1p(-lam)
    return _mp_cb(log_lam - log_1m, log_lam, log_1m, x)


def mp_cb_logits(p: MpParams, x):
    logit = p["logits"]
    return _mp_cb(logit, -mp.log1p(mp.exp(-logit)), -mp.log1p(mp.exp(logit)), x)


def _mp_normal_mass(a, b):
    """Φ(b) − Φ(a) through erfc on the side away from the mode: no cancellation at 40 digits."""
    r = 1 / mp.sqrt(2)
    if a >= 0:
        return (mp.erfc(a * r) - mp.erfc(b * r)) / 2
    if b <= 0:
        return (mp.erfc(-b * r) - mp.erfc(-a * r)) / 2
    return 1 - (mp.erfc(-a * r) + mp.erfc(b * r)) / 2


def mp_truncated_normal(p: MpParams, x):
    loc, s = p["loc"], p["scale"]
    a = (p["low"] - loc) / s if "low" in p else mp.ninf
    b = (p["high"] - loc) / s if "high" in p else mp.inf
    z = (x - loc) / s
    return -z * z / 2 - mp.log(s * mp.sqrt(2 * mp.pi)) - mp.log(_mp_normal_mass(a, b))


# ----- what each family is checked with -------------------------------------------------------
def _logu(rng: np.random.Generator, n: int, lo: float, hi: float) -> np.ndarray:
    return np.exp(rng.uniform(np.log(lo), np.log(hi), n))


Draw = Callable[[np.random.Generator, int], tuple[Params, np.ndarray]]


@dataclass
class Spec:
    family: str
    parametrization: str
    mp_logpdf: Callable[[MpParams, mpmath.mpf], mpmath.mpf]
    moderate: Draw  # parameters and values where scipy is accurate
    wide: Draw  # parameters and values over orders of magnitude (mpmath only)
    scipy: Callable[[Params, np.ndarray], np.ndarray] | None
    grad_points: list[tuple[dict[str, float], float]]
    support: tuple = (0, mpmath.inf)  # integration range for the normalisation check
    norm_params: dict[str, float] = field(default_factory=dict)
    cdf: Callable[[Params, np.ndarray], np.ndarray] | None = None  # for the sampler's KS test
    #: Points for the Richardson cross-check where they differ from ``grad_points``: the
    #: fallback steps by a tenth of max(|x|, 1) in domains it has no rule for (nonnegative,
    #: open_unit_interval, the Uniform's low < high), so points nearer a boundary leave it.
    fd_points: list[tuple[dict[str, float], float]] | None = None

    @property
    def id(self) -> str:
        return f"{self.family}-{self.parametrization}"


def _beta_draw(rng, n, lo=0.1, hi=20.0):
    p = {"concentration1": _logu(rng, n, lo, hi), "concentration0": _logu(rng, n, lo, hi)}
    return p, special.expit(rng.uniform(-4, 4, n))


def _beta_wide(rng, n):
    p = {"concentration1": _logu(rng, n, 1e-3, 1e4), "concentration0": _logu(rng, n, 1e-3, 1e4)}
    return p, special.expit(rng.uniform(-25, 25, n))


def _prop_draw(rng, n):
    return {"mean": rng.uniform(0.05, 0.95, n), "concentration": _logu(rng, n, 0.5, 50)}, (
        special.expit(rng.uniform(-4, 4, n))
    )


def _prop_wide(rng, n):
    p = {"mean": special.expit(rng.uniform(-8, 8, n)), "concentration": _logu(rng, n, 1e-2, 1e4)}
    return p, special.expit(rng.uniform(-20, 20, n))


def _gamma_draw(rng, n):
    a, r = _logu(rng, n, 0.1, 50), _logu(rng, n, 0.1, 10)
    return {"concentration": a, "rate": r}, _logu(rng, n, 0.02, 3) * np.maximum(a, 1) / r


def _gamma_wide(rng, n):
    a, r = _logu(rng, n, 1e-3, 1e5), _logu(rng, n, 1e-5, 1e5)
    return {"concentration": a, "rate": r}, _logu(rng, n, 0.2, 5) * a / r


def _loc_scale_draw(rng, n, spread=3.0):
    loc, scale = rng.normal(0, 3, n), _logu(rng, n, 0.1, 10)
    return {"loc": loc, "scale": scale}, loc + scale * spread * rng.standard_normal(n)


def _loc_scale_wide(rng, n, zmax=1e10):
    loc, scale = rng.normal(0, 100, n), _logu(rng, n, 1e-8, 1e8)
    z = np.sign(rng.standard_normal(n)) * _logu(rng, n, 1e-3, zmax)
    return {"loc": loc, "scale": scale}, loc + scale * z


def _student_draw(rng, n):
    p, x = _loc_scale_draw(rng, n)
    return {"df": _logu(rng, n, 0.5, 100), **p}, x


def _student_wide(rng, n):
    p, x = _loc_scale_wide(rng, n)
    return {"df": _logu(rng, n, 1e-3, 1e10), **p}, x


def _scale_draw(rng, n):
    s = _logu(rng, n, 0.1, 10)
    return {"scale": s}, s * _logu(rng, n, 1e-3, 5)


def _scale_wide(rng, n):
    s = _logu(rng, n, 1e-10, 1e10)
    return {"scale": s}, s * _logu(rng, n, 1e-8, 1e8)


def _lognormal_draw(rng, n):
    p, _ = _loc_scale_draw(rng, n)
    p["scale"] = _logu(rng, n, 0.1, 3)
    return p, np.exp(p["loc"] + p["scale"] * 2 * rng.standard_normal(n))


def _lognormal_wide(rng, n):
    loc, scale = rng.normal(0, 30, n), _logu(rng, n, 1e-4, 30)
    return {"loc": loc, "scale": scale}, np.exp(
        np.clip(loc + scale * 3 * rng.standard_normal(n), -600, 600)
    )


def _gumbel_wide(rng, n):
    loc, scale = rng.normal(0, 100, n), _logu(rng, n, 1e-8, 1e8)
    return {"loc": loc, "scale": scale}, loc + scale * rng.uniform(-30, 600, n)


def _pareto_draw(rng, n):
    s, a = _logu(rng, n, 0.1, 10), _logu(rng, n, 0.2, 20)
    return {"scale": s, "alpha": a}, s * (1 + _logu(rng, n, 1e-3, 100))


def _pareto_wide(rng, n):
    s, a = _logu(rng, n, 1e-10, 1e10), _logu(rng, n, 1e-3, 1e4)
    return {"scale": s, "alpha": a}, s * (1 + _logu(rng, n, 1e-12, 1e12))


def _generalized_pareto_draw(rng, n, lo=-0.9, hi=2.0):
    p = {
        "loc": rng.normal(0, 3, n),
        "scale": _logu(rng, n, 0.1, 10),
        "concentration": rng.uniform(lo, hi, n),
    }
    # A quantile inside the support (bounded above for concentration < 0).
    u = rng.uniform(0.01, 0.99, n)
    xi = p["concentration"]
    return p, p["loc"] + p["scale"] * np.expm1(-xi * np.log1p(-u)) / xi


def _generalized_pareto_wide(rng, n):
    params, x = _generalized_pareto_draw(rng, n, -3.0, 8.0)
    near_zero = rng.random(n) < 0.3  # the exponential limit, from both sides
    params["concentration"] = np.where(
        near_zero, rng.choice([-1.0, 1.0], n) * _logu(rng, n, 1e-12, 1e-3), params["concentration"]
    )
    u = rng.uniform(1e-6, 1 - 1e-6, n)
    xi = params["concentration"]
    x = params["loc"] + params["scale"] * np.expm1(-xi * np.log1p(-u)) / xi
    return params, x


def _transformed_draw(rng, n, spread=1.0):
    p = {
        "loc": rng.normal(0, spread, n),
        "scale": _logu(rng, n, 0.2, 3.0),
        "shift": rng.normal(0, spread, n),
        "factor": rng.choice([-1.0, 1.0], n) * _logu(rng, n, 0.1, 5.0 * spread),
    }
    return p, special.expit(rng.uniform(-6 * spread, 6 * spread, n))


def _transformed_cdf(p: Params, y: np.ndarray) -> np.ndarray:
    x = (np.log(y) - np.log1p(-y) - p["shift"]) / p["factor"]
    below = stats.norm.cdf(x, p["loc"], p["scale"])
    return np.where(np.asarray(p["factor"]) > 0, below, 1.0 - below)


def _loc_scale_draw(rng, n, spread=1.0):
    p = {"loc": rng.normal(0, 3 * spread, n), "scale": _logu(rng, n, 0.05, 20 * spread)}
    return p, p["loc"] + p["scale"] * rng.normal(0, 3 * spread, n)


def _levy_draw(rng, n, spread=1.0):
    p = {"loc": rng.normal(0, 3, n), "scale": _logu(rng, n, 0.01, 10 * spread)}
    return p, p["loc"] + p["scale"] * _logu(rng, n, 0.05, 100 * spread**4)


def _log_uniform_draw(rng, n, spread=1.0):
    low = _logu(rng, n, 1e-3, 10)
    high = low * (1 + _logu(rng, n, 1e-6 if spread > 1 else 0.1, 1e3 * spread))
    return {"low": low, "high": high}, np.exp(rng.uniform(np.log(low), np.log(high)))


def _asymmetric_laplace_draw(rng, n, spread=1.0):
    p = {
        "loc": rng.normal(0, 3, n),
        "scale": _logu(rng, n, 0.05, 20 * spread),
        "asymmetry": _logu(rng, n, 0.2 / spread, 5 * spread),
    }
    return p, p["loc"] + p["scale"] * rng.normal(0, 3 * spread, n)


def _gompertz_draw(rng, n, spread=1.0):
    p = {"concentration": _logu(rng, n, 0.05 / spread, 20 * spread), "rate": _logu(rng, n, 0.1, 5)}
    return p, np.log1p(rng.exponential(1.0, n) / p["concentration"]) / p["rate"]


def _uniform_draw(rng, n):
    low = rng.normal(0, 5, n)
    high = low + _logu(rng, n, 1e-3, 100)
    return {"low": low, "high": high}, low + (high - low) * rng.uniform(0, 1, n)


def _uniform_wide(rng, n):
    low = rng.normal(0, 1e6, n)
    high = low + _logu(rng, n, 1e-6, 1e12)
    return {"low": low, "high": high}, low + (high - low) * rng.uniform(0, 1, n)


def _vm_draw(rng, n):
    p = {"loc": rng.uniform(-3, 3, n), "concentration": _logu(rng, n, 0.05, 50)}
    return p, rng.uniform(-np.pi, np.pi, n)


def _vm_wide(rng, n):
    p = {"loc": rng.normal(0, 10, n), "concentration": _logu(rng, n, 1e-8, 1e6)}
    return p, rng.normal(0, 20, n)


def _weibull_draw(rng, n):
    s, k = _logu(rng, n, 0.1, 10), _logu(rng, n, 0.2, 10)
    return {"scale": s, "concentration": k}, s * _logu(rng, n, 0.01, 3)


def _weibull_wide(rng, n):
    s, k = _logu(rng, n, 1e-10, 1e10), _logu(rng, n, 1e-2, 1e2)
    return {"scale": s, "concentration": k}, s * _logu(rng, n, 1e-20, 3)


def _invgamma_draw(rng, n):
    a, r = _logu(rng, n, 0.2, 30), _logu(rng, n, 0.1, 10)
    return {"concentration": a, "rate": r}, r / (np.maximum(a, 1) * _logu(rng, n, 0.05, 5))


def _invgamma_wide(rng, n):
    a, r = _logu(rng, n, 1e-3, 1e5), _logu(rng, n, 1e-5, 1e5)
    return {"concentration": a, "rate": r}, r / (a * _logu(rng, n, 0.2, 5))


def _kuma_draw(rng, n):
    p = {"concentration1": _logu(rng, n, 0.1, 20), "concentration0": _logu(rng, n, 0.1, 20)}
    return p, special.expit(rng.uniform(-6, 6, n))


def _kuma_wide(rng, n):
    p = {"concentration1": _logu(rng, n, 1e-3, 1e3), "concentration0": _logu(rng, n, 1e-3, 1e3)}
    return p, special.expit(rng.uniform(-20, 20, n))


def _f_draw(rng, n):
    d1, d2 = _logu(rng, n, 0.5, 50), _logu(rng, n, 0.5, 50)
    return {"df1": d1, "df2": d2}, _logu(rng, n, 0.01, 20)


def _f_wide(rng, n):
    d1, d2 = _logu(rng, n, 1e-2, 1e6), _logu(rng, n, 1e-2, 1e6)
    return {"df1": d1, "df2": d2}, _logu(rng, n, 1e-6, 1e6)


def _cb_probs_draw(rng, n):
    return {"probs": special.expit(rng.uniform(-12, 12, n))}, rng.uniform(0, 1, n)


def _cb_probs_wide(rng, n):
    probs = np.concatenate(
        [0.5 + _logu(rng, n // 2, 1e-12, 0.49), special.expit(rng.uniform(-30, 30, n - n // 2))]
    )
    return {"probs": probs}, rng.uniform(0, 1, n)


def _cb_logits_draw(rng, n):
    return {"logits": rng.normal(0, 5, n)}, rng.uniform(0, 1, n)


def _cb_logits_wide(rng, n):
    sign = np.sign(rng.standard_normal(n))
    return {"logits": sign * _logu(rng, n, 1e-12, 500)}, rng.uniform(0, 1, n)


def _tn_draw(which: str) -> Draw:
    def draw(rng, n):
        loc, scale = rng.normal(0, 2, n), _logu(rng, n, 0.2, 5)
        a = rng.uniform(-3, 1.5, n)
        b = a + _logu(rng, n, 0.05, 5)
        p = {"loc": loc, "scale": scale}
        if which in ("two_sided", "left_truncated"):
            p["low"] = loc + scale * a
        if which in ("two_sided", "right_truncated"):
            p["high"] = loc + scale * b
        lo = a if "low" in p else b - 4.0
        hi = b if "high" in p else a + 4.0
        return p, loc + scale * (lo + (hi - lo) * rng.uniform(0.001, 0.999, n))

    return draw


def _tn_wide(which: str) -> Draw:
    def draw(rng, n):
        loc, scale = rng.normal(0, 10, n), _logu(rng, n, 1e-3, 1e3)
        a = rng.uniform(-30, 30, n)
        b = a + _logu(rng, n, 1e-7, 10)
        p = {"loc": loc, "scale": scale}
        if which in ("two_sided", "left_truncated"):
            p["low"] = loc + scale * a
        if which in ("two_sided", "right_truncated"):
            p["high"] = loc + scale * b
        lo = a if "low" in p else b - 3.0
        hi = b if "high" in p else a + 3.0
        return p, loc + scale * (lo + (hi - lo) * rng.uniform(0.01, 0.99, n))

    return draw


def _tn_scipy(p: Params, x: np.ndarray) -> np.ndarray:
    loc, s = p["loc"], p["scale"]
    a = (p["low"] - loc) / s if "low" in p else -np.inf
    b = (p["high"] - loc) / s if "high" in p else np.inf
    return stats.truncnorm.logpdf(x, a, b, loc, s)


def _kuma_cdf(p: Params, x: np.ndarray) -> np.ndarray:
    return -np.expm1(p["concentration0"] * np.log1p(-(x ** p["concentration1"])))


def _cb_cdf(p: Params, x: np.ndarray) -> np.ndarray:
    lam = p["probs"] if "probs" in p else special.expit(p["logits"])
    return (lam**x * (1 - lam) ** (1 - x) + lam - 1) / (2 * lam - 1)


INF = mpmath.inf
SPECS: list[Spec] = [
    Spec(
        "Beta",
        "concentrations",
        mp_beta,
        _beta_draw,
        _beta_wide,
        lambda p, x: stats.beta.logpdf(x, p["concentration1"], p["concentration0"]),
        [
            ({"concentration1": 2.5, "concentration0": 0.7}, 0.3),
            ({"concentration1": 0.4, "concentration0": 12.0}, 0.05),
            ({"concentration1": 30.0, "concentration0": 40.0}, 0.45),
        ],
        support=(0, 1),
        norm_params={"concentration1": 2.5, "concentration0": 1.5},
    ),
    Spec(
        "Beta",
        "mean_concentration",
        mp_beta_proportion,
        _prop_draw,
        _prop_wide,
        lambda p, x: stats.beta.logpdf(
            x, p["mean"] * p["concentration"], (1.0 - p["mean"]) * p["concentration"]
        ),
        [
            ({"mean": 0.3, "concentration": 5.0}, 0.25),
            ({"mean": 0.7, "concentration": 1.2}, 0.9),
            ({"mean": 0.45, "concentration": 60.0}, 0.5),
        ],
        support=(0, 1),
        norm_params={"mean": 0.4, "concentration": 6.0},
    ),
    Spec(
        "Gamma",
        "concentration_rate",
        mp_gamma,
        _gamma_draw,
        _gamma_wide,
        lambda p, x: stats.gamma.logpdf(x, p["concentration"], scale=1.0 / p["rate"]),
        [
            ({"concentration": 2.5, "rate": 1.5}, 0.8),
            ({"concentration": 0.3, "rate": 4.0}, 0.05),
            ({"concentration": 40.0, "rate": 0.5}, 70.0),
        ],
        norm_params={"concentration": 2.5, "rate": 1.5},
        fd_points=[
            ({"concentration": 2.5, "rate": 1.5}, 0.8),
            ({"concentration": 0.3, "rate": 4.0}, 0.5),
            ({"concentration": 40.0, "rate": 0.5}, 70.0),
        ],
    ),
    Spec(
        "Exponential",
        "rate",
        mp_exponential,
        lambda rng, n: ({"rate": (r := _logu(rng, n, 0.01, 100))}, _logu(rng, n, 1e-3, 10) / r),
        lambda rng, n: ({"rate": (r := _logu(rng, n, 1e-30, 1e30))}, _logu(rng, n, 1e-6, 50) / r),
        lambda p, x: stats.expon.logpdf(x, scale=1.0 / p["rate"]),
        [({"rate": 1.5}, 0.8), ({"rate": 0.01}, 300.0), ({"rate": 40.0}, 0.001)],
        norm_params={"rate": 1.5},
    ),
    Spec(
        "Chi2",
        "df",
        mp_chi2,
        lambda rng, n: ({"df": (d := _logu(rng, n, 0.1, 100))}, d * _logu(rng, n, 0.01, 3)),
        lambda rng, n: ({"df": (d := _logu(rng, n, 1e-3, 1e5))}, d * _logu(rng, n, 0.05, 5)),
        lambda p, x: stats.chi2.logpdf(x, p["df"]),
        [({"df": 3.0}, 2.2), ({"df": 0.5}, 0.1), ({"df": 80.0}, 95.0)],
        norm_params={"df": 3.0},
        fd_points=[({"df": 3.0}, 2.2), ({"df": 0.5}, 0.4), ({"df": 80.0}, 95.0)],
    ),
    Spec(
        "StudentT",
        "df_loc_scale",
        mp_student_t,
        _student_draw,
        _student_wide,
        lambda p, x: stats.t.logpdf(x, p["df"], p["loc"], p["scale"]),
        [
            ({"df": 3.0, "loc": 0.5, "scale": 2.0}, -1.2),
            ({"df": 0.7, "loc": -1.0, "scale": 0.3}, 4.0),
            ({"df": 50.0, "loc": 2.0, "scale": 1.5}, 2.7),
        ],
        support=(-INF, INF),
        norm_params={"df": 3.0, "loc": 0.5, "scale": 2.0},
    ),
    Spec(
        "Cauchy",
        "loc_scale",
        mp_cauchy,
        _loc_scale_draw,
        lambda rng, n: _loc_scale_wide(rng, n, zmax=1e200),
        lambda p, x: stats.cauchy.logpdf(x, p["loc"], p["scale"]),
        [
            ({"loc": 0.3, "scale": 1.7}, -0.4),
            ({"loc": -2.0, "scale": 0.1}, 5.0),
            ({"loc": 1.0, "scale": 3.0}, 1.5),
        ],
        support=(-INF, INF),
        norm_params={"loc": 0.3, "scale": 1.7},
    ),
    Spec(
        "Laplace",
        "loc_scale",
        mp_laplace,
        _loc_scale_draw,
        _loc_scale_wide,
        lambda p, x: stats.laplace.logpdf(x, p["loc"], p["scale"]),
        [
            ({"loc": 0.3, "scale": 1.7}, -0.4),
            ({"loc": -2.0, "scale": 0.1}, -1.5),
            ({"loc": 1.0, "scale": 3.0}, 9.0),
        ],
        support=(-INF, INF),
        norm_params={"loc": 0.3, "scale": 1.7},
    ),
    Spec(
        "LogNormal",
        "loc_scale",
        mp_log_normal,
        _lognormal_draw,
        _lognormal_wide,
        lambda p, x: stats.lognorm.logpdf(x, p["scale"], scale=np.exp(p["loc"])),
        [
            ({"loc": 0.3, "scale": 0.7}, 1.4),
            ({"loc": -2.0, "scale": 2.0}, 0.01),
            ({"loc": 3.0, "scale": 0.2}, 25.0),
        ],
        norm_params={"loc": 0.3, "scale": 0.7},
    ),
    Spec(
        "Gumbel",
        "loc_scale",
        mp_gumbel,
        _loc_scale_draw,
        _gumbel_wide,
        lambda p, x: stats.gumbel_r.logpdf(x, p["loc"], p["scale"]),
        [
            ({"loc": 0.3, "scale": 1.7}, -0.4),
            ({"loc": -2.0, "scale": 0.5}, -3.5),
            ({"loc": 1.0, "scale": 3.0}, 12.0),
        ],
        # Below z = −12 the mass is exp(−e^12): nil, and mpmath's exp(e^−z) is slow there.
        support=(mpmath.mpf(-20), INF),
        norm_params={"loc": 0.3, "scale": 1.7},
    ),
    Spec(
        "HalfNormal",
        "scale",
        mp_half_normal,
        _scale_draw,
        _scale_wide,
        lambda p, x: stats.halfnorm.logpdf(x, scale=p["scale"]),
        [({"scale": 1.7}, 0.4), ({"scale": 0.1}, 0.25), ({"scale": 30.0}, 10.0)],
        norm_params={"scale": 1.7},
    ),
    Spec(
        "HalfCauchy",
        "scale",
        mp_half_cauchy,
        _scale_draw,
        _scale_wide,
        lambda p, x: stats.halfcauchy.logpdf(x, scale=p["scale"]),
        [({"scale": 1.7}, 0.4), ({"scale": 0.1}, 2.5), ({"scale": 30.0}, 10.0)],
        norm_params={"scale": 1.7},
    ),
    Spec(
        "Pareto",
        "scale_alpha",
        mp_pareto,
        _pareto_draw,
        _pareto_wide,
        lambda p, x: stats.pareto.logpdf(x, p["alpha"], scale=p["scale"]),
        [
            ({"scale": 1.5, "alpha": 2.5}, 2.4),
            ({"scale": 0.1, "alpha": 0.3}, 50.0),
            ({"scale": 4.0, "alpha": 30.0}, 4.1),
        ],
        support=(mpmath.mpf("1.5"), INF),
        norm_params={"scale": 1.5, "alpha": 2.5},
    ),
    Spec(
        "GeneralizedPareto",
        "loc_scale_concentration",
        mp_generalized_pareto,
        _generalized_pareto_draw,
        _generalized_pareto_wide,
        lambda p, x: stats.genpareto.logpdf(x, p["concentration"], loc=p["loc"], scale=p["scale"]),
        [
            ({"loc": 0.3, "scale": 1.5, "concentration": 0.4}, 2.0),
            ({"loc": 0.0, "scale": 1.0, "concentration": 1e-9}, 0.7),
            ({"loc": 0.0, "scale": 2.0, "concentration": -1.0}, 1.0),
            ({"loc": 1.0, "scale": 0.5, "concentration": -1e-6}, 1.2),
            ({"loc": 0.0, "scale": 2.0, "concentration": -0.5}, 3.0),
            ({"loc": -1.0, "scale": 3.0, "concentration": 2.5}, 40.0),
        ],
        support=(mpmath.mpf(0), INF),
        norm_params={"loc": 0.0, "scale": 1.5, "concentration": 0.3},
        cdf=lambda p, x: stats.genpareto.cdf(x, p["concentration"], loc=p["loc"], scale=p["scale"]),
    ),
    Spec(
        "TransformedDistribution",
        "normal_affine_sigmoid",
        mp_transformed_normal_affine_sigmoid,
        _transformed_draw,
        lambda rng, n: _transformed_draw(rng, n, spread=3.0),
        None,
        [
            ({"loc": 0.3, "scale": 1.2, "shift": -0.5, "factor": 2.0}, 0.4),
            ({"loc": 0.0, "scale": 1.0, "shift": 0.5, "factor": -2.0}, 0.2),
            ({"loc": 1.0, "scale": 0.5, "shift": 2.0, "factor": -0.3}, 0.9999),
            ({"loc": 0.0, "scale": 3.0, "shift": 0.0, "factor": 1.0}, 1e-7),
        ],
        support=(mpmath.mpf(0), mpmath.mpf(1)),
        norm_params={"loc": 0.3, "scale": 1.2, "shift": -0.5, "factor": -2.0},
        cdf=_transformed_cdf,
        fd_points=[
            ({"loc": 0.3, "scale": 1.2, "shift": -0.5, "factor": 2.0}, 0.4),
            ({"loc": 0.0, "scale": 1.0, "shift": 0.5, "factor": -2.0}, 0.6),
        ],
    ),
    Spec(
        "Logistic",
        "loc_scale",
        mp_logistic,
        _loc_scale_draw,
        lambda rng, n: _loc_scale_draw(rng, n, 30.0),
        lambda p, x: stats.logistic.logpdf(x, p["loc"], p["scale"]),
        [({"loc": 0.5, "scale": 2.0}, 1.3), ({"loc": 0.0, "scale": 1.0}, -40.0)],
        support=(-INF, INF),
        norm_params={"loc": 0.5, "scale": 2.0},
        cdf=lambda p, x: stats.logistic.cdf(x, p["loc"], p["scale"]),
    ),
    Spec(
        "SoftLaplace",
        "loc_scale",
        mp_soft_laplace,
        _loc_scale_draw,
        lambda rng, n: _loc_scale_draw(rng, n, 30.0),
        None,
        [({"loc": 0.5, "scale": 2.0}, 1.3), ({"loc": 0.0, "scale": 1.0}, -40.0)],
        support=(-INF, INF),
        norm_params={"loc": 0.5, "scale": 2.0},
        cdf=lambda p, x: 2 / np.pi * np.arctan(np.exp((x - p["loc"]) / p["scale"])),
    ),
    Spec(
        "Levy",
        "loc_scale",
        mp_levy,
        _levy_draw,
        lambda rng, n: _levy_draw(rng, n, 3.0),
        lambda p, x: stats.levy.logpdf(x, p["loc"], p["scale"]),
        [({"loc": 0.5, "scale": 2.0}, 1.7), ({"loc": 1.0, "scale": 0.01}, 1.0001)],
        support=(mpmath.mpf("0.5"), INF),
        norm_params={"loc": 0.5, "scale": 2.0},
        cdf=lambda p, x: stats.levy.cdf(x, p["loc"], p["scale"]),
        fd_points=[({"loc": 0.5, "scale": 2.0}, 1.7), ({"loc": 1.0, "scale": 0.5}, 3.0)],
    ),
    Spec(
        "LogUniform",
        "low_high",
        mp_log_uniform,
        _log_uniform_draw,
        lambda rng, n: _log_uniform_draw(rng, n, 100.0),
        lambda p, x: stats.loguniform.logpdf(x, p["low"], p["high"]),
        [({"low": 0.5, "high": 20.0}, 3.0), ({"low": 1.0, "high": 1.000001}, 1.0000005)],
        support=(mpmath.mpf("0.5"), mpmath.mpf(20)),
        norm_params={"low": 0.5, "high": 20.0},
        cdf=lambda p, x: stats.loguniform.cdf(x, p["low"], p["high"]),
        fd_points=[({"low": 0.5, "high": 20.0}, 3.0), ({"low": 2.0, "high": 50.0}, 7.0)],
    ),
    Spec(
        "AsymmetricLaplace",
        "loc_scale_asymmetry",
        mp_asymmetric_laplace,
        _asymmetric_laplace_draw,
        lambda rng, n: _asymmetric_laplace_draw(rng, n, 30.0),
        lambda p, x: stats.laplace_asymmetric.logpdf(x, p["asymmetry"], p["loc"], p["scale"]),
        [
            ({"loc": 0.3, "scale": 1.2, "asymmetry": 0.7}, -0.5),
            ({"loc": 0.3, "scale": 1.2, "asymmetry": 0.7}, 2.0),
            ({"loc": 0.0, "scale": 2.0, "asymmetry": 3.0}, 1.0),
        ],
        support=(-INF, INF),
        norm_params={"loc": 0.3, "scale": 1.2, "asymmetry": 0.7},
        cdf=lambda p, x: stats.laplace_asymmetric.cdf(x, p["asymmetry"], p["loc"], p["scale"]),
    ),
    Spec(
        "Gompertz",
        "concentration_rate",
        mp_gompertz,
        _gompertz_draw,
        lambda rng, n: _gompertz_draw(rng, n, 30.0),
        lambda p, x: stats.gompertz.logpdf(x, p["concentration"], scale=1 / p["rate"]),
        [
            ({"concentration": 0.5, "rate": 1.5}, 0.7),
            ({"concentration": 3.0, "rate": 0.2}, 5.0),
        ],
        # The survival function is exp(−c·expm1(b·x)): nothing beyond x = 30 (and mpmath's
        # exp of the nodes near ∞ never ends).
        support=(mpmath.mpf(0), mpmath.mpf(30)),
        norm_params={"concentration": 0.5, "rate": 1.5},
        cdf=lambda p, x: stats.gompertz.cdf(x, p["concentration"], scale=1 / p["rate"]),
    ),
    Spec(
        "Uniform",
        "low_high",
        mp_uniform,
        _uniform_draw,
        _uniform_wide,
        lambda p, x: stats.uniform.logpdf(x, p["low"], p["high"] - p["low"]),
        [
            ({"low": -0.5, "high": 2.0}, 0.3),
            ({"low": 10.0, "high": 10.5}, 10.2),
            ({"low": -100.0, "high": 300.0}, 0.0),
        ],
        support=(mpmath.mpf("-0.5"), mpmath.mpf(2)),
        norm_params={"low": -0.5, "high": 2.0},
        fd_points=[
            ({"low": -0.5, "high": 2.0}, 0.3),
            ({"low": 10.0, "high": 12.0}, 11.0),
            ({"low": -100.0, "high": 300.0}, 0.0),
        ],
    ),
    Spec(
        "VonMises",
        "loc_concentration",
        mp_von_mises,
        _vm_draw,
        _vm_wide,
        lambda p, x: stats.vonmises.logpdf(x, p["concentration"], p["loc"]),
        [
            ({"loc": 0.3, "concentration": 2.0}, -0.4),
            ({"loc": -2.0, "concentration": 0.05}, 1.0),
            ({"loc": 1.0, "concentration": 40.0}, 1.1),
        ],
        support=(-mpmath.pi, mpmath.pi),
        norm_params={"loc": 0.3, "concentration": 2.0},
    ),
    Spec(
        "Weibull",
        "scale_concentration",
        mp_weibull,
        _weibull_draw,
        _weibull_wide,
        lambda p, x: stats.weibull_min.logpdf(x, p["concentration"], scale=p["scale"]),
        [
            ({"scale": 1.5, "concentration": 2.5}, 1.1),
            ({"scale": 0.2, "concentration": 0.4}, 0.01),
            ({"scale": 10.0, "concentration": 8.0}, 11.0),
        ],
        norm_params={"scale": 1.5, "concentration": 2.5},
    ),
    Spec(
        "InverseGamma",
        "concentration_rate",
        mp_inverse_gamma,
        _invgamma_draw,
        _invgamma_wide,
        lambda p, x: stats.invgamma.logpdf(x, p["concentration"], scale=p["rate"]),
        [
            ({"concentration": 2.5, "rate": 1.5}, 0.8),
            ({"concentration": 0.3, "rate": 4.0}, 30.0),
            ({"concentration": 40.0, "rate": 20.0}, 0.6),
        ],
        norm_params={"concentration": 2.5, "rate": 1.5},
    ),
    Spec(
        "Kumaraswamy",
        "concentrations",
        mp_kumaraswamy,
        _kuma_draw,
        _kuma_wide,
        None,
        [
            ({"concentration1": 2.5, "concentration0": 0.7}, 0.3),
            ({"concentration1": 0.4, "concentration0": 12.0}, 0.05),
            ({"concentration1": 30.0, "concentration0": 4.0}, 0.93),
        ],
        support=(0, 1),
        norm_params={"concentration1": 2.5, "concentration0": 1.5},
        cdf=_kuma_cdf,
    ),
    Spec(
        "FisherSnedecor",
        "df1_df2",
        mp_fisher_snedecor,
        _f_draw,
        _f_wide,
        lambda p, x: stats.f.logpdf(x, p["df1"], p["df2"]),
        [
            ({"df1": 3.0, "df2": 7.0}, 1.2),
            ({"df1": 1.0, "df2": 0.8}, 0.01),
            ({"df1": 40.0, "df2": 25.0}, 1.1),
        ],
        norm_params={"df1": 3.0, "df2": 7.0},
    ),
    Spec(
        "ContinuousBernoulli",
        "probs",
        mp_cb_probs,
        _cb_probs_draw,
        _cb_probs_wide,
        None,
        [({"probs": 0.3}, 0.2), ({"probs": 0.5004}, 0.7), ({"probs": 0.93}, 0.95)],
        support=(0, 1),
        norm_params={"probs": 0.3},
        cdf=_cb_cdf,
        fd_points=[({"probs": 0.3}, 0.2), ({"probs": 0.5004}, 0.7), ({"probs": 0.85}, 0.95)],
    ),
    Spec(
        "ContinuousBernoulli",
        "logits",
        mp_cb_logits,
        _cb_logits_draw,
        _cb_logits_wide,
        None,
        [({"logits": -0.85}, 0.2), ({"logits": 0.003}, 0.7), ({"logits": 12.0}, 0.95)],
        support=(0, 1),
        norm_params={"logits": -0.85},
        cdf=_cb_cdf,
    ),
    Spec(
        "TruncatedNormal",
        "two_sided",
        mp_truncated_normal,
        _tn_draw("two_sided"),
        _tn_wide("two_sided"),
        _tn_scipy,
        [
            ({"loc": 0.3, "scale": 1.2, "low": -1.0, "high": 2.0}, 0.5),
            ({"loc": 0.0, "scale": 1.0, "low": 5.0, "high": 6.0}, 5.5),
            ({"loc": 1.0, "scale": 0.5, "low": -3.0, "high": -2.5}, -2.9),
        ],
        support=(-1, 2),
        norm_params={"loc": 0.3, "scale": 1.2, "low": -1.0, "high": 2.0},
    ),
    Spec(
        "TruncatedNormal",
        "left_truncated",
        mp_truncated_normal,
        _tn_draw("left_truncated"),
        _tn_wide("left_truncated"),
        _tn_scipy,
        [
            ({"loc": 0.3, "scale": 1.2, "low": -1.0}, 0.5),
            ({"loc": 0.0, "scale": 1.0, "low": 5.0}, 5.5),
            ({"loc": 1.0, "scale": 0.5, "low": -3.0}, 0.9),
        ],
        support=(-1, INF),
        norm_params={"loc": 0.3, "scale": 1.2, "low": -1.0},
    ),
    Spec(
        "TruncatedNormal",
        "right_truncated",
        mp_truncated_normal,
        _tn_draw("right_truncated"),
        _tn_wide("right_truncated"),
        _tn_scipy,
        [
            ({"loc": 0.3, "scale": 1.2, "high": 2.0}, 0.5),
            ({"loc": 0.0, "scale": 1.0, "high": -5.0}, -5.5),
            ({"loc": 1.0, "scale": 0.5, "high": 3.0}, 0.9),
        ],
        support=(-INF, 2),
        norm_params={"loc": 0.3, "scale": 1.2, "high": 2.0},
    ),
]
BY_ID = {s.id: s for s in SPECS}
SCIPY_SPECS = [s for s in SPECS if s.scipy is not None]


def _oracle(spec: Spec) -> reference.Family:
    return reference.get_family(spec.family)


def _mp_eval(spec: Spec, params: Params, x: np.ndarray) -> np.ndarray:
    """The mpmath log density at exactly the float64 inputs, rounded once to float64."""
    out = np.empty(np.shape(x))
    with mp.workdps(MP_DPS):
        for i in np.ndindex(*out.shape):
            p = {k: mpmath.mpf(float(np.broadcast_to(v, out.shape)[i])) for k, v in params.items()}
            out[i] = float(spec.mp_logpdf(p, mpmath.mpf(float(x[i]))))
    return out


# ----- coverage of the task's family list -----------------------------------------------------
def test_every_family_of_this_part_is_registered_and_checked() -> None:
    wanted = {
        "Beta", "Gamma", "Exponential", "Chi2", "StudentT", "Cauchy", "Laplace", "LogNormal",
        "Gumbel", "HalfNormal", "HalfCauchy", "Pareto", "Uniform", "VonMises", "Weibull",
        "InverseGamma", "Kumaraswamy", "FisherSnedecor", "ContinuousBernoulli", "TruncatedNormal",
        "GeneralizedPareto", "TransformedDistribution", "Logistic", "SoftLaplace", "Levy",
        "LogUniform", "AsymmetricLaplace", "Gompertz",
    }  # fmt: skip
    assert wanted <= set(reference.family_names())
    checked = {(s.family, s.parametrization) for s in SPECS}
    for name in wanted:
        for par in reference.get_family(name).parametrizations:
            assert (name, par) in checked, f"{name}.{par} has no reference check"


# ----- log_prob vs scipy.stats and mpmath -------------------------------------------------------
@pytest.mark.parametrize("spec", SCIPY_SPECS, ids=lambda s: s.id)
def test_log_prob_matches_scipy(spec: Spec) -> None:
    params, x = spec.moderate(np.random.default_rng(7), 300)
    got = _oracle(spec).log_prob(params, x, spec.parametrization)
    assert np.all(np.isfinite(got))
    assert_close(got, spec.scipy(params, x), what=f"{spec.id} vs scipy:")


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.id)
@pytest.mark.parametrize("draw", ["moderate", "wide"])
def test_log_prob_matches_mpmath(spec: Spec, draw: str) -> None:
    params, x = getattr(spec, draw)(np.random.default_rng(11), 40)
    got = _oracle(spec).log_prob(params, x, spec.parametrization)
    assert_close(got, _mp_eval(spec, params, x), what=f"{spec.id} ({draw}) vs mpmath:")


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.id)
def test_mpmath_reference_is_normalised(spec: Spec) -> None:
    """∫ exp(log p) over the support is 1: the mpmath formula itself is a density."""
    with mp.workdps(25):
        p = {k: mpmath.mpf(v) for k, v in spec.norm_params.items()}
        lo, hi = spec.support
        mid = p.get("loc", (lo + hi) / 2 if mpmath.isfinite(lo + hi) else lo + 1)
        points = [lo, mid, hi] if lo < mid < hi else [lo, hi]
        total = mp.quad(lambda t: mp.exp(spec.mp_logpdf(p, t)), points)
    assert abs(total - 1) < 1e-10, f"{spec.id}: integrates to {total}"


# ----- boundaries, supports and domains ---------------------------------------------------------
LOG2 = np.log(2.0)
# (family, parametrization, params, value, expected log_prob): ±inf/finite densities at the ends
# of a support, values outside it (-inf), and parameters outside their domain (NaN).
BOUNDARY = [
    ("Beta", "concentrations", {"concentration1": [0.5, 1.0, 2.0], "concentration0": 2.0},
     0.0, [np.inf, LOG2, -np.inf]),
    ("Beta", "concentrations", {"concentration1": 2.0, "concentration0": [0.5, 1.0, 3.0]},
     1.0, [np.inf, LOG2, -np.inf]),
    ("Beta", "concentrations", {"concentration1": 2.0, "concentration0": 3.0},
     [-1e-3, 1.001], [-np.inf, -np.inf]),
    ("Beta", "concentrations",
     {"concentration1": [0.0, -1.0, 1.0], "concentration0": [1.0, 1.0, 0.0]}, 0.5, [np.nan] * 3),
    ("Beta", "mean_concentration", {"mean": [0.25, 0.5], "concentration": 2.0},
     [0.0, 1.0], [np.inf, 0.0]),
    ("Beta", "mean_concentration", {"mean": [0.0, 1.0], "concentration": 2.0}, 0.5, [np.nan] * 2),
    ("Gamma", "concentration_rate", {"concentration": [0.5, 1.0, 3.0], "rate": 2.0},
     0.0, [np.inf, LOG2, -np.inf]),
    ("Gamma", "concentration_rate", {"concentration": 2.0, "rate": [1.0, 0.0, -1.0]},
     [-1e-3, 1.0, 1.0], [-np.inf, np.nan, np.nan]),
    ("Exponential", "rate", {"rate": [0.5, 7.0, 0.0]}, [0.0, 0.0, 1.0],
     [np.log(0.5), np.log(7.0), np.nan]),
    ("Exponential", "rate", {"rate": 1.0}, -1e-300, -np.inf),
    ("Chi2", "df", {"df": [1.0, 2.0, 5.0, 0.0]}, 0.0, [np.inf, np.log(0.5), -np.inf, np.nan]),
    ("HalfNormal", "scale", {"scale": [0.5, 1.0]}, [0.0, -1e-3],
     [0.5 * np.log(2 / np.pi) + LOG2, -np.inf]),
    ("HalfCauchy", "scale", {"scale": [0.5, 1.0]}, [0.0, -1e-3], [np.log(4 / np.pi), -np.inf]),
    ("LogNormal", "loc_scale", {"loc": 0.0, "scale": 1.0}, [0.0, -1.0], [-np.inf, -np.inf]),
    ("Weibull", "scale_concentration", {"scale": 1.0, "concentration": [0.5, 1.0, 3.0]},
     0.0, [-np.inf] * 3),
    ("InverseGamma", "concentration_rate", {"concentration": 2.0, "rate": 1.0}, 0.0, -np.inf),
    ("FisherSnedecor", "df1_df2", {"df1": [1.0, 2.0], "df2": 5.0}, 0.0, [-np.inf] * 2),
    ("Pareto", "scale_alpha", {"scale": [1.0, 0.5, 2.0], "alpha": [0.5, 2.0, 1.5]},
     [1.0, 0.5, 1.999], [np.log(0.5), np.log(4.0), -np.inf]),
    ("GeneralizedPareto", "loc_scale_concentration",
     {"loc": 0.0, "scale": 2.0, "concentration": [-0.5, -0.5, -1.0, -1.0, -2.0, 0.5, 0.5]},
     [0.0, 4.0, 2.0, 2.1, 1.0, -0.1, 0.0],
     [-LOG2, -np.inf, -LOG2, -np.inf, np.inf, -np.inf, -LOG2]),
    ("GeneralizedPareto", "loc_scale_concentration",
     {"loc": 0.0, "scale": [1.0, 0.0, -1.0], "concentration": 0.0}, 1.0, [-1.0, np.nan, np.nan]),
    ("Uniform", "low_high", {"low": [0.0, 0.0, 0.0, 1.0, 2.0], "high": [2.0, 2.0, 2.0, 1.0, 1.0]},
     [0.0, 2.0, 2.001, 0.5, 0.5], [-LOG2, -LOG2, -np.inf, np.nan, np.nan]),
    ("Kumaraswamy", "concentrations", {"concentration1": [0.5, 1.0, 2.0], "concentration0": 2.0},
     0.0, [np.inf, LOG2, -np.inf]),
    ("Kumaraswamy", "concentrations", {"concentration1": 2.0, "concentration0": [0.5, 1.0, 3.0]},
     1.0, [np.inf, LOG2, -np.inf]),
    ("Kumaraswamy", "concentrations", {"concentration1": 1.0, "concentration0": 1.0},
     [0.0, 1.0, -1e-3], [0.0, 0.0, -np.inf]),
    ("ContinuousBernoulli", "probs", {"probs": [0.5, 0.5, 0.0, 1.0, 1.5]},
     [0.0, 1.0, 0.5, 0.5, 0.5], [0.0, 0.0, np.nan, np.nan, np.nan]),
    ("ContinuousBernoulli", "logits", {"logits": [0.0, 0.0, 0.0, np.log(3.0)]},
     [0.0, 1.0, 1.001, 1.0], [0.0, 0.0, -np.inf, np.log(0.75 * np.log(3.0) / 0.5)]),
    ("VonMises", "loc_concentration", {"loc": 0.0, "concentration": [1.0, 0.0]},
     [0.0, 0.0], [1.0 - np.log(2 * np.pi * special.i0(1.0)), np.nan]),
    ("TruncatedNormal", "two_sided", {"loc": 0.0, "scale": 1.0, "low": [-1.0, 1.0], "high": 1.0},
     [1.001, 0.5], [-np.inf, np.nan]),
    ("TruncatedNormal", "left_truncated", {"loc": 0.0, "scale": 1.0, "low": 0.0},
     [-1e-3, 0.0], [-np.inf, np.log(2.0 / np.sqrt(2 * np.pi))]),
    ("TruncatedNormal", "right_truncated", {"loc": 0.0, "scale": [1.0, 0.0], "high": 0.0},
     [1e-3, -1.0], [-np.inf, np.nan]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("family", "parametrization", "params", "value", "expected"),
    BOUNDARY,
    ids=[f"{b[0]}-{i}" for i, b in enumerate(BOUNDARY)],
)
def test_boundaries_supports_and_domains(family, parametrization, params, value, expected) -> None:
    fam = reference.get_family(family)
    params = {k: np.asarray(v, dtype=np.float64) for k, v in params.items()}
    got = fam.log_prob(params, np.asarray(value, dtype=np.float64), parametrization)
    expected = np.broadcast_to(np.asarray(expected, dtype=np.float64), got.shape)
    assert_close(got, expected, rtol=1e-14, what=f"{family}:")


# Boundary values that scipy cannot give (it raises, returns nan, or rounds): mpmath instead.
NEAR_BOUNDARY = [
    ("Beta-concentrations", {"concentration1": [0.5, 3.0], "concentration0": [0.5, 3.0]},
     [1e-300, 1.0 - 2.0**-52]),
    ("Kumaraswamy-concentrations",
     {"concentration1": [2.0, 1e-3, 0.5], "concentration0": [3.0, 2.0, 0.5]},
     [1.0 - 2.0**-52, 1e-300, 0.9999999999]),
    ("Gamma-concentration_rate", {"concentration": [0.5, 3.0], "rate": 2.0}, [1e-300, 1e-300]),
    ("Weibull-scale_concentration", {"scale": 1.0, "concentration": [0.5, 3.0]}, [1e-300, 1e-100]),
    ("FisherSnedecor-df1_df2", {"df1": [1.0, 6.0], "df2": 5.0}, [1e-300, 1e-100]),
    ("Pareto-scale_alpha", {"scale": [1.0, 3.0], "alpha": [1000.0, 1e4]},
     [1.0 + 2.0**-52, 3.0 + 1e-12]),
    ("Cauchy-loc_scale", {"loc": 0.0, "scale": 1.0}, [1e200, -1e300]),
    ("StudentT-df_loc_scale", {"df": [3.0, 1e10], "loc": 0.0, "scale": 1.0}, [1e250, 1.5]),
    ("HalfCauchy-scale", {"scale": 1e-300}, [1e300]),
    ("ContinuousBernoulli-probs", {"probs": [0.5 + 2.0**-40, 1e-300, 1.0 - 2.0**-53]},
     [0.3, 0.7, 0.2]),
    ("ContinuousBernoulli-logits", {"logits": [1e-300, -700.0, 700.0, 1e-8]}, [0.3, 0.1, 0.9, 0.5]),
    ("TruncatedNormal-two_sided",
     {"loc": 0.0, "scale": 1.0, "low": [30.0, -1e-9, -40.0], "high": [30.5, 1e-9, -39.99]},
     [30.1, 0.0, -39.995]),
    ("TruncatedNormal-left_truncated", {"loc": 0.0, "scale": 1.0, "low": [38.0, -38.0]},
     [38.5, 0.0]),
    ("TruncatedNormal-right_truncated", {"loc": 0.0, "scale": 1.0, "high": [-38.0, 38.0]},
     [-38.5, 0.0]),
    ("VonMises-loc_concentration", {"loc": 0.0, "concentration": [1e-300, 1e6]}, [3.0, 1e-4]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("spec_id", "params", "value"), NEAR_BOUNDARY, ids=[n[0] for n in NEAR_BOUNDARY]
)
def test_near_boundaries_match_mpmath(spec_id, params, value) -> None:
    spec = BY_ID[spec_id]
    x = np.asarray(value, dtype=np.float64)
    params = {
        k: np.broadcast_to(np.asarray(v, dtype=np.float64), x.shape) for k, v in params.items()
    }
    got = _oracle(spec).log_prob(params, x, spec.parametrization)
    assert np.all(np.isfinite(got)), got
    assert_close(got, _mp_eval(spec, params, x), what=f"{spec_id} near a boundary:")


# ----- declared conventions (options) ---------------------------------------------------------
@pytest.mark.parametrize(
    ("family", "params"),
    [
        ("Gamma", {"concentration": 1.0, "rate": 2.0}),
        ("Exponential", {"rate": 2.0}),
        ("Chi2", {"df": 2.0}),
        ("HalfNormal", {"scale": 1.5}),
        ("HalfCauchy", {"scale": 1.5}),
    ],
)
def test_support_lower_open_excludes_only_zero(family: str, params: dict) -> None:
    fam = reference.get_family(family)
    params = {k: np.asarray(v) for k, v in params.items()}
    x = np.array([0.0, 1e-300, 0.7, -1.0])
    closed = fam.log_prob(params, x)
    opened = fam.log_prob(params, x, options={"support_lower": "open"})
    assert np.isfinite(closed[0]) and opened[0] == -np.inf
    assert_close(opened[1:], closed[1:], rtol=0.0)
    assert closed[3] == -np.inf


def test_pareto_support_lower_open_at_scale() -> None:
    fam = reference.get_family("Pareto")
    p = {"scale": np.array(2.0), "alpha": np.array(3.0)}
    x = np.array([2.0, np.nextafter(2.0, 3.0), 5.0])
    closed, opened = fam.log_prob(p, x), fam.log_prob(p, x, options={"support_lower": "open"})
    assert_close(closed[0], np.log(1.5), rtol=1e-15)
    assert opened[0] == -np.inf
    assert_close(opened[1:], closed[1:], rtol=0.0)


def test_uniform_support_upper_open_at_high() -> None:
    fam = reference.get_family("Uniform")
    p = {"low": np.array(-1.0), "high": np.array(3.0)}
    x = np.array([-1.0, 3.0, np.nextafter(3.0, 0.0)])
    closed, opened = fam.log_prob(p, x), fam.log_prob(p, x, options={"support_upper": "open"})
    assert_close(closed, np.full(3, -np.log(4.0)), rtol=1e-15)
    assert opened[1] == -np.inf
    assert_close(opened[[0, 2]], closed[[0, 2]], rtol=0.0)


def test_von_mises_real_is_periodic_and_circular_ends_at_pi() -> None:
    fam = reference.get_family("VonMises")
    p = {"loc": np.array(0.4), "concentration": np.array(3.0)}
    x = np.array([-np.pi, np.pi, 3.15, -3.15, 1.0, 1.0 + 2 * np.pi])
    real = fam.log_prob(p, x)
    circ = fam.log_prob(p, x, options={"support": "circular"})
    assert np.all(np.isfinite(real))
    assert_close(real[5], real[4], rtol=1e-14)
    assert np.all(circ[[2, 3, 5]] == -np.inf)
    assert_close(circ[[0, 1, 4]], real[[0, 1, 4]], rtol=0.0)


def test_unknown_option_is_rejected() -> None:
    with pytest.raises(OracleError):
        reference.get_family("Gamma").log_prob(
            {"concentration": np.array(1.0), "rate": np.array(1.0)},
            np.array(1.0),
            options={"support_lower": "half"},
        )


# ----- gradients --------------------------------------------------------------------------------
def _grad_inputs(spec: Spec) -> list[str]:
    fam = _oracle(spec)
    return [*fam.params(spec.parametrization), "value"]


def _mp_partial(spec: Spec, params: dict[str, float], x: float, name: str) -> float:
    with mp.workdps(MP_DPS):
        base = {k: mpmath.mpf(v) for k, v in params.items()}
        xm = mpmath.mpf(x)

        def f(t):
            if name == "value":
                return spec.mp_logpdf(base, t)
            return spec.mp_logpdf({**base, name: t}, xm)

        return float(mp.diff(f, xm if name == "value" else base[name]))


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.id)
def test_grad_matches_mpmath_diff(spec: Spec) -> None:
    fam = _oracle(spec)
    for params, x in spec.grad_points:
        arrays = {k: np.array(v) for k, v in params.items()}
        got = fam.elementwise_grad(arrays, np.array(x), spec.parametrization)
        assert set(got) == set(_grad_inputs(spec))
        for name in got:
            want = _mp_partial(spec, params, x, name)
            err = abs(float(got[name]) - want)
            assert err <= GRAD_RTOL * abs(want) + 1e-14, (
                f"{spec.id} ∂/∂{name} at {params}, x={x}: {float(got[name])!r} vs {want!r}"
            )


# Where a partial is a small sum of much larger terms (large degrees of freedom, sharp von Mises,
# narrow truncation, probabilities near 0 or 1): the regimes the closed forms are regrouped for.
CANCELLING_GRAD_POINTS = [
    ("StudentT-df_loc_scale", {"df": 1e8, "loc": 0.0, "scale": 1.0}, 2.0),
    ("StudentT-df_loc_scale", {"df": 1e5, "loc": 1.0, "scale": 3.0}, -40.0),
    ("FisherSnedecor-df1_df2", {"df1": 1e6, "df2": 5.0}, 1.2),
    ("FisherSnedecor-df1_df2", {"df1": 3.0, "df2": 1e6}, 0.9),
    ("FisherSnedecor-df1_df2", {"df1": 1e4, "df2": 1e4}, 1.01),
    ("VonMises-loc_concentration", {"loc": 0.0, "concentration": 1e4}, 0.01),
    ("VonMises-loc_concentration", {"loc": 0.5, "concentration": 60.0}, 0.45),
    ("TruncatedNormal-two_sided", {"loc": 0.0, "scale": 1.0, "low": 0.1, "high": 0.1001}, 0.10004),
    ("TruncatedNormal-two_sided", {"loc": 1.0, "scale": 1.0, "low": 3.0, "high": 3.001}, 3.0002),
    ("ContinuousBernoulli-probs", {"probs": 1e-6}, 0.5),
    ("ContinuousBernoulli-probs", {"probs": 0.502}, 0.2),
    ("ContinuousBernoulli-logits", {"logits": 0.04}, 0.8),
]


@pytest.mark.parametrize(
    ("spec_id", "params", "x"),
    CANCELLING_GRAD_POINTS,
    ids=[f"{c[0]}-{i}" for i, c in enumerate(CANCELLING_GRAD_POINTS)],
)
def test_grad_in_cancelling_regimes_matches_mpmath(spec_id: str, params: dict, x: float) -> None:
    spec = BY_ID[spec_id]
    got = _oracle(spec).elementwise_grad(
        {k: np.array(v) for k, v in params.items()}, np.array(x), spec.parametrization
    )
    for name, g in got.items():
        want = _mp_partial(spec, params, x, name)
        assert abs(float(g) - want) <= GRAD_RTOL * abs(want), f"∂/∂{name}: {float(g)!r} vs {want!r}"


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.id)
def test_closed_form_grad_matches_richardson_fallback(spec: Spec) -> None:
    fam = _oracle(spec)
    points = spec.fd_points or spec.grad_points
    params = {k: np.array([p[k] for p, _ in points]) for k in points[0][0]}
    x = np.array([v for _, v in points])
    b = fam.broadcast(params, x, spec.parametrization)
    # The hooks run as an evaluation runs them (reference/core.py: under errstate, since an
    # infinite bound's 0·inf is masked by np.where after it is computed).
    with np.errstate(all="ignore"):
        closed = fam._grad(b.params, b.value, spec.parametrization, {})
        numeric = fam._numeric_grad(b, spec.parametrization, {})
    assert closed is not None, f"{spec.id} has no closed-form gradient"
    assert set(closed) == set(numeric)
    for name in closed:
        c, n = np.asarray(closed[name]), np.asarray(numeric[name])
        err = np.abs(c - n)
        assert np.all(err <= FD_RTOL * np.abs(c) + 1e-10), f"{spec.id} ∂/∂{name}: {c} vs {n}"


# ----- sampling ---------------------------------------------------------------------------------
def _cdf(spec: Spec) -> Callable[[Params, np.ndarray], np.ndarray]:
    if spec.cdf is not None:
        return spec.cdf
    frozen = {
        "Beta-concentrations": lambda p: stats.beta(p["concentration1"], p["concentration0"]),
        "Beta-mean_concentration": lambda p: stats.beta(
            p["mean"] * p["concentration"], (1 - p["mean"]) * p["concentration"]
        ),
        "Gamma-concentration_rate": lambda p: stats.gamma(p["concentration"], scale=1 / p["rate"]),
        "Exponential-rate": lambda p: stats.expon(scale=1 / p["rate"]),
        "Chi2-df": lambda p: stats.chi2(p["df"]),
        "StudentT-df_loc_scale": lambda p: stats.t(p["df"], p["loc"], p["scale"]),
        "Cauchy-loc_scale": lambda p: stats.cauchy(p["loc"], p["scale"]),
        "Laplace-loc_scale": lambda p: stats.laplace(p["loc"], p["scale"]),
        "LogNormal-loc_scale": lambda p: stats.lognorm(p["scale"], scale=np.exp(p["loc"])),
        "Gumbel-loc_scale": lambda p: stats.gumbel_r(p["loc"], p["scale"]),
        "HalfNormal-scale": lambda p: stats.halfnorm(scale=p["scale"]),
        "HalfCauchy-scale": lambda p: stats.halfcauchy(scale=p["scale"]),
        "Pareto-scale_alpha": lambda p: stats.pareto(p["alpha"], scale=p["scale"]),
        "Uniform-low_high": lambda p: stats.uniform(p["low"], p["high"] - p["low"]),
        "VonMises-loc_concentration": lambda p: stats.vonmises(p["concentration"], p["loc"]),
        "Weibull-scale_concentration": lambda p: stats.weibull_min(
            p["concentration"], scale=p["scale"]
        ),
        "InverseGamma-concentration_rate": lambda p: stats.invgamma(
            p["concentration"], scale=p["rate"]
        ),
        "FisherSnedecor-df1_df2": lambda p: stats.f(p["df1"], p["df2"]),
    }
    if spec.family == "TruncatedNormal":
        return _tn_cdf
    return lambda p, x: frozen[spec.id](p).cdf(x)


def _tn_cdf(p: Params, x: np.ndarray) -> np.ndarray:
    loc, s = p["loc"], p["scale"]
    a = (p["low"] - loc) / s if "low" in p else -np.inf
    b = (p["high"] - loc) / s if "high" in p else np.inf
    return stats.truncnorm(a, b, loc, s).cdf(x)


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.id)
def test_sampler_follows_the_density(spec: Spec) -> None:
    """Shape, support, and a Kolmogorov–Smirnov test against the reference CDF (fixed seed)."""
    fam = _oracle(spec)
    params = {k: np.array(v) for k, v in spec.norm_params.items()}
    draws = fam.sample(params, (4000,), np.random.default_rng(3), spec.parametrization)
    assert draws.shape == (4000,)
    assert np.all(fam.in_support(params, draws, spec.parametrization))
    cdf = _cdf(spec)
    result = stats.kstest(draws, lambda x: cdf(params, np.asarray(x)))
    assert result.pvalue > 1e-4, f"{spec.id}: KS statistic {result.statistic:.4f}"


def test_samples_broadcast_parameters() -> None:
    fam = reference.get_family("Gamma")
    params = {"concentration": np.array([[1.0], [5.0], [50.0]]), "rate": np.array([1.0, 10.0])}
    draws = fam.sample(params, (2000,), np.random.default_rng(5), "concentration_rate")
    assert draws.shape == (2000, 3, 2)
    mean = draws.mean(axis=0)
    expected = params["concentration"] / params["rate"]
    assert np.all(np.abs(mean - expected) < 0.1 * expected)


# ----- the generated edge cases (conformance.plan.derived.edges) -------------------------------------
def _edge_cases() -> list[tuple[Spec, str, dict[str, float], float, list[str]]]:
    """Every generated edge case of a family checked here whose log_prob the oracle gives as a
    finite number, with the partials that case judges."""
    from conformance.cases.builtin import builtin_cases
    from conformance.cases.loader import find_case_files, load_case_file
    from conformance.plan.derived import edges

    out = []
    for path in find_case_files(builtin_cases()):
        for case in edges.edge_file(load_case_file(path).cases, path.name, bulk=True).cases:
            spec = BY_ID.get(f"{case.family}-{case.parametrization}")
            if spec is None:
                continue
            params = {k: float(v) for k, v in case.spec.params.items()}
            value = float(case.spec.value)
            lp = _oracle(spec).log_prob(params, np.float64(value), spec.parametrization)
            if not np.isfinite(lp):
                continue
            judged = [] if "grad" not in case.spec.checks else case.differentiable_inputs
            out.append((spec, case.id, params, value, list(judged)))
    return out


EDGE_CASES = _edge_cases()


def _mp_real(f: Callable, t: mpmath.mpf) -> mpmath.mpf | None:
    """``f(t)`` where it is a finite real number, else None (outside the support)."""
    try:
        y = f(t)
    except (ValueError, ZeroDivisionError):
        return None
    if isinstance(y, mpmath.mpc):
        if y.imag != 0:
            return None
        y = y.real
    return y if mpmath.isfinite(y) else None


def _side(spec: Spec, params: dict[str, float], value: float) -> int:
    """0 inside the support, +1 (−1) at its lower (upper) end: where the oracle's support
    (not mpmath, whose 0·log of a negative number is 0) holds a point just beside ``value``."""
    h = 1e-9 * max(1.0, abs(value))
    inside = [
        bool(_oracle(spec).in_support(params, np.float64(value + d), spec.parametrization))
        for d in (h, -h)
    ]
    return 0 if inside[0] == inside[1] else (1 if inside[0] else -1)


def _mp_at_or_beside(f: Callable, x: mpmath.mpf, side: int) -> mpmath.mpf:
    """Where to evaluate the mpmath density: at ``x`` itself, or 1e-30 inside where mpmath
    has no finite value exactly at a support end (0·log 0)."""
    if _mp_real(f, x) is not None:
        return x
    assert side, f"mpmath has no finite density at {x}"
    return x + side * mpmath.mpf("1e-30")


@pytest.mark.parametrize(
    ("spec", "case_id", "params", "value", "judged"),
    EDGE_CASES,
    ids=[f"{e[0].id}-{e[1]}" for e in EDGE_CASES],
)
def test_generated_edges_match_mpmath(spec, case_id, params, value, judged) -> None:
    """At every generated edge with a finite density, the oracle's log_prob and each partial
    derivative the case judges agree with mpmath at 40 digits (one-sided at a support end); a
    partial relative to itself, beside its inputs' conditioning (mp_partials)."""
    fam = _oracle(spec)
    got = float(fam.log_prob(params, np.float64(value), spec.parametrization))
    grads = fam.elementwise_grad(params, np.float64(value), spec.parametrization)
    # Digits for the inputs' own magnitudes too: float32's largest and smallest numbers (the
    # float32 edges) leave 40 digits none to spare for lgamma(3e38) − lgamma(3e38 + 2) or
    # 1 − x^(1e-38).
    magnitudes = [abs(math.log10(abs(v))) for v in [*params.values(), value] if v != 0]
    with mp.workdps(MP_DPS + math.ceil(max(magnitudes, default=0.0))):
        base = {k: mpmath.mpf(v) for k, v in params.items()}
        side = _side(spec, params, value)
        x = _mp_at_or_beside(lambda t: spec.mp_logpdf(base, t), mpmath.mpf(value), side)
        want = float(_mp_real(lambda t: spec.mp_logpdf(base, t), x))
        # Beside the relative error, what the inputs' own rounding moves log_prob by (the
        # suite's comparison allows the frameworks the same: compare.py's sensitivity): a
        # scale of 1e-6 turns log x's last digit into 1e-10 of log_prob, in any float64 code.
        inputs = {**params, "value": value}
        sensitivity = sum(
            abs(inputs[k] * float(g))
            for k, g in grads.items()
            if k in inputs and np.isfinite(inputs[k] * float(g))
        )
        allowed = RTOL * max(abs(want), 1.0) + CONDITION_ULPS * EPS * sensitivity
        assert abs(got - want) <= allowed, f"log_prob {got!r} vs {want!r}"
        for name in judged:

            def f(t, name=name):
                if name == "value":
                    return spec.mp_logpdf(base, t)
                return spec.mp_logpdf({**base, name: t}, x)

            at = x if name == "value" else base[name]
            # A parameter at the end of its domain (a probability at 0) is differentiated
            # from inside, as its value is.
            direction = side if name == "value" else (1 if params[name] == 0 else 0)
            # A step relative to a tiny point: at float32's smallest normal (a generated
            # float32 edge) mpmath's default absolute step would reach far past it. Elsewhere
            # 1e-20: the default (~1e-43) leaves a partial only the working digits' ~1e-40 of
            # log_prob, and at float32's largest numbers a partial is smaller (StudentT's ∂/∂df
            # of 4e-78 at df = 3.4e38 read as 4e-52), while a relative step there would wrap
            # VonMises's angle around the circle.
            step = {"h": min(abs(at) * mpmath.mpf("1e-15"), mpmath.mpf("1e-20"))} if at else {}
            partial = float(mpmath.re(mp.diff(f, at, direction=direction, **step)))
            assert_partial_close(
                float(grads[name]),
                partial,
                input_scale(fam, spec.parametrization, name, inputs[name]),
                lambda name=name: sensitivity_terms(
                    spec.mp_logpdf, base, x, name, [*base, "value"]
                ),
                name,
            )


@pytest.mark.parametrize(
    ("spec_id", "params", "value"),
    [
        # The interval lies 1e38 scales below loc: z² and the mass's log are each ~5e75 and
        # their difference is the answer (once 0.0 here).
        ("TruncatedNormal-two_sided", {"loc": 3.4e38, "scale": 1.7, "low": -1.0, "high": 2.0}, 0.5),
        ("TruncatedNormal-two_sided", {"loc": -1e20, "scale": 1.0, "low": -1.0, "high": 2.0}, 0.5),
        ("TruncatedNormal-left_truncated", {"loc": -1e20, "scale": 3.0, "low": 0.0}, 1e-3),
        # x − loc rounds to −loc in float64; cos and sin of the exact difference are another
        # angle altogether (once −0.956 for −0.684 here).
        ("VonMises-loc_concentration", {"loc": 3.4028234663852886e38, "concentration": 0.8}, 0.3),
    ],
)
def test_far_parameters_keep_the_answer(spec_id, params, value) -> None:
    """Inputs at float32's range end (the float32 edges) against mpmath with digits enough for
    their magnitude: the oracle rearranges what would round away."""
    spec = BY_ID[spec_id]
    fam = _oracle(spec)
    got = float(fam.log_prob(params, np.float64(value), spec.parametrization))
    with mp.workdps(MP_DPS + 80):
        base = {k: mpmath.mpf(v) for k, v in params.items()}
        want = spec.mp_logpdf(base, mpmath.mpf(value))
    assert abs(got - float(want)) <= 1e-9 * max(abs(float(want)), 1.0), (got, float(want))
