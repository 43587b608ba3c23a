"""KL divergences between continuous families on the line (and the simplex's Dirichlet).

Pairs of one family are written as sums of terms each ≥ 0 and small when p ≈ q
(:mod:`.numerics`), so a KL of 1e-14 keeps its digits. Pairs of two families are
KL = −H(p) − E_p[log q(X)] from p's summaries (:mod:`.moments`): +inf where q's support does
not cover p's (a p on the whole line against a q on [0, ∞)) or where a moment E_p[log q] needs
is infinite (Pareto's mean at alpha ≤ 1 against a Gamma).
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import integrate, special

from ..constants import HALF_LOG_2PI
from ..core import per_distinct
from ..families.beta import log_beta
from .moments import (
    EULER,
    beta_params,
    cb_d2s,
    cb_ds,
    cb_log_normalizer,
    cb_logits,
    cb_s,
    entropy,
    gamma_params,
    log_mgf,
    mean,
    mean_log,
    uniform_mean_log,
    variance,
)
from .numerics import expm1mx, lgamma_bregman, log_ratio
from .registry import Side, closed_form, register_alias


def _chi2_as_gamma(params, parametrization):
    df = params["df"]
    return {"concentration": 0.5 * df, "rate": np.full_like(df, 0.5)}, "concentration_rate"


register_alias(
    "Chi2",
    "Gamma",
    _chi2_as_gamma,
    "Chi2(df) is Gamma(df/2, rate 1/2); both frameworks' Chi2 subclasses Gamma and inherits "
    "its KL rules",
)

# ----- one family ------------------------------------------------------------------------------


@closed_form(("Normal", "Normal"))
def normal_normal(p: Side, q: Side) -> np.ndarray:
    """½·((Δμ/σq)² + r − 1 − log r), r = (σp/σq)²."""
    z = (p["loc"] - q["loc"]) / q["scale"]
    return 0.5 * (z * z + expm1mx(2.0 * log_ratio(p["scale"], q["scale"])))


@closed_form(("HalfNormal", "HalfNormal"))
def _half_normal(p: Side, q: Side) -> np.ndarray:
    return 0.5 * expm1mx(2.0 * log_ratio(p["scale"], q["scale"]))


@closed_form(
    ("Gamma", "Gamma"),
    ("Gamma", "Exponential"),
    ("Exponential", "Gamma"),
    ("Exponential", "Exponential"),
)
def gamma_gamma(p: Side, q: Side) -> np.ndarray:
    """With u = log(β/b): G(a, α − a) + a·(e^u − 1 − u) + (a − α)·u, G the Bregman divergence of
    lnΓ (an Exponential is concentration 1)."""
    a, b = gamma_params(p)
    alpha, beta = gamma_params(q)
    u = log_ratio(beta, b)
    return lgamma_bregman(a, alpha - a) + a * expm1mx(u) + (a - alpha) * u


@closed_form(("Beta", "Beta"))
def _beta_beta(p: Side, q: Side) -> np.ndarray:
    """G(a, α − a) + G(b, β − b) − G(a + b, α + β − a − b)."""
    a, b = beta_params(p)
    alpha, beta = beta_params(q)
    return (
        lgamma_bregman(a, alpha - a)
        + lgamma_bregman(b, beta - b)
        - lgamma_bregman(a + b, (alpha - a) + (beta - b))
    )


@closed_form(("Dirichlet", "Dirichlet"))
def _dirichlet_dirichlet(p: Side, q: Side) -> np.ndarray:
    """Σ_k G(a_k, β_k − a_k) − G(Σa, Σβ − Σa)."""
    a, beta = np.broadcast_arrays(p["concentration"], q["concentration"])
    d = beta - a
    return lgamma_bregman(a, d).sum(-1) - lgamma_bregman(a.sum(-1), d.sum(-1))


@closed_form(("Uniform", "Uniform"))
def _uniform_uniform(p: Side, q: Side) -> np.ndarray:
    inside = (p["low"] >= q["low"]) & (p["high"] <= q["high"])
    return np.where(inside, log_ratio(q["high"] - q["low"], p["high"] - p["low"]), np.inf)


@closed_form(("Laplace", "Laplace"))
def _laplace_laplace(p: Side, q: Side) -> np.ndarray:
    """log(b₂/b₁) + d/b₂ + (b₁/b₂)·e^{−d/b₁} − 1 with u = log(b₁/b₂), d = |Δμ|:
    (e^v − 1 − v)|_{v = u − d/b₁} − (d/b₂)·expm1(−u)."""
    b1, b2 = p["scale"], q["scale"]
    u = log_ratio(b1, b2)
    d = np.abs(p["loc"] - q["loc"])
    return expm1mx(u - d / b1) - (d / b2) * np.expm1(-u)


@closed_form(("Gumbel", "Gumbel"))
def _gumbel_gumbel(p: Side, q: Side) -> np.ndarray:
    """With r = β₁/β₂, v = (μ₁ − μ₂)/β₂, w = lnΓ(1 + r) − v:
    −log r + v + γ(r − 1) + e^w − 1 = (e^w − 1 − w) + G(1, r − 1)."""
    beta1, beta2 = p["scale"], q["scale"]
    dr = (beta1 - beta2) / beta2
    g = lgamma_bregman(np.ones_like(dr), dr)
    w = log_ratio(beta1, beta2) + g - EULER * dr - (p["loc"] - q["loc"]) / beta2
    return expm1mx(w) + g


@closed_form(("Cauchy", "Cauchy"))
def _cauchy_cauchy(p: Side, q: Side) -> np.ndarray:
    """log(((σp + σq)² + Δ²)/(4σpσq)) = log1p(((σp − σq)² + Δ²)/(4σpσq))."""
    sp, sq = p["scale"], q["scale"]
    delta = p["loc"] - q["loc"]
    return np.log1p(((sp - sq) ** 2 + delta**2) / (4.0 * sp * sq))


@closed_form(("Pareto", "Pareto"))
def _pareto_pareto(p: Side, q: Side) -> np.ndarray:
    """(t − 1 − log t)|_{t = α₂/α₁} + α₂·log(s₁/s₂); +inf where s₁ < s₂."""
    finite = expm1mx(log_ratio(q["alpha"], p["alpha"])) + q["alpha"] * log_ratio(
        p["scale"], q["scale"]
    )
    return np.where(p["scale"] >= q["scale"], finite, np.inf)


#: Gauss–Legendre nodes and weights on [0, 1] for the ContinuousBernoulli's Bregman integral.
_GL_X, _GL_W = np.polynomial.legendre.leggauss(24)
_GL_NODES, _GL_WEIGHTS = 0.5 * (_GL_X + 1.0), 0.5 * _GL_W


@closed_form(("ContinuousBernoulli", "ContinuousBernoulli"))
def _cb_cb(p: Side, q: Side) -> np.ndarray:
    """The Bregman divergence of the log normaliser: A(η_q) − A(η_p) − (η_q − η_p)·A'(η_p),
    whose linear part cancels: S(η_q) − S(η_p) − d·S'(η_p) with d = η_q − η_p. Where |d| ≤ 1
    as d²·∫₀¹ (1 − s)·S''(η_p + s·d) ds (S'' > 0, analytic within 2π of the real line:
    24 Gauss–Legendre nodes are exact to rounding); the three terms elsewhere."""
    ep, eq = cb_logits(p), cb_logits(q)
    d = eq - ep
    near = np.abs(d) <= 1.0
    dn = np.where(near, d, 0.0)
    nodes = ep[..., None] + _GL_NODES * dn[..., None]
    quad = dn * dn * (cb_d2s(nodes) * (1.0 - _GL_NODES) * _GL_WEIGHTS).sum(-1)
    return np.where(near, quad, cb_s(eq) - cb_s(ep) - d * cb_ds(ep))


# ----- two families: −H(p) − E_p[log q] ----------------------------------------------------


@closed_form(
    *(
        (p, "Normal")
        for p in (
            "Beta",
            "ContinuousBernoulli",
            "Exponential",
            "Gamma",
            "Gumbel",
            "Laplace",
            "Pareto",
            "Uniform",
        )
    )
)
def _vs_normal(p: Side, q: Side) -> np.ndarray:
    """−H(p) + ½·log 2π + log σ + (Var_p + (E_p − μ)²)/(2σ²)."""
    sigma = q["scale"]
    spread = variance(p) + (mean(p) - q["loc"]) ** 2
    return -entropy(p) + HALF_LOG_2PI + np.log(sigma) + spread / (2.0 * sigma * sigma)


@closed_form(
    ("Beta", "Exponential"),
    ("Beta", "Gamma"),
    ("ContinuousBernoulli", "Exponential"),
    ("Pareto", "Exponential"),
    ("Pareto", "Gamma"),
    ("Uniform", "Exponential"),
    ("Uniform", "Gamma"),
)
def _vs_gamma(p: Side, q: Side) -> np.ndarray:
    """−H(p) − α·log β + lnΓ(α) − (α − 1)·E_p[log X] + β·E_p[X] (an Exponential q is α = 1);
    +inf for a Uniform p reaching below 0."""
    alpha, beta = gamma_params(q)
    logs = 0.0 if q.family == "Exponential" else (alpha - 1.0) * mean_log(p)
    found = -entropy(p) - alpha * np.log(beta) + special.gammaln(alpha) - logs + beta * mean(p)
    return np.where(p["low"] >= 0.0, found, np.inf) if p.family == "Uniform" else found


@closed_form(
    ("Normal", "Gumbel"),
    ("Exponential", "Gumbel"),
    ("Gamma", "Gumbel"),
    ("Uniform", "Gumbel"),
)
def _vs_gumbel(p: Side, q: Side) -> np.ndarray:
    """log q(x) = −log β − z − e^{−z}, z = (x − m)/β: −H(p) + log β + (E_p[X] − m)/β +
    e^{m/β}·E_p[e^{−X/β}]."""
    m, beta = q["loc"], q["scale"]
    return (
        -entropy(p)
        + np.log(beta)
        + (mean(p) - m) / beta
        + np.exp(m / beta + log_mgf(p, -1.0 / beta))
    )


@closed_form(("Normal", "Laplace"))
def _normal_laplace(p: Side, q: Side) -> np.ndarray:
    """−H(p) + log 2b + E|X − μ|/b with E|X − μ| = σ·√(2/π)·e^{−δ²/2σ²} + δ·erf(δ/(σ√2))."""
    sigma, delta, b = p["scale"], p["loc"] - q["loc"], q["scale"]
    z = delta / sigma
    folded = sigma * np.sqrt(2.0 / np.pi) * np.exp(-0.5 * z * z) + delta * special.erf(
        z / np.sqrt(2.0)
    )
    return -entropy(p) + np.log(2.0 * b) + folded / b


@closed_form(("Beta", "Uniform"), ("ContinuousBernoulli", "Uniform"))
def _unit_vs_uniform(p: Side, q: Side) -> np.ndarray:
    covered = (q["low"] <= 0.0) & (q["high"] >= 1.0)
    return np.where(covered, -entropy(p) + np.log(q["high"] - q["low"]), np.inf)


def _in_unit_interval(p: Side) -> np.ndarray:
    if p.family == "Uniform":
        return (p["low"] >= 0.0) & (p["high"] <= 1.0)
    return np.ones(p.size, dtype=bool)


@closed_form(("Beta", "ContinuousBernoulli"), ("Uniform", "ContinuousBernoulli"))
def _vs_cb(p: Side, q: Side) -> np.ndarray:
    """log q(x) = η·x − A(η): −H(p) − η·E_p[X] + A(η); +inf for a Uniform p outside [0, 1]."""
    eta = cb_logits(q)
    found = -entropy(p) - eta * mean(p) + cb_log_normalizer(eta)
    return np.where(_in_unit_interval(p), found, np.inf)


@closed_form(("Uniform", "Beta"))
def _uniform_beta(p: Side, q: Side) -> np.ndarray:
    low, high = p["low"], p["high"]
    alpha, beta = beta_params(q)
    inside = _in_unit_interval(p)
    lo, hi = np.where(inside, low, 0.0), np.where(inside, high, 1.0)
    found = (
        -np.log(hi - lo)
        + log_beta(alpha, beta)
        - (alpha - 1.0) * uniform_mean_log(lo, hi)
        - (beta - 1.0) * uniform_mean_log(1.0 - hi, 1.0 - lo)
    )
    return np.where(inside, found, np.inf)


@closed_form(("Uniform", "Pareto"))
def _uniform_pareto(p: Side, q: Side) -> np.ndarray:
    """−log(h − l) − log α + log s + (α + 1)·E[log(X/s)]; +inf where l < s."""
    scale, alpha = q["scale"], q["alpha"]
    inside = p["low"] >= scale
    lo = np.where(inside, p["low"], scale) / scale
    hi = np.where(inside, p["high"], 2.0 * scale) / scale
    found = (
        -np.log(p["high"] - p["low"])
        - np.log(alpha)
        + np.log(scale)
        + (alpha + 1.0) * uniform_mean_log(lo, hi)
    )
    return np.where(inside, found, np.inf)


@closed_form(("Weibull", "Gamma"))
def _weibull_gamma(p: Side, q: Side) -> np.ndarray:
    """log k + lnΓ(α) + α·(γ/k − log λβ) + λβ·Γ(1 + 1/k) − γ − 1 (Weibull scale λ,
    concentration k; E[log X] = log λ − γ/k, E[X] = λ·Γ(1 + 1/k))."""
    k, lam = p["concentration"], p["scale"]
    alpha, beta = gamma_params(q)
    log_lb = np.log(lam) + np.log(beta)
    return (
        np.log(k)
        + special.gammaln(alpha)
        + alpha * (EULER / k - log_lb)
        + np.exp(log_lb + special.gammaln(1.0 + 1.0 / k))
        - EULER
        - 1.0
    )


def _kumaraswamy_mean_log1m(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """E[log(1 − X)] for X ~ Kumaraswamy(a, b). With Y = X^a ~ Beta(1, b):
    b·∫₀¹ (1 − y)^{b−1}·log(1 − y^{1/a}) dy = −1/b + b·∫₀¹ (1 − y)^{b−1}·g(y) dy, where
    g = log((1 − y^{1/a})/(1 − y)) is bounded (0 at y = 0, −log a at y = 1); QUADPACK's QAWS
    takes the (1 − y)^{b−1} weight exactly."""

    def one(a_: float, b_: float) -> float:
        def g(y: float) -> float:
            if y <= 0.0:
                return 0.0
            if y >= 1.0:  # the limit; QAWS evaluates the ends
                return float(-np.log(a_))
            return float(np.log(-np.expm1(np.log(y) / a_)) - np.log1p(-y))

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", integrate.IntegrationWarning)
            weight = {"weight": "alg", "wvar": (0.0, b_ - 1.0)}
            found, _ = integrate.quad(g, 0.0, 1.0, epsabs=0.0, epsrel=1e-13, limit=200, **weight)
        return -1.0 / b_ + b_ * found

    return per_distinct(np.vectorize(one, otypes=[np.float64]), a, b)


@closed_form(("Kumaraswamy", "Beta"))
def _kumaraswamy_beta(p: Side, q: Side) -> np.ndarray:
    """−H(p) − (α − 1)·E[log X] − (β − 1)·E[log(1 − X)] + log B(α, β), with
    H = (1 − 1/b) + (1 − 1/a)·H_b − log(ab), H_b = ψ(b + 1) + γ, E[log X] = −H_b/a."""
    a, b = p["concentration1"], p["concentration0"]
    alpha, beta = beta_params(q)
    harmonic = special.digamma(b + 1.0) + EULER
    neg_entropy = -(1.0 - 1.0 / b) - (1.0 - 1.0 / a) * harmonic + np.log(a) + np.log(b)
    return (
        neg_entropy
        + (alpha - 1.0) * harmonic / a
        - (beta - 1.0) * _kumaraswamy_mean_log1m(a, b)
        + log_beta(alpha, beta)
    )


# ----- supports that do not nest: +inf wherever the parameters are valid ------------------------

_UNBOUNDED_VS_BOUNDED = {
    "Exponential": ("Beta", "ContinuousBernoulli", "Pareto", "Uniform"),
    "Gamma": ("Beta", "ContinuousBernoulli", "Pareto", "Uniform"),
    "Gumbel": ("Beta", "ContinuousBernoulli", "Exponential", "Gamma", "Pareto", "Uniform"),
    "Laplace": ("Beta", "ContinuousBernoulli", "Exponential", "Gamma", "Pareto", "Uniform"),
    "Normal": ("Beta", "ContinuousBernoulli", "Exponential", "Gamma", "Pareto", "Uniform"),
    "Pareto": ("Beta", "ContinuousBernoulli", "Uniform"),
    "Beta": ("Pareto",),
    "ContinuousBernoulli": ("Pareto",),
}


@closed_form(*((p, q) for p, qs in _UNBOUNDED_VS_BOUNDED.items() for q in qs))
def _support_not_covered(p: Side, q: Side) -> np.ndarray:
    """p has mass where q has none: on the whole line or half-line against a bounded or
    half-bounded q, on (0, s) against a Pareto from s > 0, past 1 against a Beta or a
    ContinuousBernoulli. Whatever the parameters."""
    return np.full(p.size, np.inf)
