"""What a KL against another family needs of p: its entropy and the expectations of the
statistics q's log density is linear in (X, X², log X, e^{tX}).

A pair of different families is KL(p‖q) = −H(p) − E_p[log q(X)], and E_p[log q] is a sum of
q's parameters times such expectations: x and x² for a Normal q, x and log x for a Gamma,
x and e^{−x/β} for a Gumbel. No p ≈ q cancellation arises between different families, so
these are the textbook closed forms, written so they neither overflow nor divide by zero
(an infinite moment is +inf: Pareto's mean at alpha ≤ 1).

Also the ContinuousBernoulli's log normaliser and its derivatives, which its pairs share.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..constants import HALF_LOG_2PI
from ..core import OracleError, where_needed
from ..families.beta import beta_concentrations, log_beta
from .registry import Side

EULER = float(np.euler_gamma)


def gamma_params(side: Side) -> tuple[np.ndarray, np.ndarray]:
    """(concentration, rate) of a Gamma or an Exponential (concentration 1)."""
    if side.family == "Exponential":
        return np.ones_like(side["rate"]), side["rate"]
    return side["concentration"], side["rate"]


def beta_params(side: Side) -> tuple[np.ndarray, np.ndarray]:
    """(concentration1, concentration0) in either of Beta's parametrisations."""
    return beta_concentrations(side.params, side.parametrization)


# ----- the ContinuousBernoulli's log normaliser ------------------------------------------------
# Its density is exp(η·x − A(η)) on [0, 1] with A(η) = log((e^η − 1)/η) = η/2 + S(η),
# S(η) = log(sinh(η/2)/(η/2)) even. Mean ½ + S'(η), variance S''(η). Below |η| = 1 the
# Bernoulli-number series (radius 2π: 13 terms reach 1e-19); above, closed forms that do not
# cancel.

_N_SERIES = 13
_B2N = special.bernoulli(2 * _N_SERIES)[2::2]  # B_2, B_4, …, B_26
_TWO_N = 2.0 * np.arange(1, _N_SERIES + 1)
_FACT = special.factorial(_TWO_N)


def _series(eta: np.ndarray, coefs: np.ndarray, first_power: int) -> np.ndarray:
    """Σ_n coefs_n·η^(2n − 2 + first_power), n = 1…"""
    eta2 = eta * eta
    total = np.zeros_like(eta)
    for c in coefs[::-1]:
        total = total * eta2 + c
    return total * eta**first_power


def _small(eta: np.ndarray) -> np.ndarray:
    return np.abs(eta) <= 1.0


def cb_logits(side: Side) -> np.ndarray:
    """η = logit(λ): 2·atanh(2λ − 1) near λ = ½ (2λ − 1 is exact there), log λ − log(1 − λ)
    elsewhere."""
    if side.parametrization == "logits":
        return side["logits"]
    lam = side["probs"]
    t = 2.0 * lam - 1.0
    return np.where(np.abs(t) < 0.5, 2.0 * np.arctanh(t), np.log(lam) - np.log1p(-lam))


def cb_s(eta: np.ndarray) -> np.ndarray:
    """S(η) = log(sinh(η/2)/(η/2))."""
    small = _small(eta)
    a = np.abs(np.where(small, 2.0, eta))
    big = a / 2.0 + np.log(-np.expm1(-a)) - np.log(a)
    return np.where(small, _series(np.where(small, eta, 0.0), _B2N / (_TWO_N * _FACT), 2), big)


def cb_ds(eta: np.ndarray) -> np.ndarray:
    """S'(η) = ½·coth(η/2) − 1/η (the mean is ½ + S'(η))."""
    small = _small(eta)
    e = np.where(small, 2.0, eta)
    with np.errstate(over="ignore"):
        big = -1.0 / np.expm1(-e) - 1.0 / e - 0.5
    return np.where(small, _series(np.where(small, eta, 0.0), _B2N / _FACT, 1), big)


def cb_d2s(eta: np.ndarray) -> np.ndarray:
    """S''(η) = 1/η² − 1/(4·sinh²(η/2)), the variance."""
    small = _small(eta)
    e = np.where(small, 2.0, eta)
    with np.errstate(over="ignore"):
        big = 1.0 / (e * e) - 0.25 / np.sinh(e / 2.0) ** 2
    coefs = _B2N * (_TWO_N - 1.0) / _FACT
    return np.where(small, _series(np.where(small, eta, 0.0), coefs, 0), big)


def cb_log_normalizer(eta: np.ndarray) -> np.ndarray:
    """A(η) = log ∫₀¹ e^{ηx} dx."""
    return eta / 2.0 + cb_s(eta)


def cb_entropy(eta: np.ndarray) -> np.ndarray:
    """H = A(η) − η·mean = S(η) − η·S'(η); above |η| = 1 as
    log(1 − e^{−|η|}) − log|η| + 1 − |η|/(e^{|η|} − 1), whose terms do not cancel."""
    small = _small(eta)
    a = np.abs(np.where(small, 2.0, eta))
    with np.errstate(over="ignore"):
        big = np.log(-np.expm1(-a)) - np.log(a) + 1.0 - a / np.expm1(a)
    coefs = _B2N * (1.0 - _TWO_N) / (_TWO_N * _FACT)
    return np.where(small, _series(np.where(small, eta, 0.0), coefs, 2), big)


# ----- p's summaries -----------------------------------------------------------------------


