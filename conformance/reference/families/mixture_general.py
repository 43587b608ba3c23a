"""MixtureGeneral — NumPyro only: a Categorical(logits | probs) mixture of components from
different families, here Normal(normal_loc, normal_scale) and Cauchy(cauchy_loc, cauchy_scale):

    log p(x) = logsumexp_k(log w_k + log f_k(x)).

The mixing weights have 2 categories on their last axis; every parameter's batch shape
broadcasts with the others (each component is its own distribution, with its own batch shape).
NumPyro takes log_softmax of the Categorical's logits, so ``probs`` are normalised (option
``normalize_probs``, as for MixtureSameFamily).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..constants import HALF_LOG_2PI, LOG_PI
from ..core import Arrays, Family, Options, OracleError, ParamInfo, ValueInfo
from .categorical import (
    NORMALIZE_OPTION,
    category_log_probs,
    category_log_probs_vjp,
    sample_categories,
    weights_of,
)


def _components(params: Arrays, value: np.ndarray) -> tuple[np.ndarray, dict]:
    """log f_k(x) stacked on a last axis, and each component's own partials."""
    zn = (value - params["normal_loc"]) / params["normal_scale"]
    zc = (value - params["cauchy_loc"]) / params["cauchy_scale"]
    sn, sc = params["normal_scale"], params["cauchy_scale"]
    log_n = -0.5 * zn * zn - np.log(sn) - HALF_LOG_2PI
    log_c = -LOG_PI - np.log(sc) - np.log1p(zc * zc)
    parts = {
        "normal_loc": zn / sn,
        "normal_scale": (zn * zn - 1.0) / sn,
        "cauchy_loc": 2.0 * zc / (sc * (1.0 + zc * zc)),
        "cauchy_scale": (zc * zc - 1.0) / (sc * (1.0 + zc * zc)),
        "value": (-zn / sn, -2.0 * zc / (sc * (1.0 + zc * zc))),
    }
    return np.stack([log_n, log_c], axis=-1), parts


class MixtureGeneral(Family):
    def _event_shape(self, params: Arrays, parametrization: str | None) -> tuple[int, ...]:
        weights, _ = weights_of(params)
        if np.shape(weights)[-1] != 2:
            raise OracleError(
                f"MixtureGeneral: {np.shape(weights)[-1]} mixture weights for 2 components"
            )
        return ()

    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        weights, kind = weights_of(params)
        log_w = category_log_probs(weights, kind, options.get("normalize_probs", False))
        log_f, _ = _components(params, value)
        return special.logsumexp(log_w + log_f, axis=-1)

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        weights, kind = weights_of(params)
        normalize = options.get("normalize_probs", False)
        log_w = category_log_probs(weights, kind, normalize)
        log_f, parts = _components(params, value)
        log_mix = special.logsumexp(log_w + log_f, axis=-1, keepdims=True)
        resp = np.exp(log_w + log_f - log_mix)
        if kind == "probs":
            # ∂/∂p_k = f_k/(S·p(x)) − [normalize]/S with S = Σ p: finite where p_k = 0.
            total = weights.sum(-1, keepdims=True) if normalize else 1.0
            d_weights = np.exp(log_f - log_mix) / total - (1.0 / total if normalize else 0.0)
        else:
            d_weights = category_log_probs_vjp(weights, kind, normalize, resp)
        rn, rc = resp[..., 0], resp[..., 1]
        return {
            kind: d_weights,
            "normal_loc": rn * parts["normal_loc"],
            "normal_scale": rn * parts["normal_scale"],
            "cauchy_loc": rc * parts["cauchy_loc"],
            "cauchy_scale": rc * parts["cauchy_scale"],
            "value": rn * parts["value"][0] + rc * parts["value"][1],
        }

    def _cdf(self, params, value, parametrization, options):
        weights, kind = weights_of(params)
        w = np.exp(category_log_probs(weights, kind, True))
        zn = (value - params["normal_loc"]) / params["normal_scale"]
        zc = (value - params["cauchy_loc"]) / params["cauchy_scale"]
        return w[..., 0] * special.ndtr(zn) + w[..., 1] * (0.5 + np.arctan(zc) / np.pi)

    def _sample(self, params, shape, rng, parametrization):
        weights, kind = weights_of(params)
        k = sample_categories(category_log_probs(weights, kind, True), rng)
        normal = params["normal_loc"] + params["normal_scale"] * rng.standard_normal(shape)
        cauchy = params["cauchy_loc"] + params["cauchy_scale"] * rng.standard_cauchy(shape)
        return np.where(k == 0, normal, cauchy)


_COMPONENTS = {
    "normal_loc": ParamInfo(0, "real"),
    "normal_scale": ParamInfo(0, "positive"),
    "cauchy_loc": ParamInfo(0, "real"),
    "cauchy_scale": ParamInfo(0, "positive"),
}
MIXTURE_GENERAL = MixtureGeneral(
    name="MixtureGeneral",
    parametrizations={
        "logits": {"logits": ParamInfo(1, "real_vector"), **_COMPONENTS},
        "probs": {"probs": ParamInfo(1, "simplex"), **_COMPONENTS},
    },
    value=ValueInfo(0, "real"),
    options=dict(NORMALIZE_OPTION),
)
