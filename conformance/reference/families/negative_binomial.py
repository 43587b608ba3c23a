"""NegativeBinomial(total_count, probs | logits), torch's and NumPyro's convention:

    P(k) = Γ(r + k) / (Γ(r) k!) · (1 - p)^r · p^k,  k = 0, 1, …

the number of successes (each of probability ``probs``) before ``total_count`` failures. scipy's
``nbinom(n, p)`` puts p on the other side: scipy's p is 1 - probs. ``total_count`` is real, and
0 is its limit: a point mass at 0 (torch handles it). p = 1 has no distribution (all mass
escapes to infinity): probs lies in [0, 1).

NumPyro's GammaPoisson(concentration α, rate β) and NegativeBinomial2(mean μ, concentration α)
are the same family in other coordinates (parametrizations ``concentration_rate`` and
``mean_concentration``): r = α and probs = 1/(1 + β) = μ/(α + μ), written as
−α·log1p(1/β) − k·log1p(β) and −α·log1p(μ/α) + k·log(μ/(α + μ)) so neither a rate near 0 nor a
mean far below α cancels. μ = 0 is the point mass at 0 (NumPyro allows it: mean ≥ 0).

Declared convention ``total_count_lower``: torch takes r = 0 (``closed``, the default); NumPyro
builds a Gamma of concentration r and requires r > 0 (``open``), so there r = 0 is a parameter
outside the domain, which a validating NumPyro rejects.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..core import Arrays, Family, Options, ParamInfo, ValueInfo
from .beta import log_minus_offset
from .binomial import (
    digamma_diff,
    digamma_log_gap,
    log_binomial_pmf,
    log_rising,
    softplus,
    two_product,
)


def log_nb_coefficient(r: np.ndarray, k: np.ndarray) -> np.ndarray:
    """log Γ(r+k) / (Γ(r) k!), 0 at k = 0 (any r ≥ 0).

    As a rising factorial over the shorter stretch: Γ(r+k)/Γ(r) / k! when k < r, else
    Γ(k+1+(r-1))/Γ(k+1) / Γ(r) — so r = 3, k = 2500 costs O(log k), not lgamma(2503).
    """
    r, k = np.broadcast_arrays(np.asarray(r, np.float64), np.asarray(k, np.float64))
    with np.errstate(divide="ignore", invalid="ignore"):
        from_r = log_rising(r, k) - special.gammaln(k + 1.0)
        from_k = log_rising(k + 1.0, r - 1.0) - special.gammaln(r)
    return np.where(k == 0, 0.0, np.where(k < r, from_r, from_k))


def log_negative_binomial_pmf(
    r: np.ndarray, k: np.ndarray, p: np.ndarray, q: np.ndarray, log_p: np.ndarray, log_q: np.ndarray
) -> np.ndarray:
    """log Γ(r+k)/(Γ(r) k!) · q^r · p^k, given p, q = 1 − p and their logs, each computed
    accurately by the caller (the parametrizations reach them differently).

    Inside (r, k, p and q all positive) as R's ``dnbinom``: r/(r+k) times the Binomial(r+k, q)
    pmf at r, in Loader's saddle-point form (:func:`~.binomial.log_binomial_pmf`). The direct
    sum cancels terms of size k·log r near the mode (1.4e6 each at r = 1e6, leaving −8.4 with
    1e-10 of it wrong); the saddle-point form has no large terms. At k = 0, r = 0, p = 0, and
    where r + k does not hold both counts exactly (k below r's last digit: there the terms are
    small), the direct form.
    """
    r, k, p, q, log_p, log_q = np.broadcast_arrays(
        *(np.asarray(a, np.float64) for a in (r, k, p, q, log_p, log_q))
    )
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        direct = (
            log_nb_coefficient(r, k)
            + np.where(r == 0, 0.0, r * log_q)
            + np.where(k == 0, 0.0, k * log_p)
        )
        n = r + k
        # log(r/(r+k)): log1p where k/r is small, a difference of logs (no cancellation) else.
        share = np.where(k < r, -np.log1p(k / r), np.log(r) - np.log(n))
        saddle = share + log_binomial_pmf(n, r, q, p, log_q, log_p)
    interior = (r > 0) & (k > 0) & (p > 0) & (q > 0) & (n - r == k) & (n - k == r)
    return np.where(interior, saddle, direct)


class NegativeBinomial(Family):
    def _params_valid(self, params: Arrays, parametrization: str, options: Options) -> np.ndarray:
        ok = super()._params_valid(params, parametrization, options)
        if options.get("total_count_lower", "closed") == "open":
            return ok & (params["total_count"] > 0)
        return ok

    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        if parametrization in GAMMA_POISSON:
            return _gamma_poisson_log_prob(params, value, parametrization)
        r, k = params["total_count"], value
        if parametrization == "probs":
            p = params["probs"]
            with np.errstate(divide="ignore"):
                return log_negative_binomial_pmf(r, k, p, 1.0 - p, np.log(p), np.log1p(-p))
        logits = params["logits"]
        p, q = special.expit(logits), special.expit(-logits)
        return log_negative_binomial_pmf(r, k, p, q, -softplus(-logits), -softplus(logits))

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        if parametrization in GAMMA_POISSON:
            return _gamma_poisson_grad(params, value, parametrization)
        r, k = params["total_count"], value
        with np.errstate(divide="ignore", invalid="ignore"):
            d_coef = digamma_diff(r, k)
            if parametrization == "probs":
                p = params["probs"]
                return {
                    "total_count": _total_count_partial(r, k, p, d_coef),
                    "probs": np.where(k == 0, 0.0, k / p) - r / (1.0 - p),
                }
        logits = params["logits"]
        return {
            "total_count": d_coef - softplus(logits),
            "logits": k * special.expit(-logits) - r * special.expit(logits),
        }

    def _sample(self, params, shape, rng, parametrization):
        if parametrization in GAMMA_POISSON:
            alpha = params["concentration"]
            rate = _rate(params, parametrization)
            lam = rng.gamma(alpha, np.where(np.isinf(rate), 0.0, 1.0 / rate))
            return np.asarray(rng.poisson(lam), np.float64)
        r = params["total_count"]
        if parametrization == "probs":
            odds = params["probs"] / (1.0 - params["probs"])
        else:
            odds = np.exp(params["logits"])
        # Gamma–Poisson mixture: works for any real r ≥ 0 (r = 0 gives 0).
        lam = rng.gamma(np.where(r > 0, r, 1.0), odds) * (r > 0)
        return np.asarray(rng.poisson(lam), np.float64)

    def _mean(self, params, parametrization, options):
        r, odds, _ = _count_odds(params, parametrization)
        return r * odds

    def _variance(self, params, parametrization, options):
        # r·p/(1 − p)² = mean·(1 + odds).
        r, odds, one_plus_odds = _count_odds(params, parametrization)
        return r * odds * one_plus_odds

    def _mode(self, params, parametrization, options):
        # ⌊(r − 1)·p/(1 − p)⌋, 0 for r ≤ 1. Where (r − 1)·p/(1 − p) is a whole number m ≥ 1,
        # m − 1 and m are equally likely: the larger is torch's (the only framework with a mode).
        r, odds, _ = _count_odds(params, parametrization)
        return np.maximum(np.floor((r - 1.0) * odds), 0.0)


def _count_odds(params: Arrays, parametrization: str) -> tuple[np.ndarray, ...]:
    """(r, p/(1 − p), 1/(1 − p)) in each parametrization's own terms: the Gamma–Poisson's
    odds are 1/β = μ/α."""
    if parametrization == "probs":
        p = params["probs"]
        return params["total_count"], p / (1.0 - p), 1.0 / (1.0 - p)
    if parametrization == "logits":
        odds = np.exp(params["logits"])
        return params["total_count"], odds, 1.0 + odds
    alpha = params["concentration"]
    if parametrization == "concentration_rate":
        odds = 1.0 / params["rate"]
        return alpha, odds, 1.0 + odds
    ratio = params["mean"] / alpha
    return alpha, ratio, 1.0 + ratio


def _total_count_partial(
    r: np.ndarray, k: np.ndarray, p: np.ndarray, d_coef: np.ndarray
) -> np.ndarray:
    """ψ(r + k) − ψ(r) + log(1 − p). Near the mode at p ≥ ½ (q = 1 − p exact) as
    digamma_log_gap(r, k) + log1p((k·q − r·p)/r), the two logs log1p(k/r) and log q (±14 at
    r = 1e6, p = 1 − 1e-6) joined into one with k·q − r·p formed exactly; else as given."""
    q = 1.0 - p
    kq, kq_err = two_product(k, q)
    rp, rp_err = two_product(r, p)
    joined = digamma_log_gap(r, k) + np.log1p(((kq - rp) + (kq_err - rp_err)) / r)
    direct = d_coef + np.log1p(-p)
    near = (p >= 0.5) & (r > 0) & (np.abs(kq - rp) < 0.5 * rp)
    return np.where(near & np.isfinite(joined), joined, direct)


#: NumPyro's GammaPoisson and NegativeBinomial2 coordinates of the family.
GAMMA_POISSON = ("concentration_rate", "mean_concentration")


def _rate(params: Arrays, parametrization: str) -> np.ndarray:
    """The Gamma's rate β: given, or α/μ (inf at μ = 0, the point mass at 0)."""
    if parametrization == "concentration_rate":
        return params["rate"]
    with np.errstate(divide="ignore"):
        return params["concentration"] / params["mean"]