def uniform_mean_log(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """E[log X] for X ~ Uniform(low, high), 0 ≤ low < high: log m + f(r) with m the midpoint,
    r = (high − low)/(high + low) ∈ (0, 1] and
    f(r) = ((1 + r)·log(1 + r) − (1 − r)·log(1 − r))/(2r) − 1 = −Σ_k r^2k/(2k·(2k + 1)),
    the series below r = ½ (a narrow interval: the closed form cancels there)."""
    mid = 0.5 * (low + high)
    r = (high - low) / (high + low)
    small = r < 0.5

    def series() -> np.ndarray:
        rs2 = np.where(small, r, 0.0) ** 2
        total = np.zeros_like(rs2)
        for k in range(26, 0, -1):  # r² < ¼: 26 terms reach 1e-18
            total = total * rs2 + 1.0 / (2 * k * (2 * k + 1))
        return -total * rs2

    def closed() -> np.ndarray:
        rb = np.where(small, 1.0, r)
        return ((1.0 + rb) * np.log1p(rb) - special.xlog1py(1.0 - rb, -rb)) / (2.0 * rb) - 1.0

    return np.log(mid) + where_needed(small, series, closed)


def entropy(side: Side) -> np.ndarray:
    """H(p) = −E_p[log p(X)]."""
    name = side.family
    if name == "Normal":
        return 0.5 + HALF_LOG_2PI + np.log(side["scale"])
    if name in ("Exponential", "Gamma"):
        a, rate = gamma_params(side)
        return a - np.log(rate) + special.gammaln(a) + (1.0 - a) * special.digamma(a)
    if name == "Beta":
        a, b = beta_params(side)
        return (
            log_beta(a, b)
            - (a - 1.0) * special.digamma(a)
            - (b - 1.0) * special.digamma(b)
            + (a + b - 2.0) * special.digamma(a + b)
        )
    if name == "ContinuousBernoulli":
        return cb_entropy(cb_logits(side))
    if name == "Uniform":
        return np.log(side["high"] - side["low"])
    if name == "Laplace":
        return 1.0 + np.log(2.0 * side["scale"])
    if name == "Gumbel":
        return np.log(side["scale"]) + EULER + 1.0
    if name == "Pareto":
        alpha = side["alpha"]
        return np.log(side["scale"] / alpha) + 1.0 / alpha + 1.0
    raise OracleError(f"the KL module has no entropy of {name}")


def mean(side: Side) -> np.ndarray:
    """E_p[X] (+inf where infinite)."""
    name = side.family
    if name in ("Normal", "Laplace"):
        return side["loc"]
    if name in ("Exponential", "Gamma"):
        a, rate = gamma_params(side)
        return a / rate
    if name == "Beta":
        a, b = beta_params(side)
        return a / (a + b)
    if name == "ContinuousBernoulli":
        return 0.5 + cb_ds(cb_logits(side))
    if name == "Uniform":
        return 0.5 * (side["low"] + side["high"])
    if name == "Gumbel":
        return side["loc"] + EULER * side["scale"]
    if name == "Pareto":
        alpha = side["alpha"]
        return np.where(alpha > 1.0, alpha * side["scale"] / (alpha - 1.0), np.inf)
    raise OracleError(f"the KL module has no mean of {name}")


def variance(side: Side) -> np.ndarray:
    """Var_p[X] (+inf where infinite)."""
    name = side.family
    if name == "Normal":
        return side["scale"] ** 2
    if name in ("Exponential", "Gamma"):
        a, rate = gamma_params(side)
        return a / rate**2
    if name == "Beta":
        a, b = beta_params(side)
        return a * b / ((a + b) ** 2 * (a + b + 1.0))
    if name == "ContinuousBernoulli":
        return cb_d2s(cb_logits(side))
    if name == "Uniform":
        return (side["high"] - side["low"]) ** 2 / 12.0
    if name == "Laplace":
        return 2.0 * side["scale"] ** 2
    if name == "Gumbel":
        return (np.pi * side["scale"]) ** 2 / 6.0
    if name == "Pareto":
        alpha, scale = side["alpha"], side["scale"]
        with np.errstate(divide="ignore", invalid="ignore"):
            finite = scale**2 * alpha / ((alpha - 1.0) ** 2 * (alpha - 2.0))
        return np.where(alpha > 2.0, finite, np.inf)
    raise OracleError(f"the KL module has no variance of {name}")


def mean_log(side: Side) -> np.ndarray:
    """E_p[log X] of a p on [0, ∞) (a Uniform's low ≥ 0 is the caller's to check)."""
    name = side.family
    if name in ("Exponential", "Gamma"):
        a, rate = gamma_params(side)
        return special.digamma(a) - np.log(rate)
    if name == "Beta":
        a, b = beta_params(side)
        return special.digamma(a) - special.digamma(a + b)
    if name == "Uniform":
        return uniform_mean_log(np.maximum(side["low"], 0.0), side["high"])
    if name == "Pareto":
        return np.log(side["scale"]) + 1.0 / side["alpha"]
    raise OracleError(f"the KL module has no E[log X] of {name}")


def log_mgf(side: Side, t: np.ndarray) -> np.ndarray:
    """log E_p[e^{tX}] for t < 0 (what a Gumbel q's e^{−x/β} term needs)."""
    name = side.family
    if name == "Normal":
        return t * side["loc"] + 0.5 * (t * side["scale"]) ** 2
    if name in ("Exponential", "Gamma"):
        a, rate = gamma_params(side)
        return -a * np.log1p(-t / rate)
    if name == "Uniform":
        low, width = side["low"], side["high"] - side["low"]
        tw = t * width
        return t * low + np.log(np.expm1(tw) / tw)
    raise OracleError(f"the KL module has no moment generating function of {name}")
