"""Multinomial(total_count, probs | logits): counts over K categories summing to total_count.

``total_count`` is static: torch's Multinomial takes one Python int for the whole batch
(``NotImplementedError: inhomogeneous total_count`` otherwise), so cases give one number and it
is never broadcast. Torch normalises ``probs``; NumPyro does not (option ``normalize_probs``,
see :mod:`conformance.reference.families.categorical`).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from .. import projections
from ..core import Arrays, Family, Options, ParamInfo, Projection, Support, ValueInfo
from .binomial import (
    count_window,
    log_binomial_coefficient,
    log_binomial_pmf,
    sum_over_counts,
)
from .categorical import (
    NORMALIZE_OPTION,
    category_complements,
    category_entropy,
    category_log_probs,
    category_log_probs_vjp,
    category_probs,
    weights_of,
)


def log_multinomial_coefficient(value: np.ndarray) -> np.ndarray:
    """log n! / Π x_k! over the last axis, n = Σ x_k, as Σ_k log C(x_1+…+x_k, x_k).

    Each binomial coefficient comes from :func:`log_binomial_coefficient` (running sums as n),
    so no difference of large log-factorials cancels.
    """
    running = np.cumsum(value, axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return log_binomial_coefficient(running, value).sum(-1)


class Multinomial(Family):
    def _event_shape(self, params: Arrays, parametrization: str | None) -> tuple[int, ...]:
        weights, _ = weights_of(params)
        return (np.shape(weights)[-1],)

    def support(self, params: Arrays, parametrization: str | None = None) -> Support:
        return Support(self.value.support, event_total=params["total_count"])

    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        weights, kind = weights_of(params)
        log_q = category_log_probs(weights, kind, options.get("normalize_probs", False))
        # x·log q with 0·log 0 = 0: a category of probability 0 that is never drawn is fine.
        powers = np.where(value == 0, 0.0, value * log_q).sum(-1)
        return log_multinomial_coefficient(value) + powers

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        weights, kind = weights_of(params)
        normalize = options.get("normalize_probs", False)
        return {kind: category_log_probs_vjp(weights, kind, normalize, value)}

    def _projections(self, params, parametrization, options) -> list[Projection]:
        # Counts in a set S of categories ~ Binomial(n, Σ_S q), q the normalised weights (what
        # every framework draws from, whatever its log_prob does with unnormalised ones).
        weights, kind = weights_of(params)
        q = np.exp(category_log_probs(weights, kind, True))
        total = np.asarray(params["total_count"], np.float64)
        return [
            Projection(name, projections.counts_in(chosen),
                       projections.binomial_cdf(total, q[..., chosen].sum(-1)), discrete=True)
            for name, chosen in projections.count_groups(q.shape[-1])
        ]  # fmt: skip

    def _sample(self, params, shape, rng, parametrization):
        weights, kind = weights_of(params)
        q = np.exp(category_log_probs(weights, kind, True))
        n = int(params["total_count"])
        out = np.empty(q.shape)
        for idx in np.ndindex(*shape):
            out[idx] = rng.multinomial(n, q[idx] / q[idx].sum())
        return out

    def _mean(self, params, parametrization, options):
        weights, kind = weights_of(params)
        return params["total_count"] * category_probs(weights, kind, _normalize(options))

    def _variance(self, params, parametrization, options):
        weights, kind = weights_of(params)
        normalize = _normalize(options)
        q = category_probs(weights, kind, normalize)
        return params["total_count"] * q * category_complements(weights, kind, normalize)

    def _entropy(self, params, parametrization, options):
        # −E[log p(X)] = n·H(q) − log n! + Σ_k E[log X_k!], X_k ~ Binomial(n, q_k) (torch's form).
        weights, kind = weights_of(params)
        normalize = _normalize(options)
        q = category_probs(weights, kind, normalize)
        n = np.asarray(params["total_count"], np.float64)
        lo, hi = count_window(n * q, np.sqrt(n * q * (1.0 - q)), n)
        complements = category_complements(weights, kind, normalize)
        log_q, log_rest = np.log(q)[..., None], np.log(complements)[..., None]

        def log_pmf(k: np.ndarray) -> np.ndarray:
            return log_binomial_pmf(n, k, q[..., None], complements[..., None], log_q, log_rest)

        log_factorials = sum_over_counts(
            log_pmf, lo, hi, lambda k, lp: np.exp(lp) * special.gammaln(k + 1.0)
        )
        return (
            n * category_entropy(weights, kind, normalize)
            - special.gammaln(n + 1.0)
            + log_factorials.sum(-1)
        )


def _normalize(options: Options) -> bool:
    return bool(options.get("normalize_probs", False))


_COUNT = ParamInfo(0, "nonnegative_integer", integer=True, static=True)
MULTINOMIAL = Multinomial(
    name="Multinomial",
    parametrizations={
        "probs": {"total_count": _COUNT, "probs": ParamInfo(1, "simplex")},
        "logits": {"total_count": _COUNT, "logits": ParamInfo(1, "real_vector")},
    },
    value=ValueInfo(1, "nonnegative_integer", discrete=True),
    options=dict(NORMALIZE_OPTION),
)
