"""OneHotCategorical by ``probs`` or ``logits``: the Categorical as one-hot vectors of size K.

OneHotCategoricalStraightThrough (torch) is the same distribution; only its reparametrised
sample differs (the straight-through gradient estimator), so the same oracle judges it.

The support is {e_0, …, e_{K-1}}: vectors of zeros and ones summing to 1 (declared as
``boolean`` elementwise, with the sum tested here). Torch normalises ``probs`` as its
Categorical does (see :mod:`conformance.reference.families.categorical`).
"""

from __future__ import annotations

import numpy as np

from .. import projections
from ..core import Arrays, Family, Options, ParamInfo, Projection, Support, ValueInfo
from .categorical import (
    NORMALIZE_OPTION,
    category_complements,
    category_entropy,
    category_log_probs,
    category_log_probs_vjp,
    category_mode,
    category_probs,
    one_hot,
    sample_categories,
    weights_of,
)


class OneHotCategorical(Family):
    def _event_shape(self, params: Arrays, parametrization: str | None) -> tuple[int, ...]:
        weights, _ = weights_of(params)
        return (np.shape(weights)[-1],)

    def support(self, params: Arrays, parametrization: str | None = None) -> Support:
        return Support(self.value.support, event_total=1.0)

    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        weights, kind = weights_of(params)
        log_q = category_log_probs(weights, kind, options.get("normalize_probs", False))
        # Gather at the hot index rather than Σ value·log q, which is 0·(-inf) = nan where a
        # category has probability 0.
        idx = np.argmax(value, axis=-1)
        return np.take_along_axis(log_q, idx[..., None], axis=-1)[..., 0]

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        weights, kind = weights_of(params)
        counts = one_hot(np.argmax(value, axis=-1), weights.shape[-1])
        normalize = options.get("normalize_probs", False)
        return {kind: category_log_probs_vjp(weights, kind, normalize, counts)}

    def _projections(self, params, parametrization, options) -> list[Projection]:
        # The hot index: a one-hot draw is its index, whose law is the normalised weights.
        weights, kind = weights_of(params)
        q = np.exp(category_log_probs(weights, kind, True))
        d = q.shape[-1]

        def index(x: np.ndarray) -> np.ndarray:
            return x @ np.arange(d, dtype=np.float64)

        cdf = projections.tabulated_cdf(np.moveaxis(q, -1, 0))
        return [Projection("hot index", index, cdf, discrete=True)]

    def _sample(self, params, shape, rng, parametrization):
        weights, kind = weights_of(params)
        idx = sample_categories(category_log_probs(weights, kind, True), rng).astype(np.intp)
        return one_hot(idx, weights.shape[-1])

    def _mean(self, params, parametrization, options):
        weights, kind = weights_of(params)
        return category_probs(weights, kind, options.get("normalize_probs", False))

    def _variance(self, params, parametrization, options):
        weights, kind = weights_of(params)
        normalize = options.get("normalize_probs", False)
        q = category_probs(weights, kind, normalize)
        return q * category_complements(weights, kind, normalize)

    def _mode(self, params, parametrization, options):
        # The first of tied most probable categories (torch's argmax), one-hot.
        weights, _ = weights_of(params)
        return one_hot(category_mode(weights).astype(np.intp), weights.shape[-1])

    def _entropy(self, params, parametrization, options):
        weights, kind = weights_of(params)
        return category_entropy(weights, kind, options.get("normalize_probs", False))


ONE_HOT_CATEGORICAL = OneHotCategorical(
    name="OneHotCategorical",
    parametrizations={
        "probs": {"probs": ParamInfo(1, "simplex")},
        "logits": {"logits": ParamInfo(1, "real_vector")},
    },
    value=ValueInfo(1, "boolean", discrete=True),
    options=dict(NORMALIZE_OPTION),
)


ONE_HOT_CATEGORICAL_STRAIGHT_THROUGH = OneHotCategorical(
    name="OneHotCategoricalStraightThrough",
    parametrizations=ONE_HOT_CATEGORICAL.parametrizations,
    value=ONE_HOT_CATEGORICAL.value,
    options=dict(NORMALIZE_OPTION),
)
