"""Multinomial(total_count, probs | logits): counts over K categories summing to total_count.

``total_count`` is static: torch's Multinomial takes one Python int for the whole batch
(``NotImplementedError: inhomogeneous total_count`` otherwise), so cases give one number and it
is never broadcast. Torch normalises ``probs``; NumPyro does not (option ``normalize_probs``,
see :mod:`conformance.reference.families.categorical`).
"""

from __future__ import annotations

import numpy as np

from .. import projections
from ..core import Arrays, Family, Options, ParamInfo, Projection, Support, ValueInfo
from .binomial import log_binomial_coefficient
from .categorical import (
    NORMALIZE_OPTION,
    category_log_probs,
    category_log_probs_vjp,
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
