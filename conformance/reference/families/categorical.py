"""Categorical by ``probs`` or ``logits``; support {0, …, K-1}.

Also home of the helpers every family with a vector of category weights shares (OneHot-,
Multinomial, RelaxedOneHotCategorical, MixtureSameFamily), so the one convention that differs
between frameworks is written once:

``normalize_probs`` — torch divides ``probs`` by their sum; NumPyro's CategoricalProbs and
MultinomialProbs take them as given. Both accept any ``probs`` within 1e-6 of the simplex
(their validation tolerance), so on such inputs the two genuinely differ by up to 1e-6 in
log_prob — invisible in float32, far outside the float64 tolerance. The default is the
mathematical definition (weights as given); a binding declares ``normalize_probs: true``.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..core import Arrays, Family, Options, ParamInfo, Support, ValueInfo

NORMALIZE_OPTION: dict[str, tuple] = {"normalize_probs": (False, True)}


def category_log_probs(weights: np.ndarray, kind: str, normalize: bool) -> np.ndarray:
    """log q_k along the last axis from ``probs`` or ``logits`` (always normalised for logits)."""
    if kind == "probs":
        p = weights / weights.sum(-1, keepdims=True) if normalize else weights
        return np.log(p)
    return weights - special.logsumexp(weights, axis=-1, keepdims=True)


def category_probs(weights: np.ndarray, kind: str, normalize: bool) -> np.ndarray:
    """q_k along the last axis: ``probs`` as given (or divided by their sum), softmax of
    ``logits``."""
    if kind == "probs":
        return weights / weights.sum(-1, keepdims=True) if normalize else weights
    return special.softmax(weights, axis=-1)


def category_complements(weights: np.ndarray, kind: str, normalize: bool) -> np.ndarray:
    """1 − q_k along the last axis without cancelling at a dominant category: the sum of the
    other categories' q (normalised weights), or 1 − p_k for ``probs`` taken as given."""
    if kind == "probs" and not normalize:
        return 1.0 - weights
    q = category_probs(weights, kind, normalize)
    return q @ (1.0 - np.eye(q.shape[-1]))


def category_entropy(weights: np.ndarray, kind: str, normalize: bool) -> np.ndarray:
    """−Σ_k q_k log q_k (0·log 0 = 0), over the last axis."""
    q = category_probs(weights, kind, normalize)
    if kind == "probs":
        return -special.xlogy(q, q).sum(-1)
    log_q = category_log_probs(weights, kind, normalize)
    return -np.where(q > 0, q * log_q, 0.0).sum(-1)


def category_mode(weights: np.ndarray) -> np.ndarray:
    """The most probable category, the first of tied ones (torch's argmax), as a float."""
    return np.argmax(weights, axis=-1).astype(np.float64)


def category_log_probs_vjp(
    weights: np.ndarray, kind: str, normalize: bool, counts: np.ndarray
) -> np.ndarray:
    """∂/∂weights of Σ_k counts_k · log q_k (counts: one-hot, counts, responsibilities…).

    A zero count next to a zero probability contributes nothing (its term is 0·log 0 = 0).
    """
    total = counts.sum(-1, keepdims=True)
    if kind == "probs":
        with np.errstate(divide="ignore", invalid="ignore"):
            g = np.where(counts == 0, 0.0, counts / weights)
        if normalize:
            g = g - total / weights.sum(-1, keepdims=True)
        return g
    return counts - total * special.softmax(weights, axis=-1)


def index_of(value: np.ndarray, k: int) -> np.ndarray:
    """Category indices usable for gathering: values outside {0..K-1} are clipped (the base
    class sets their log_prob to -inf afterwards)."""
    return np.clip(np.nan_to_num(np.floor(value), nan=0.0), 0, k - 1).astype(np.intp)


def one_hot(index: np.ndarray, k: int) -> np.ndarray:
    return (index[..., None] == np.arange(k)).astype(np.float64)


def sample_categories(log_q: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One draw per leading index of ``log_q`` (categories on the last axis), by inverse CDF."""
    cdf = np.cumsum(np.exp(log_q), axis=-1)
    u = rng.random(log_q.shape[:-1])[..., None] * cdf[..., -1:]
    return np.minimum((cdf < u).sum(-1), log_q.shape[-1] - 1).astype(np.float64)


def weights_of(params: Arrays) -> tuple[np.ndarray, str]:
    """The category weights and whether they are ``probs`` or ``logits``."""
    kind = "probs" if "probs" in params else "logits"
    return np.asarray(params[kind]), kind


class Categorical(Family):
    def _event_shape(self, params: Arrays, parametrization: str | None) -> tuple[int, ...]:
        return ()

    def support(self, params: Arrays, parametrization: str | None = None) -> Support:
        """Up to the last category, K − 1 (the parameters' length sets it)."""
        weights, _ = weights_of(params)
        return Support(self.value.support, upper=float(np.shape(weights)[-1] - 1))

    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        weights, kind = weights_of(params)
        log_q = category_log_probs(weights, kind, options.get("normalize_probs", False))
        idx = index_of(value, weights.shape[-1])
        return np.take_along_axis(log_q, idx[..., None], axis=-1)[..., 0]

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        weights, kind = weights_of(params)
        counts = one_hot(index_of(value, weights.shape[-1]), weights.shape[-1])
        normalize = options.get("normalize_probs", False)
        return {kind: category_log_probs_vjp(weights, kind, normalize, counts)}

    def _sample(self, params, shape, rng, parametrization):
        weights, kind = weights_of(params)
        return sample_categories(category_log_probs(weights, kind, True), rng)

    def _mean(self, params, parametrization, options):
        # Torch and NumPyro both return NaN: the categories are labels, not numbers.
        return np.full(weights_of(params)[0].shape[:-1], np.nan)

    def _variance(self, params, parametrization, options):
        return np.full(weights_of(params)[0].shape[:-1], np.nan)

    def _mode(self, params, parametrization, options):
        return category_mode(weights_of(params)[0])

    def _entropy(self, params, parametrization, options):
        weights, kind = weights_of(params)
        return category_entropy(weights, kind, options.get("normalize_probs", False))


CATEGORICAL = Categorical(
    name="Categorical",
    parametrizations={
        "probs": {"probs": ParamInfo(1, "simplex")},
        "logits": {"logits": ParamInfo(1, "real_vector")},
    },
    value=ValueInfo(0, "nonnegative_integer", discrete=True),
    options=dict(NORMALIZE_OPTION),
)