def _gamma_poisson_log_prob(params: Arrays, k: np.ndarray, parametrization: str) -> np.ndarray:
    """log C(α, k) + α·log(β/(1 + β)) + k·log(1/(1 + β)), with p = 1/(1 + β) and its logs in
    each parametrization's own terms."""
    alpha = params["concentration"]
    with np.errstate(divide="ignore", invalid="ignore"):
        if parametrization == "concentration_rate":
            rate = params["rate"]
            p, q = 1.0 / (1.0 + rate), rate / (1.0 + rate)
            log_p, log_q = -np.log1p(rate), -np.log1p(1.0 / rate)
        else:
            mean = params["mean"]
            p, q = mean / (alpha + mean), alpha / (alpha + mean)
            log_p, log_q = np.log(p), -np.log1p(mean / alpha)
    return log_negative_binomial_pmf(alpha, k, p, q, log_p, log_q)


def _gamma_poisson_grad(
    params: Arrays, k: np.ndarray, parametrization: str
) -> dict[str, np.ndarray]:
    alpha = params["concentration"]
    with np.errstate(divide="ignore", invalid="ignore"):
        if parametrization == "concentration_rate":
            rate = params["rate"]
            return {
                "concentration": digamma_diff(alpha, k) - np.log1p(1.0 / rate),
                # α/β − (α + k)/(1 + β) over one denominator: no cancellation at large β.
                "rate": (alpha - k * rate) / (rate * (1.0 + rate)),
            }
        mean = params["mean"]
        total = alpha + mean
        # ψ(α + k) − ψ(α) − log1p(μ/α) + (μ − k)/(α + μ), its two logs (each ~log 2 at
        # α = μ = 1e6, the sum 1e-7) joined: log1p(k/α) − log1p(μ/α) = log u with
        # u = (α + k)/(α + μ) = 1 + t, t = (k − μ)/(α + μ), and log u − t cancels nothing more.
        joined = log_minus_offset((alpha + k) / total, (k - mean) / total)
        return {
            "concentration": digamma_log_gap(alpha, k) + joined,
            # k/μ − (α + k)/(α + μ) = α(k − μ)/(μ(α + μ)); −α/(α + μ) at k = 0, μ = 0 too.
            "mean": np.where(k == 0, -alpha / total, alpha * (k - mean) / (mean * total)),
        }


_R = ParamInfo(0, "nonnegative")
NEGATIVE_BINOMIAL = NegativeBinomial(
    name="NegativeBinomial",
    parametrizations={
        "probs": {"total_count": _R, "probs": ParamInfo(0, "half_open:0,1")},
        "logits": {"total_count": _R, "logits": ParamInfo(0, "real")},
        "concentration_rate": {
            "concentration": ParamInfo(0, "positive"),
            "rate": ParamInfo(0, "positive"),
        },
        "mean_concentration": {
            "mean": ParamInfo(0, "nonnegative"),
            "concentration": ParamInfo(0, "positive"),
        },
    },
    value=ValueInfo(0, "nonnegative_integer", discrete=True),
    options={"total_count_lower": ("closed", "open")},
)
