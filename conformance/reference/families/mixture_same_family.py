"""MixtureSameFamily with fixed structure: a Categorical mixture of K Normals.

Parametrisations ``normal_logits`` and ``normal_probs``: mixture ``logits`` | ``probs`` (last
axis K), component ``loc`` and ``scale`` whose last axis is the component axis (event rank 1 in
the oracle: the framework's component batch shape is (..., K)); loc and scale may broadcast
with each other there, and their K must equal the mixture's. The value is a scalar per batch
element:

    log p(x) = logsumexp_k(log w_k + log N(x | loc_k, scale_k))

Both torch and NumPyro take log_softmax of the Categorical's logits, so with ``probs`` both
normalise them (option ``normalize_probs``, see :mod:`conformance.reference.families.categorical`).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..constants import HALF_LOG_2PI
from ..core import Arrays, Family, Options, OracleError, ParamInfo, ValueInfo
from .categorical import (
    NORMALIZE_OPTION,
    category_log_probs,
    category_log_probs_vjp,
    category_probs,
    sample_categories,
    weights_of,
)


def _fold(grad: np.ndarray, like: np.ndarray) -> np.ndarray:
    """Sum the component axis back to size 1 where the parameter had size 1 there."""
    return grad.sum(-1, keepdims=True) if like.shape[-1] == 1 else grad


class MixtureSameFamily(Family):
    def _event_shape(self, params: Arrays, parametrization: str | None) -> tuple[int, ...]:
        weights, _ = weights_of(params)
        k = np.shape(weights)[-1]
        loc_k, scale_k = np.shape(params["loc"])[-1], np.shape(params["scale"])[-1]
        try:
            (kc,) = np.broadcast_shapes((loc_k,), (scale_k,))
        except ValueError:
            raise OracleError(
                f"MixtureSameFamily: loc ({loc_k}) and scale ({scale_k}) components do not "
                "broadcast"
            ) from None
        if kc != k:
            raise OracleError(f"MixtureSameFamily: {k} mixture weights but {kc} components")
        return ()

    def _components(self, params: Arrays, value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        z = (value[..., None] - params["loc"]) / params["scale"]
        return z, -0.5 * z * z - np.log(params["scale"]) - HALF_LOG_2PI

    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        weights, kind = weights_of(params)
        log_w = category_log_probs(weights, kind, options.get("normalize_probs", False))
        _, log_comp = self._components(params, value)
        return special.logsumexp(log_w + log_comp, axis=-1)

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        weights, kind = weights_of(params)
        normalize = options.get("normalize_probs", False)
        log_w = category_log_probs(weights, kind, normalize)
        z, log_comp = self._components(params, value)
        log_mix = special.logsumexp(log_w + log_comp, axis=-1, keepdims=True)
        resp = np.exp(log_w + log_comp - log_mix)
        scale = params["scale"]
        if kind == "probs":
            # ∂/∂p_k log Σ_j q_j N_j = N_k / (S·M) - [normalize]/S with q = p/S: finite at
            # p_k = 0, where the responsibility vanishes but the derivative does not.
            total = weights.sum(-1, keepdims=True) if normalize else 1.0
            d_weights = np.exp(log_comp - log_mix) / total - (1.0 / total if normalize else 0.0)
        else:
            d_weights = category_log_probs_vjp(weights, kind, normalize, resp)
        return {
            kind: d_weights,
            "loc": _fold(resp * z / scale, params["loc"]),
            "scale": _fold(resp * (z * z - 1.0) / scale, scale),
            "value": -(resp * z / scale).sum(-1),
        }

    def _cdf(self, params, value, parametrization, options):
        # Σ_k w_k·Φ((x − loc_k)/scale_k), the weights normalised as both samplers do.
        weights, kind = weights_of(params)
        w = np.exp(category_log_probs(weights, kind, True))
        z, _ = self._components(params, value)
        return (w * special.ndtr(z)).sum(-1)

    def _sample(self, params, shape, rng, parametrization):
        weights, kind = weights_of(params)
        k = sample_categories(category_log_probs(weights, kind, True), rng).astype(np.intp)
        loc, scale = np.broadcast_arrays(params["loc"], params["scale"])
        loc = np.broadcast_to(loc, (*shape, weights.shape[-1]))
        scale = np.broadcast_to(scale, (*shape, weights.shape[-1]))
        pick = k[..., None]
        mu = np.take_along_axis(loc, pick, -1)[..., 0]
        sigma = np.take_along_axis(scale, pick, -1)[..., 0]
        return mu + sigma * rng.standard_normal(shape)

    def _of_components(self, params: Arrays) -> tuple[np.ndarray, np.ndarray]:
        """(E[X | k], Var[X | k]) along the component axis: the component Normal's own
        summaries."""
        from .. import get_family

        normal = get_family("Normal")
        components = {"loc": params["loc"], "scale": params["scale"]}
        return (
            normal.summary("mean", components),
            normal.summary("variance", components),
        )

    def _mean(self, params, parametrization, options):
        # The weights normalised as the option says (torch's Categorical divides probs by their
        # sum; NumPyro's mean reads CategoricalProbs' probs as given).
        weights, kind = weights_of(params)
        w = category_probs(weights, kind, options.get("normalize_probs", False))
        means, _ = self._of_components(params)
        return (w * means).sum(-1)

    def _variance(self, params, parametrization, options):
        # Total variance: E[Var(X | k)] + Var(E[X | k]), the second about the mixture's mean.
        weights, kind = weights_of(params)
        w = category_probs(weights, kind, options.get("normalize_probs", False))
        means, variances = self._of_components(params)
        mean = (w * means).sum(-1, keepdims=True)
        return (w * variances).sum(-1) + (w * (means - mean) ** 2).sum(-1)


_LOC, _SCALE = ParamInfo(1, "real"), ParamInfo(1, "positive")
MIXTURE_SAME_FAMILY = MixtureSameFamily(
    name="MixtureSameFamily",
    parametrizations={
        "normal_logits": {"logits": ParamInfo(1, "real_vector"), "loc": _LOC, "scale": _SCALE},
        "normal_probs": {"probs": ParamInfo(1, "simplex"), "loc": _LOC, "scale": _SCALE},
    },
    value=ValueInfo(0, "real"),
    options=dict(NORMALIZE_OPTION),
)
