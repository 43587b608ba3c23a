"""KL divergences between discrete families.

Over a finite support, with u_k = log(q_k/p_k),

    KL = −Σ p_k·u_k = Σ_{p_k > 0} p_k·(e^{u_k} − 1 − u_k) + Σ_{p_k = 0} q_k,

since Σ_{p_k > 0} p_k·(e^{u_k} − 1) = q(supp p) − 1. Every term is ≥ 0 (no p ≈ q
cancellation) and u_k is taken from the parameters so it keeps the digits of q_k − p_k
(:func:`_log_ratios`). A q_k = 0 under p_k > 0 is u_k = −inf and a +inf term.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..core import OracleError
from ..families import FAMILIES
from ..families.categorical import category_log_probs, weights_of
from ..families.gamma import bd0
from .numerics import expm1mx, log1pmx, log_ratio, softplus, softplus_diff
from .registry import Side, closed_form, register_alias


def _finite_kl(p_probs: np.ndarray, q_probs: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Σ over the last axis of the terms above."""
    with np.errstate(invalid="ignore"):
        terms = np.where(p_probs > 0.0, p_probs * expm1mx(u), q_probs)
    return terms.sum(-1)


def _log1m_ratio(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """log((1 − q)/(1 − p)) = log1p((p − q)/(1 − p)) near p = q (p − q exact), the difference
    of log1p(−q) and log1p(−p) elsewhere."""
    near = np.abs(p - q) < 0.5 * (1.0 - p)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(near, np.log1p((p - q) / (1.0 - p)), np.log1p(-q) - np.log1p(-p))


def _binary_logs(side: Side) -> tuple[np.ndarray, np.ndarray]:
    """(log P(1), log P(0)) of a Bernoulli or Binomial trial."""
    if side.parametrization == "probs":
        prob = side["probs"]
        with np.errstate(divide="ignore"):
            return np.log(prob), np.log1p(-prob)
    logits = side["logits"]
    return -softplus(-logits), -softplus(logits)


def _binary_log_ratios(p: Side, q: Side) -> tuple[np.ndarray, np.ndarray]:
    """(log(q₁/p₁), log(q₀/p₀)) of one trial, keeping the digits of q − p."""
    if p.parametrization == q.parametrization == "probs":
        return log_ratio(q["probs"], p["probs"]), _log1m_ratio(p["probs"], q["probs"])
    if p.parametrization == q.parametrization == "logits":
        lp, lq = p["logits"], q["logits"]
        return softplus_diff(-lp, -lq), softplus_diff(lp, lq)
    (p1, p0), (q1, q0) = _binary_logs(p), _binary_logs(q)
    return q1 - p1, q0 - p0


def _bernoulli_kl(p: Side, q: Side) -> np.ndarray:
    u1, u0 = _binary_log_ratios(p, q)
    logs = [np.stack(_binary_logs(s), axis=-1) for s in (p, q)]
    return _finite_kl(np.exp(logs[0]), np.exp(logs[1]), np.stack([u1, u0], axis=-1))


@closed_form(("Bernoulli", "Bernoulli"))
def _bernoulli_bernoulli(p: Side, q: Side) -> np.ndarray:
    return _bernoulli_kl(p, q)


@closed_form(("Binomial", "Binomial"))
def _binomial_binomial(p: Side, q: Side) -> np.ndarray:
    """n·KL(Bernoulli) where the counts agree; the sum over p's support elsewhere (+inf where
    p reaches past q's count)."""
    n, m = p["total_count"], q["total_count"]
    with np.errstate(invalid="ignore"):
        same = np.where(n == 0.0, 0.0, n * _bernoulli_kl(p, q))
    if np.all(n == m):
        return same
    family = FAMILIES["Binomial"]
    k = np.arange(int(n.max()) + 1, dtype=np.float64)[:, None]
    lp = family.log_prob(p.params, k, p.parametrization)
    lq = family.log_prob(q.params, k, q.parametrization)
    with np.errstate(invalid="ignore"):
        terms = np.where(lp > -np.inf, np.exp(lp) * (lp - lq), 0.0)
    return np.where(n == m, same, terms.sum(0))


@closed_form(("Poisson", "Poisson"))
def _poisson_poisson(p: Side, q: Side) -> np.ndarray:
    """λp·log(λp/λq) + λq − λp: Loader's deviance bd0(λp, λq), exact near λp = λq."""
    return bd0(p["rate"], q["rate"])


@closed_form(("Bernoulli", "Poisson"))
def _bernoulli_poisson(p: Side, q: Side) -> np.ndarray:
    """Σ_{k∈{0,1}} P_k·log P_k + λ − P₁·log λ."""
    log1, log0 = _binary_logs(p)
    p1, p0 = np.exp(log1), np.exp(log0)
    rate = q["rate"]
    with np.errstate(divide="ignore", invalid="ignore"):
        neg_entropy = np.where(p1 > 0, p1 * log1, 0.0) + np.where(p0 > 0, p0 * log0, 0.0)
        return neg_entropy + rate - special.xlogy(p1, rate)


@closed_form(("Poisson", "Bernoulli"), ("Poisson", "Binomial"))
def _poisson_bounded(p: Side, q: Side) -> np.ndarray:
    """+inf: a Poisson has mass on every count, unless its rate is 0 — a point mass at 0,
    whose KL is −log q(0) = −n·log(1 − q)."""
    n = q["total_count"] if q.family == "Binomial" else np.ones(q.size)
    _, log0 = _binary_logs(q)
    with np.errstate(invalid="ignore"):
        at_zero = np.where(n == 0.0, 0.0, -n * log0)
    return np.where(p["rate"] == 0.0, at_zero, np.inf)


def _geometric_log1m(side: Side) -> np.ndarray:
    """θ = log(1 − p), the natural parameter."""
    if side.parametrization == "probs":
        return np.log1p(-side["probs"])
    return -softplus(side["logits"])


@closed_form(("Geometric", "Geometric"))
def _geometric_geometric(p: Side, q: Side) -> np.ndarray:
    """With m = (1 − p)/p = E_p[k] and d = θq − θp (θ = log(1 − prob)): the Bregman divergence
    of A(θ) = −log(1 − e^θ), −log1p(y) − d·m with y = −m·expm1(d), written as
    −(log1p(y) − y) + m·(e^d − 1 − d). −log q where p = 1 (a point mass at 0)."""
    if p.parametrization == q.parametrization == "probs":
        d = _log1m_ratio(p["probs"], q["probs"])
    elif p.parametrization == q.parametrization == "logits":
        d = softplus_diff(p["logits"], q["logits"])
    else:
        d = _geometric_log1m(q) - _geometric_log1m(p)
    m = (1.0 - p["probs"]) / p["probs"] if p.parametrization == "probs" else np.exp(-p["logits"])
    log_q_success, _ = _binary_logs(q)
    with np.errstate(over="ignore", invalid="ignore"):
        y = -m * np.expm1(d)
        found = -log1pmx(y) + m * expm1mx(d)
    return np.where(m == 0.0, -log_q_success, found)


# ----- categories ------------------------------------------------------------------------------


def _category_logs(side: Side) -> np.ndarray:
    weights, kind = weights_of(side.params)
    with np.errstate(divide="ignore"):
        return category_log_probs(weights, kind, side.options.get("normalize_probs", False))


@closed_form(("Categorical", "Categorical"), ("OneHotCategorical", "OneHotCategorical"))
def _categorical_categorical(p: Side, q: Side) -> np.ndarray:
    """The finite sum above; u = log(q_k/p_k) from the probabilities (both by probs), from the
    logits' differences Δ as Δ_k − log Σ_j p_j·e^{Δ_j} (both by logits, where |Δ| ≤ 1: no
    normaliser cancels), from the log-probabilities otherwise."""
    lp, lq = _category_logs(p), _category_logs(q)
    if lp.shape[-1] != lq.shape[-1]:
        raise OracleError(f"KL: p has {lp.shape[-1]} categories, q {lq.shape[-1]}")
    pp, qq = np.exp(lp), np.exp(lq)
    u = lq - lp
    if p.parametrization == q.parametrization == "probs":
        u = log_ratio(qq, pp)
    elif p.parametrization == q.parametrization == "logits":
        delta = q["logits"] - p["logits"]
        near = np.all(np.abs(delta) <= 1.0, axis=-1, keepdims=True)
        dn = np.where(near, delta, 0.0)
        shift = np.log1p((pp * np.expm1(dn)).sum(-1, keepdims=True))
        u = np.where(near, dn - shift, u)
    return _finite_kl(pp, qq, u)


def _ordered_logistic_as_categorical(params, parametrization):
    """Its category probabilities, as normalised logits (log-probabilities)."""
    family = FAMILIES["OrderedLogistic"]
    n = np.shape(params["cutpoints"])[-1] + 1
    size = len(params["predictor"])
    logs = [family.log_prob(params, np.full(size, float(k)), parametrization) for k in range(n)]
    return {"logits": np.stack(logs, axis=-1)}, "logits"


register_alias(
    "OrderedLogistic",
    "Categorical",
    _ordered_logistic_as_categorical,
    "NumPyro's OrderedLogistic subclasses CategoricalProbs and inherits its KL rule",
)
register_alias(
    "OneHotCategoricalStraightThrough",
    "OneHotCategorical",
    lambda params, parametrization: (dict(params), parametrization),
    "the same law as OneHotCategorical (only its sample's gradient differs); torch's "
    "subclasses OneHotCategorical and inherits its KL rule",
)
