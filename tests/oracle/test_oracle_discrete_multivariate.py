"""The discrete, multivariate and composite oracles against independent references.

* scipy.stats to ≤ 1e-12 relative where scipy has the family (binom, poisson, geom, nbinom,
  multinomial, dirichlet, wishart, betabinom, dirichlet_multinomial, multivariate_normal);
* mpmath at 50 digits, from closed forms written here independently of the oracle's (the
  relaxed families from their published densities, LKJ from the paper's vine normaliser, the
  mixtures from their definition), including the boundary points where scipy raises or
  returns nan;
* normalisation: the pmf sums (density integrates) to 1;
* gradients: ``elementwise_grad`` against ``mpmath.diff`` of the mpmath density, coordinate by
  coordinate, ≤ 1e-8 relative;
* the conventions that differ from scipy (geom's shift, nbinom's complement) are shown to be
  load-bearing: the unmapped scipy call disagrees.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import mpmath
import numpy as np
import pytest
from scipy import integrate, special, stats

from conformance import reference
from conformance.cases.generators import cholesky, normal, positive, probability, simplex, spd
from tests.oracle.mp_partials import (
    assert_partial_close,
    input_scale,
    rounded_inputs,
    sensitivity_terms,
)

RTOL = 1e-12
GRAD_RTOL = 1e-8
mpmath.mp.dps = 50
MPF = mpmath.mpf


def family(name: str) -> reference.Family:
    return reference.get_family(name)


def assert_close(actual, expected, rtol: float = RTOL) -> None:
    """Elementwise relative error ≤ rtol; non-finite entries must match exactly."""
    actual, expected = np.asarray(actual, float), np.asarray(expected, float)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    finite = np.isfinite(expected)
    same = np.where(finite, True, (actual == expected) | (np.isnan(actual) & np.isnan(expected)))
    assert np.all(same), f"non-finite mismatch: {actual[~same]} vs {expected[~same]}"
    rel = np.abs(actual[finite] - expected[finite]) / np.maximum(np.abs(expected[finite]), 1e-300)
    assert rel.size == 0 or np.max(rel) <= rtol, f"max rel err {np.max(rel):.3g} > {rtol:g}"


# ----- mpmath log densities, written from the definitions -------------------------------------
def mp_log(x: Any) -> Any:
    return mpmath.log(x) if x != 0 else mpmath.ninf


def mp_xlogy(x: Any, y: Any) -> Any:
    return MPF(0) if x == 0 else x * mp_log(y)


def mp_sigmoid(t: Any) -> Any:
    return 1 / (1 + mpmath.exp(-t))


def mp_binomial(p: dict, k: Any) -> Any:
    n = p["total_count"]
    prob = p["probs"] if "probs" in p else mp_sigmoid(p["logits"])
    return mp_log(mpmath.binomial(n, k)) + mp_xlogy(k, prob) + mp_xlogy(n - k, 1 - prob)


def mp_poisson(p: dict, k: Any) -> Any:
    return mp_xlogy(k, p["rate"]) - p["rate"] - mpmath.loggamma(k + 1)


def mp_geometric(p: dict, k: Any) -> Any:
    prob = p["probs"] if "probs" in p else mp_sigmoid(p["logits"])
    return mp_log(prob) + mp_xlogy(k, 1 - prob)


def mp_negative_binomial(p: dict, k: Any) -> Any:
    r = p["total_count"]
    prob = p["probs"] if "probs" in p else mp_sigmoid(p["logits"])
    coef = (
        MPF(0) if k == 0 else mpmath.loggamma(r + k) - mpmath.loggamma(r) - mpmath.loggamma(k + 1)
    )
    return coef + mp_xlogy(r, 1 - prob) + mp_xlogy(k, prob)


def mp_beta_binomial(p: dict, k: Any) -> Any:
    a, b, n = p["concentration1"], p["concentration0"], p["total_count"]
    return (
        mp_log(mpmath.binomial(n, k))
        + mp_log(mpmath.beta(k + a, n - k + b))
        - mp_log(mpmath.beta(a, b))
    )


def mp_category_log_probs(p: dict, normalize: bool = False) -> list:
    if "probs" in p:
        total = mpmath.fsum(p["probs"]) if normalize else 1
        return [mp_log(q / total) for q in p["probs"]]
    lse = mp_log(mpmath.fsum(mpmath.exp(t) for t in p["logits"]))
    return [t - lse for t in p["logits"]]


def mp_categorical(p: dict, k: Any, normalize: bool = False) -> Any:
    return mp_category_log_probs(p, normalize)[int(k)]


def mp_one_hot(p: dict, x: list, normalize: bool = False) -> Any:
    return mp_category_log_probs(p, normalize)[[int(v) for v in x].index(1)]


def mp_multinomial(p: dict, x: list, normalize: bool = False) -> Any:
    log_q = mp_category_log_probs(p, normalize)
    n = p["total_count"]
    out = mpmath.loggamma(n + 1) - mpmath.fsum(mpmath.loggamma(v + 1) for v in x)
    return out + mpmath.fsum(MPF(0) if v == 0 else v * lq for v, lq in zip(x, log_q, strict=True))


def mp_dirichlet(p: dict, x: list) -> Any:
    a = p["concentration"]
    out = mpmath.loggamma(mpmath.fsum(a)) - mpmath.fsum(mpmath.loggamma(t) for t in a)
    return out + mpmath.fsum(mp_xlogy(t - 1, v) for t, v in zip(a, x, strict=True))


def mp_dirichlet_multinomial(p: dict, x: list) -> Any:
    a, n = p["concentration"], p["total_count"]
    a0 = mpmath.fsum(a)
    out = mpmath.loggamma(a0) + mpmath.loggamma(n + 1) - mpmath.loggamma(n + a0)
    return out + mpmath.fsum(
        mpmath.loggamma(v + t) - mpmath.loggamma(t) - mpmath.loggamma(v + 1)
        for t, v in zip(a, x, strict=True)
    )


def mp_zero_inflated_poisson(p: dict, k: Any) -> Any:
    g = p["gate"] if "gate" in p else mp_sigmoid(p["gate_logits"])
    rate = p["rate"]
    if k == 0:
        return mp_log(g + (1 - g) * mpmath.exp(-rate))
    return mp_log(1 - g) + k * mpmath.log(rate) - rate - mpmath.loggamma(k + 1)


def mp_normal(x: Any, loc: Any, scale: Any) -> Any:
    z = (x - loc) / scale
    return -z * z / 2 - mpmath.log(scale) - mpmath.log(2 * mpmath.pi) / 2


def mp_independent(p: dict, x: list) -> Any:
    n = len(x)
    loc = p["loc"] * n if len(p["loc"]) == 1 else p["loc"]
    scale = p["scale"] * n if len(p["scale"]) == 1 else p["scale"]
    return mpmath.fsum(mp_normal(v, m, s) for v, m, s in zip(x, loc, scale, strict=True))


def mp_mixture(p: dict, x: Any, normalize: bool = False) -> Any:
    log_w = mp_category_log_probs(p, normalize)
    k = len(log_w)
    loc = p["loc"] * k if len(p["loc"]) == 1 else p["loc"]
    scale = p["scale"] * k if len(p["scale"]) == 1 else p["scale"]
    return mp_log(
        mpmath.fsum(
            mpmath.exp(lw + mp_normal(x, m, s)) for lw, m, s in zip(log_w, loc, scale, strict=True)
        )
    )


def mp_low_rank_mvn(p: dict, x: list) -> Any:
    w = mpmath.matrix(p["cov_factor"])
    cov = w * w.T + mpmath.diag(p["cov_diag"])
    d = mpmath.matrix([v - m for v, m in zip(x, p["loc"], strict=True)])
    maha = (d.T * mpmath.inverse(cov) * d)[0]
    return -(len(x) * mpmath.log(2 * mpmath.pi) + mpmath.log(mpmath.det(cov)) + maha) / 2


def mp_relaxed_bernoulli(p: dict, y: Any) -> Any:
    """Maddison et al. (2017), binary Concrete: λ α y^(-λ-1) (1-y)^(-λ-1) / (α y^-λ + (1-y)^-λ)²."""
    lam = p["temperature"]
    alpha = p["probs"] / (1 - p["probs"]) if "probs" in p else mpmath.exp(p["logits"])
    num = lam * alpha * y ** (-lam - 1) * (1 - y) ** (-lam - 1)
    return mpmath.log(num / (alpha * y ** (-lam) + (1 - y) ** (-lam)) ** 2)


def mp_relaxed_one_hot(p: dict, y: list) -> Any:
    """Maddison et al. (2017), Concrete: (K-1)! λ^(K-1) Π α_k y_k^(-λ-1) / (Σ α_k y_k^-λ)^K."""
    lam = p["temperature"]
    alpha = p["probs"] if "probs" in p else [mpmath.exp(t) for t in p["logits"]]
    k = len(y)
    num = mpmath.factorial(k - 1) * lam ** (k - 1)
    for a, v in zip(alpha, y, strict=True):
        num *= a * v ** (-lam - 1)
    den = mpmath.fsum(a * v ** (-lam) for a, v in zip(alpha, y, strict=True)) ** k
    return mpmath.log(num / den)


def mp_lkj_log_normalizer(d: int, eta: Any) -> Any:
    """LKJ (2009), the vine form: log of 2^Σ(2η-2+d-k)(d-k) · Π B(η+(d-k-1)/2, same)^(d-k)."""
    out = MPF(0)
    for k in range(1, d):
        b = eta + MPF(d - k - 1) / 2
        out += (2 * eta - 2 + d - k) * (d - k) * mpmath.log(2) + (d - k) * mpmath.log(
            mpmath.beta(b, b)
        )
    return out


def mp_lkj_cholesky(p: dict, chol: list) -> Any:
    d, eta = int(p["dimension"]), p["concentration"]
    body = mpmath.fsum(
        (d - i + 2 * eta - 2) * mpmath.log(chol[i - 1][i - 1]) for i in range(2, d + 1)
    )
    return body - mp_lkj_log_normalizer(d, eta)


def mp_log_mvgamma(a: Any, d: int) -> Any:
    return MPF(d * (d - 1)) / 4 * mpmath.log(mpmath.pi) + mpmath.fsum(
        mpmath.loggamma(a + MPF(1 - j) / 2) for j in range(1, d + 1)
    )


def mp_wishart(p: dict, x: list, parametrization: str) -> Any:
    nu = p["df"]
    xm = mpmath.matrix(x)
    d = xm.rows
    mat = mpmath.matrix(p[parametrization])
    if parametrization == "covariance_matrix":
        sigma = mat
    elif parametrization == "precision_matrix":
        sigma = mpmath.inverse(mat)
    else:
        sigma = mat * mat.T
    trace = mpmath.fsum((mpmath.inverse(sigma) * xm)[i, i] for i in range(d))
    return (
        (nu - d - 1) / 2 * mpmath.log(mpmath.det(xm))
        - trace / 2
        - nu * d / 2 * mpmath.log(2)
        - nu / 2 * mpmath.log(mpmath.det(sigma))
        - mp_log_mvgamma(nu / 2, d)
    )


# ----- helpers to move between numpy arrays and nested lists of mpf -----------------------------
def to_mp(x: Any) -> Any:
    x = np.asarray(x, dtype=np.float64)
    return MPF(float(x)) if x.ndim == 0 else [to_mp(v) for v in x]


def mp_params(params: dict[str, np.ndarray]) -> dict[str, Any]:
    return {k: to_mp(v) for k, v in params.items()}


# ----- one table drives the mpmath value and gradient tests ------------------------------------
@dataclass
class MpCase:
    id: str
    family: str
    parametrization: str | None
    params: dict[str, Any]
    value: Any
    mp_logpdf: Callable[..., Any]
    options: dict = field(default_factory=dict)
    #: Structure of a matrix input's gradient that is compared: "lower" for scale_tril.
    lower: tuple[str, ...] = ()
    #: Inputs with coordinates on their domain's lower boundary (a zero probability): there the
    #: derivative is one-sided, taken forwards.
    forward: tuple[str, ...] = ()

    def arrays(self) -> tuple[dict[str, np.ndarray], np.ndarray]:
        return {k: np.asarray(v, float) for k, v in self.params.items()}, np.asarray(
            self.value, float
        )

    def mp_eval(self, params: dict[str, Any], value: Any) -> Any:
        if self.family == "Wishart":
            return self.mp_logpdf(params, value, self.parametrization)
        if self.options.get("normalize_probs"):
            return self.mp_logpdf(params, value, normalize=True)
        return self.mp_logpdf(params, value)


_S3 = [[2.0, 0.3, -0.2], [0.3, 1.0, 0.1], [-0.2, 0.1, 1.5]]
_X3 = [[1.5, -0.2, 0.3], [-0.2, 0.7, 0.05], [0.3, 0.05, 2.2]]
_L3 = np.linalg.cholesky(np.array(_S3)).tolist()
_LKJ3 = [[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [0.36, 0.48, 0.8]]

MP_CASES = [
    MpCase(
        "binomial-probs",
        "Binomial",
        "probs",
        {"total_count": 12.0, "probs": 0.37},
        5.0,
        mp_binomial,
    ),
    MpCase(
        "binomial-logits",
        "Binomial",
        "logits",
        {"total_count": 7.0, "logits": -1.3},
        7.0,
        mp_binomial,
    ),
    MpCase("poisson", "Poisson", "rate", {"rate": 3.7}, 6.0, mp_poisson),
    MpCase("geometric-probs", "Geometric", "probs", {"probs": 0.23}, 4.0, mp_geometric),
    MpCase("geometric-logits", "Geometric", "logits", {"logits": 2.1}, 3.0, mp_geometric),
    MpCase(
        "nb-probs",
        "NegativeBinomial",
        "probs",
        {"total_count": 2.6, "probs": 0.71},
        9.0,
        mp_negative_binomial,
    ),
    MpCase(
        "nb-logits",
        "NegativeBinomial",
        "logits",
        {"total_count": 0.4, "logits": -0.8},
        2.0,
        mp_negative_binomial,
    ),
    MpCase(
        "beta-binomial",
        "BetaBinomial",
        None,
        {"concentration1": 1.7, "concentration0": 0.45, "total_count": 9.0},
        6.0,
        mp_beta_binomial,
    ),
    MpCase(
        "categorical-probs", "Categorical", "probs", {"probs": [0.2, 0.5, 0.3]}, 1.0, mp_categorical
    ),
    MpCase(
        "categorical-probs-normalised",
        "Categorical",
        "probs",
        {"probs": [0.2, 0.5, 0.3000007]},
        2.0,
        mp_categorical,
        options={"normalize_probs": True},
    ),
    MpCase(
        "categorical-logits",
        "Categorical",
        "logits",
        {"logits": [1.5, -0.3, 0.2, 4.0]},
        3.0,
        mp_categorical,
    ),
    MpCase(
        "one-hot-logits",
        "OneHotCategorical",
        "logits",
        {"logits": [0.5, -1.0, 2.0]},
        [0, 1, 0],
        mp_one_hot,
    ),
    MpCase(
        "one-hot-probs-normalised",
        "OneHotCategorical",
        "probs",
        {"probs": [0.1, 0.6, 0.3000004]},
        [0, 0, 1],
        mp_one_hot,
        options={"normalize_probs": True},
    ),
    MpCase(
        "multinomial-probs",
        "Multinomial",
        "probs",
        {"total_count": 9.0, "probs": [0.2, 0.5, 0.3]},
        [2.0, 4.0, 3.0],
        mp_multinomial,
    ),
    MpCase(
        "multinomial-logits",
        "Multinomial",
        "logits",
        {"total_count": 5.0, "logits": [0.1, -2.0, 1.0]},
        [0.0, 1.0, 4.0],
        mp_multinomial,
    ),
    MpCase(
        "multinomial-probs-normalised",
        "Multinomial",
        "probs",
        {"total_count": 4.0, "probs": [0.25, 0.25, 0.5000006]},
        [1.0, 1.0, 2.0],
        mp_multinomial,
        options={"normalize_probs": True},
    ),
    MpCase(
        "dirichlet",
        "Dirichlet",
        None,
        {"concentration": [0.6, 2.5, 1.3]},
        [0.15, 0.55, 0.3],
        mp_dirichlet,
    ),
    MpCase(
        "dirichlet-multinomial",
        "DirichletMultinomial",
        None,
        {"concentration": [0.6, 2.5, 1.3], "total_count": 7.0},
        [1.0, 4.0, 2.0],
        mp_dirichlet_multinomial,
    ),
    MpCase(
        "zip-gate",
        "ZeroInflatedPoisson",
        "gate",
        {"gate": 0.3, "rate": 2.2},
        0.0,
        mp_zero_inflated_poisson,
    ),
    MpCase(
        "zip-gate-k",
        "ZeroInflatedPoisson",
        "gate",
        {"gate": 0.3, "rate": 2.2},
        3.0,
        mp_zero_inflated_poisson,
    ),
    MpCase(
        "zip-gate-logits",
        "ZeroInflatedPoisson",
        "gate_logits",
        {"gate_logits": -0.7, "rate": 0.4},
        0.0,
        mp_zero_inflated_poisson,
    ),
    MpCase(
        "low-rank-mvn",
        "LowRankMultivariateNormal",
        None,
        {
            "loc": [0.1, -0.2, 0.3],
            "cov_factor": [[1.0, 0.5], [-0.3, 0.2], [0.1, 0.1]],
            "cov_diag": [0.5, 1.0, 2.0],
        },
        [0.5, 0.1, -1.0],
        mp_low_rank_mvn,
    ),
    MpCase(
        "low-rank-mvn-nearly-singular",
        "LowRankMultivariateNormal",
        None,
        {
            "loc": [0.0, 0.0, 0.0],
            "cov_factor": [[1.0], [0.9], [-0.4]],
            "cov_diag": [1e-3, 2e-3, 1e-3],
        },
        [0.8, 0.75, -0.3],
        mp_low_rank_mvn,
    ),
    MpCase(
        "relaxed-bernoulli-logits",
        "RelaxedBernoulli",
        "logits",
        {"temperature": 0.6, "logits": 0.8},
        0.37,
        mp_relaxed_bernoulli,
    ),
    MpCase(
        "relaxed-bernoulli-probs",
        "RelaxedBernoulli",
        "probs",
        {"temperature": 2.5, "probs": 0.15},
        0.91,
        mp_relaxed_bernoulli,
    ),
    MpCase(
        "relaxed-bernoulli-near-end",
        "RelaxedBernoulli",
        "logits",
        {"temperature": 0.5, "logits": -2.0},
        1e-5,
        mp_relaxed_bernoulli,
    ),
    MpCase(
        "relaxed-one-hot-logits",
        "RelaxedOneHotCategorical",
        "logits",
        {"temperature": 0.5, "logits": [0.3, 0.1, -0.2]},
        [0.2, 0.3, 0.5],
        mp_relaxed_one_hot,
    ),
    MpCase(
        "relaxed-one-hot-probs",
        "RelaxedOneHotCategorical",
        "probs",
        {"temperature": 1.7, "probs": [0.1, 0.2, 0.3, 0.4]},
        [0.05, 0.15, 0.5, 0.3],
        mp_relaxed_one_hot,
    ),
    MpCase(
        "lkj-3",
        "LKJCholesky",
        None,
        {"dimension": 3.0, "concentration": 0.7},
        _LKJ3,
        mp_lkj_cholesky,
    ),
    MpCase(
        "lkj-4",
        "LKJCholesky",
        None,
        {"dimension": 4.0, "concentration": 2.3},
        [[1.0, 0, 0, 0], [0.6, 0.8, 0, 0], [0.0, 0.6, 0.8, 0], [0.5, 0.5, 0.5, 0.5]],
        mp_lkj_cholesky,
    ),
    MpCase(
        "wishart-cov",
        "Wishart",
        "covariance_matrix",
        {"df": 4.5, "covariance_matrix": _S3},
        _X3,
        mp_wishart,
    ),
    MpCase(
        "wishart-precision",
        "Wishart",
        "precision_matrix",
        {"df": 3.2, "precision_matrix": np.linalg.inv(_S3).tolist()},
        _X3,
        mp_wishart,
    ),
    MpCase(
        "wishart-tril",
        "Wishart",
        "scale_tril",
        {"df": 7.0, "scale_tril": _L3},
        _X3,
        mp_wishart,
        lower=("scale_tril",),
    ),
    MpCase(
        "mixture-logits",
        "MixtureSameFamily",
        "normal_logits",
        {"logits": [0.1, 0.2, 0.3], "loc": [0.0, 1.0, 2.0], "scale": [1.0, 0.5, 2.0]},
        0.3,
        mp_mixture,
    ),
    MpCase(
        "mixture-probs-shared-scale",
        "MixtureSameFamily",
        "normal_probs",
        {"probs": [0.2, 0.3, 0.5000004], "loc": [-1.0, 0.0, 1.5], "scale": [0.7]},
        1.9,
        mp_mixture,
        options={"normalize_probs": True},
    ),
    MpCase(
        "mixture-probs-zero-weight",
        "MixtureSameFamily",
        "normal_probs",
        {"probs": [0.0, 0.4, 0.6], "loc": [0.0, 1.0, 2.0], "scale": [1.0, 0.5, 2.0]},
        0.3,
        mp_mixture,
        forward=("probs",),
    ),
    MpCase(
        "independent",
        "Independent",
        None,
        {"loc": [0.0, 1.0, 2.0], "scale": [1.0, 0.5, 2.0]},
        [0.3, 0.1, 0.2],
        mp_independent,
    ),
    MpCase(
        "independent-shared-scale",
        "Independent",
        None,
        {"loc": [0.0, 1.0, 2.0], "scale": [2.0]},
        [0.3, 0.1, 0.2],
        mp_independent,
    ),
]


@pytest.mark.parametrize("case", MP_CASES, ids=lambda c: c.id)
def test_log_prob_matches_mpmath(case: MpCase) -> None:
    params, value = case.arrays()
    got = family(case.family).log_prob(params, value, case.parametrization, case.options)
    expected = float(case.mp_eval(mp_params(params), to_mp(value)))
    assert_close(got, np.array(expected))


def _coordinates(case: MpCase) -> list[tuple[str, tuple[int, ...]]]:
    fam = family(case.family)
    info = fam.params(case.parametrization)
    params, value = case.arrays()
    out = []
    for name, pinfo in info.items():
        if pinfo.integer or pinfo.static:
            continue
        out += [(name, idx) for idx in np.ndindex(*params[name].shape)]
    if not fam.value.discrete:
        out += [("value", idx) for idx in np.ndindex(*value.shape)]
    return out


def _set(nested: Any, idx: tuple[int, ...], t: Any) -> Any:
    if not idx:
        return t
    copy = list(nested)
    copy[idx[0]] = _set(nested[idx[0]], idx[1:], t)
    return copy


def _get(nested: Any, idx: tuple[int, ...]) -> Any:
    for i in idx:
        nested = nested[i]
    return nested


@pytest.mark.parametrize("case", MP_CASES, ids=lambda c: c.id)
def test_elementwise_grad_matches_mpmath_diff(case: MpCase) -> None:
    params, value = case.arrays()
    grads = family(case.family).elementwise_grad(params, value, case.parametrization, case.options)
    mp_p, mp_v = mp_params(params), to_mp(value)
    coords = _coordinates(case)
    assert coords, "a family with no differentiable input cannot test its gradient"
    for name in {n for n, _ in coords}:
        expected = np.zeros(value.shape if name == "value" else params[name].shape)
        for coord_name, idx in coords:
            if coord_name != name:
                continue
            if name in case.lower and idx[-1] > idx[-2]:
                continue  # scale_tril: only the lower triangle is a coordinate

            def f(t, n=name, i=idx):
                if n == "value":
                    return case.mp_eval(mp_p, _set(mp_v, i, t))
                return case.mp_eval({**mp_p, n: _set(mp_p[n], i, t)}, mp_v)

            x0 = _get(mp_v, idx) if name == "value" else _get(mp_p[name], idx)
            direction = 1 if name in case.forward and x0 == 0 else 0
            expected[idx] = float(mpmath.diff(f, x0, direction=direction))
        got = np.asarray(grads[name])
        if name in case.lower:
            got, expected = np.tril(got), np.tril(expected)
        scale = max(float(np.max(np.abs(expected))), 1e-300)
        err = np.abs(got - expected) / np.maximum(np.abs(expected), 1e-6 * scale)
        assert np.max(err) <= GRAD_RTOL, f"∂/∂{name}: {got} vs mpmath {expected}"


# ----- the generated edge cases (conformance.plan.derived.edges) -------------------------------------
def _edge_cases() -> list[tuple[MpCase, list[str]]]:
    """Every generated edge case (float32's too) of a family with an mpmath density here, as an
    :class:`MpCase` of its own, with the inputs whose partial derivative the case judges."""
    from conformance.cases.builtin import builtin_cases
    from conformance.cases.loader import find_case_files, load_case_file
    from conformance.expect.materialize import float64_inputs
    from conformance.plan.derived import edges

    def key(name: str, parametrization: str | None) -> tuple[str, str]:
        return name, parametrization or family(name).default_parametrization

    by_key: dict[tuple[str, str], MpCase] = {}
    for c in MP_CASES:
        by_key.setdefault(key(c.family, c.parametrization), c)
    out = []
    for path in find_case_files(builtin_cases()):
        for case in edges.edge_file(load_case_file(path).cases, path.name, bulk=True).cases:
            template = by_key.get(key(case.family, case.parametrization))
            if template is None:
                continue
            params, value = float64_inputs(case)
            judged = case.spec.grad_wrt or (
                case.differentiable_inputs if "grad" in case.spec.checks else []
            )
            mp_case = MpCase(
                f"{path.stem}-{case.id}",
                case.family,
                case.parametrization,
                {k: np.asarray(v).tolist() for k, v in params.items()},
                np.asarray(value).tolist(),
                template.mp_logpdf,
                template.options,
            )
            out.append((mp_case, list(judged)))
    return out


EDGE_CASES = _edge_cases()


def _digits(case: MpCase) -> int:
    """50 digits, plus one per decade of the largest or smallest input (float32's edges reach
    3.4e38 and 7e-43: lgamma(3e38 + k) − lgamma(3e38) keeps none of 50)."""
    params, value = case.arrays()
    flat = np.concatenate([np.ravel(a) for a in [*params.values(), value]])
    flat = np.abs(flat[np.isfinite(flat) & (flat != 0)])
    return 50 + (int(np.ceil(np.max(np.abs(np.log10(flat))))) if flat.size else 0)


def _mp_log_prob(case: MpCase, params: dict[str, np.ndarray], value: np.ndarray) -> np.ndarray:
    """mpmath's log density element by element over the broadcast batch (the densities here
    take one event)."""
    fam = family(case.family)
    b = fam.broadcast(params, value, case.parametrization)
    info = fam.params(case.parametrization)
    out = np.empty(b.lp_shape)
    for idx in np.ndindex(*b.lp_shape):
        p = {k: v if info[k].static else v[idx] for k, v in b.params.items()}
        out[idx] = float(case.mp_eval(mp_params(p), to_mp(b.value[idx])))
    return out


def _one_sided(case: MpCase, name: str, x0: float) -> int:
    """Differentiate from inside where a scalar parameter sits on an end of its domain."""
    from conformance.reference.domains import interval

    iv = interval(family(case.family).params(case.parametrization)[name].domain)
    if iv is not None and x0 == iv.lo:
        return 1
    if iv is not None and x0 == iv.hi:
        return -1
    return 0


@pytest.mark.parametrize(("case", "judged"), EDGE_CASES, ids=[c.id for c, _ in EDGE_CASES])
def test_generated_edges_match_mpmath(case: MpCase, judged: list[str]) -> None:
    """At every generated edge of these families with a finite log_prob, the oracle agrees with
    mpmath, and so does each judged partial derivative of a scalar parameter (one-sided on an
    end of its domain; relative, beside its inputs' conditioning: mp_partials); array inputs'
    partials are the coordinate tests' above."""
    params, value = case.arrays()
    fam = family(case.family)
    with np.errstate(all="ignore"):
        got = fam.log_prob(params, value, case.parametrization, case.options)
        grads = fam.elementwise_grad(params, value, case.parametrization, case.options)
    if not np.all(np.isfinite(got)):
        pytest.skip("no finite log_prob here: the support and domain tests cover it")
    with mpmath.workdps(_digits(case)):
        want = _mp_log_prob(case, params, value)
        # Relative to the log density's size, floored at 1: an absolute error of ~eps nats is
        # a relative error of eps in the density (the suite's own comparison, compare.py).
        err = np.abs(got - want) / np.maximum(np.abs(want), 1.0)
        # A matrix with condition number 1e6 (`near-singular`): a backward-stable float64
        # factorisation keeps its log-determinant (and the partials) to about 1e-16 × 1e6.
        rtol = 1e-9 if "near-singular" in case.id else RTOL
        assert np.max(err) <= rtol, f"log_prob {got} vs mpmath {want}"
        if np.shape(got) != ():
            return  # a batch: the partials of its elements are the coordinate tests' above
        mp_p, mp_v = mp_params(params), to_mp(value)
        rounded = rounded_inputs(fam, case.parametrization, params, value)
        for name in judged:
            if name == "value" or np.ndim(params[name]) != 0:
                continue
            x0 = mp_p[name]

            def f(t, n=name):
                return case.mp_eval({**mp_p, n: t}, mp_v)

            # Relative to a tiny point, else 1e-20 (see test_oracle_continuous: mpmath's
            # default step reads a partial of 1e-77 at float32's largest df as 1e-50).
            step = {"h": min(abs(x0) * MPF("1e-15"), MPF("1e-20"))} if x0 else {}
            direction = _one_sided(case, name, float(params[name]))
            want = float(mpmath.diff(f, x0, direction=direction, **step))
            assert_partial_close(
                float(np.ravel(grads[name])[0]),
                want,
                input_scale(fam, case.parametrization, name, float(params[name])),
                lambda name=name: sensitivity_terms(case.mp_eval, mp_p, mp_v, name, rounded),
                name,
                rtol,
            )


# ----- scipy.stats, batched ----------------------------------------------------------------
@pytest.mark.parametrize("parametrization", ["probs", "logits"])
def test_binomial_vs_scipy(parametrization: str) -> None:
    n = np.arange(0.0, 41.0)[:, None]
    k = np.arange(0.0, 41.0)[None, :]
    p = probability((41, 41), 1, low=0.01, high=0.99)
    kk, nn = np.broadcast_arrays(k, n)
    mask = kk <= nn
    params = {
        "total_count": n,
        parametrization: p if parametrization == "probs" else special.logit(p),
    }
    got = family("Binomial").log_prob(params, k, parametrization)
    assert np.all(got[~mask] == -np.inf)
    assert_close(got[mask], stats.binom(nn, p).logpmf(kk)[mask])


def test_large_counts_vs_mpmath() -> None:
    """n = 10⁴, a rate of 10⁵, concentrations in the hundreds, k = 2500 with r = 3: regimes where
    differences of lgamma (and scipy's own betaln/binom, off by ~5e-12 at n = 10⁴) cancel; the
    oracle must not."""
    n, p = 10_000.0, np.array([1e-3, 0.3, 0.5, 0.97])
    k = np.array([12.0, 2990.0, 5040.0, 9712.0])
    got = family("Binomial").log_prob({"total_count": n, "probs": p}, k, "probs")
    exact = [
        float(mp_binomial({"total_count": MPF(n), "probs": MPF(q)}, MPF(v)))
        for q, v in zip(p, k, strict=True)
    ]
    assert_close(got, exact, rtol=1e-13)
    bb = {
        "concentration1": np.array([500.0, 0.01]),
        "concentration0": np.array([200.0, 0.02]),
        "total_count": 30.0,
    }
    got = family("BetaBinomial").log_prob(bb, np.array([21.0, 30.0]))
    exact = [
        float(
            mp_beta_binomial(
                mp_params({k2: np.asarray(v)[i] if np.ndim(v) else v for k2, v in bb.items()}),
                MPF(x),
            )
        )
        for i, x in enumerate((21.0, 30.0))
    ]
    assert_close(got, exact, rtol=1e-13)
    dm = {"concentration": np.array([300.0, 100.0, 600.0]), "total_count": 20.0}
    got = family("DirichletMultinomial").log_prob(dm, np.array([6.0, 2.0, 12.0]))
    assert_close(
        got, float(mp_dirichlet_multinomial(mp_params(dm), to_mp([6.0, 2.0, 12.0]))), rtol=1e-13
    )
    rate = np.array([1000.0, 1e5, 3e-4])
    got = family("Poisson").log_prob({"rate": rate}, np.array([1000.0, 99_700.0, 2.0]))
    exact = [
        float(mp_poisson({"rate": MPF(r)}, MPF(v)))
        for r, v in zip(rate, (1000.0, 99_700.0, 2.0), strict=True)
    ]
    assert_close(got, exact, rtol=1e-13)
    nb = {"total_count": 3.0, "probs": 0.999}
    got = family("NegativeBinomial").log_prob(nb, np.array([2500.0, 40000.0]), "probs")
    exact = [float(mp_negative_binomial(mp_params(nb), MPF(v))) for v in (2500.0, 40000.0)]
    assert_close(got, exact, rtol=1e-13)


def test_log_gamma_differences_vs_mpmath() -> None:
    """The oracle's building blocks: log Γ(x+m) - log Γ(x), ψ(x+m) - ψ(x) and log C(n, k)."""
    from conformance.reference.families.binomial import (
        digamma_diff,
        log_binomial_coefficient,
        log_rising,
    )

    rng = np.random.default_rng(7)
    x = np.exp(rng.uniform(np.log(1e-3), np.log(1e5), 300))
    m = np.exp(rng.uniform(np.log(1e-6), np.log(1e5), 300))
    m[::7] = -x[::7] * rng.uniform(0, 0.99, m[::7].shape)
    m[::5] = np.round(m[::5])
    rising, dpsi = log_rising(x, m), digamma_diff(x, m)
    for xi, mi, r, d in zip(x, m, rising, dpsi, strict=True):
        e_r = mpmath.loggamma(MPF(xi) + MPF(mi)) - mpmath.loggamma(MPF(xi))
        e_d = mpmath.digamma(MPF(xi) + MPF(mi)) - mpmath.digamma(MPF(xi))
        assert abs(r - float(e_r)) <= 64 * 2.2e-16 * (abs(float(e_r)) + 1), (xi, mi)
        assert abs(d - float(e_d)) <= 64 * 2.2e-16 * abs(float(e_d)), (xi, mi)
    n = np.round(np.exp(rng.uniform(0, np.log(1e7), 200)))
    k = np.round(n * rng.uniform(0, 1, 200))
    got = log_binomial_coefficient(n, k)
    for ni, ki, g in zip(n, k, got, strict=True):
        e = float(mpmath.log(mpmath.binomial(MPF(ni), MPF(ki))))
        assert abs(g - e) <= 64 * 2.2e-16 * (abs(e) + 1), (ni, ki)


def test_poisson_vs_scipy() -> None:
    rate = positive((50,), 2, low=1e-3, high=300.0)
    k = np.round(rate * normal((3, 50), 3, loc=1.0, scale=0.3).clip(0))
    assert_close(family("Poisson").log_prob({"rate": rate}, k), stats.poisson(rate).logpmf(k))


@pytest.mark.parametrize("parametrization", ["probs", "logits"])
def test_geometric_vs_scipy_shifted(parametrization: str) -> None:
    p = probability((60,), 4, low=0.01, high=0.99)
    k = np.floor(positive((2, 60), 5, low=1.0, high=30.0)) - 1
    param = p if parametrization == "probs" else special.logit(p)
    got = family("Geometric").log_prob({parametrization: param}, k, parametrization)
    assert_close(
        got, stats.geom(p).logpmf(k + 1), rtol=1e-11 if parametrization == "logits" else RTOL
    )
    # The shift is load-bearing: scipy's trial count at k itself disagrees.
    assert np.max(np.abs(got - stats.geom(p).logpmf(np.maximum(k, 1)))) > 1e-3


@pytest.mark.parametrize("parametrization", ["probs", "logits"])
def test_negative_binomial_vs_scipy_complement(parametrization: str) -> None:
    r = positive((40,), 6, low=0.05, high=50.0)
    p = probability((40,), 7, low=0.02, high=0.95)
    k = np.floor(positive((3, 40), 8, low=1.0, high=80.0)) - 1
    param = p if parametrization == "probs" else special.logit(p)
    got = family("NegativeBinomial").log_prob(
        {"total_count": r, parametrization: param}, k, parametrization
    )
    # scipy's p is the probability of the failures counted to r: 1 - probs.
    expected = stats.nbinom(r, 1.0 - p).logpmf(k)
    assert_close(got, expected, rtol=1e-11)
    assert np.max(np.abs(got - stats.nbinom(r, p).logpmf(k))) > 1e-3


def test_beta_binomial_vs_scipy() -> None:
    a = positive((30,), 9, low=0.05, high=50.0)
    b = positive((30,), 10, low=0.05, high=50.0)
    n = np.floor(positive((30,), 11, low=1.0, high=200.0))
    k = np.floor(n * probability((2, 30), 12, low=0.0, high=1.0))
    got = family("BetaBinomial").log_prob(
        {"concentration1": a, "concentration0": b, "total_count": n}, k
    )
    assert_close(got, stats.betabinom(n, a, b).logpmf(k), rtol=1e-11)


def test_multinomial_vs_scipy() -> None:
    probs = simplex((6, 4), 13)
    counts = np.array(
        [[3, 0, 2, 5], [0, 0, 0, 10], [1, 2, 3, 4], [10, 0, 0, 0], [2, 2, 3, 3], [4, 4, 1, 1]]
    )
    got = family("Multinomial").log_prob({"total_count": 10.0, "probs": probs}, counts, "probs")
    expected = [stats.multinomial(10, p).logpmf(c) for p, c in zip(probs, counts, strict=True)]
    assert_close(got, np.array(expected))
    logits = np.log(probs) + normal((6, 1), 14)  # unnormalised logits: same distribution
    got = family("Multinomial").log_prob({"total_count": 10.0, "logits": logits}, counts, "logits")
    assert_close(got, np.array(expected), rtol=1e-11)


def test_dirichlet_vs_scipy() -> None:
    alpha = positive((5, 4), 15, low=0.1, high=30.0)
    x = simplex((5, 4), 16, concentration=2.0)
    got = family("Dirichlet").log_prob({"concentration": alpha}, x)
    expected = [stats.dirichlet(a).logpdf(v) for a, v in zip(alpha, x, strict=True)]
    assert_close(got, np.array(expected), rtol=1e-11)


def test_dirichlet_multinomial_vs_scipy() -> None:
    alpha = positive((5, 3), 17, low=0.05, high=40.0)
    counts = np.array([[3, 0, 4], [7, 0, 0], [2, 2, 3], [0, 0, 7], [1, 5, 1]], dtype=float)
    got = family("DirichletMultinomial").log_prob(
        {"concentration": alpha, "total_count": 7.0}, counts
    )
    expected = [
        stats.dirichlet_multinomial(a, 7).logpmf(c) for a, c in zip(alpha, counts, strict=True)
    ]
    assert_close(got, np.array(expected), rtol=1e-11)


@pytest.mark.parametrize("parametrization", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_wishart_vs_scipy(parametrization: str) -> None:
    cov = spd((3, 3, 3), 18, min_eigenvalue=0.2, max_eigenvalue=4.0)
    mat = {
        "covariance_matrix": cov,
        "precision_matrix": np.linalg.inv(cov),
        "scale_tril": np.linalg.cholesky(cov),
    }[parametrization]
    df = np.array([2.2, 5.0, 40.0])
    x = spd((3, 3, 3), 19, min_eigenvalue=0.1, max_eigenvalue=6.0)
    got = family("Wishart").log_prob({"df": df, parametrization: mat}, x, parametrization)
    expected = [stats.wishart(v, c).logpdf(xx) for v, c, xx in zip(df, cov, x, strict=True)]
    assert_close(got, np.array(expected), rtol=1e-11)


@pytest.mark.parametrize(
    ("parametrization", "order"), [("interleaved", "C"), ("non_interleaved", "F")]
)
def test_multitask_mvn_vs_scipy_in_each_layout(parametrization: str, order: str) -> None:
    """GPyTorch's layouts: interleaved flattens (points, tasks) point-major, non-interleaved
    task-major; scipy sees the flattened vector in that order."""
    n, t = 3, 2
    mean = normal((2, n, t), 30)
    cov = spd((2, n * t, n * t), 31, min_eigenvalue=0.2, max_eigenvalue=4.0)
    x = normal((4, 2, n, t), 32, scale=2.0)
    got = family("MultitaskMultivariateNormal").log_prob(
        {"mean": mean, "covariance_matrix": cov}, x, parametrization
    )
    expected = np.array(
        [
            [
                stats.multivariate_normal(mean[b].flatten(order), cov[b]).logpdf(
                    x[s, b].flatten(order)
                )
                for b in range(2)
            ]
            for s in range(4)
        ]
    )
    assert got.shape == (4, 2)
    assert_close(got, expected, rtol=1e-11)


def test_multitask_mvn_non_interleaved_block_diagonal_is_independent_tasks() -> None:
    """Task-major blocks on the diagonal: one independent MVN per task over its points."""
    n, t = 4, 3
    blocks = spd((t, n, n), 33, min_eigenvalue=0.3, max_eigenvalue=3.0)
    cov = np.zeros((n * t, n * t))
    for j in range(t):
        cov[j * n : (j + 1) * n, j * n : (j + 1) * n] = blocks[j]
    mean, x = normal((n, t), 34), normal((n, t), 35)
    got = family("MultitaskMultivariateNormal").log_prob(
        {"mean": mean, "covariance_matrix": cov}, x, "non_interleaved"
    )
    per_task = [stats.multivariate_normal(mean[:, j], blocks[j]).logpdf(x[:, j]) for j in range(t)]
    assert_close(got, np.array(sum(per_task)), rtol=1e-11)


def test_low_rank_mvn_vs_scipy() -> None:
    loc = normal((4, 5), 20)
    factor = normal((4, 5, 2), 21)
    diag = positive((4, 5), 22, low=0.1, high=3.0)
    x = normal((3, 4, 5), 23, scale=2.0)
    got = family("LowRankMultivariateNormal").log_prob(
        {"loc": loc, "cov_factor": factor, "cov_diag": diag}, x
    )
    cov = factor @ np.swapaxes(factor, -1, -2) + diag[..., None] * np.eye(5)
    expected = np.array(
        [
            [stats.multivariate_normal(loc[b], cov[b]).logpdf(x[s, b]) for b in range(4)]
            for s in range(3)
        ]
    )
    assert_close(got, expected, rtol=1e-11)


@pytest.mark.parametrize("parametrization", ["probs", "logits"])
def test_categorical_and_one_hot_vs_scipy(parametrization: str) -> None:
    probs = simplex((4, 5), 24)
    param = probs if parametrization == "probs" else np.log(probs) + 3.0
    k = np.array([0.0, 4.0, 2.0, 1.0])
    got = family("Categorical").log_prob({parametrization: param}, k, parametrization)
    expected = [
        stats.multinomial(1, p).logpmf(np.eye(5)[int(i)]) for p, i in zip(probs, k, strict=True)
    ]
    assert_close(got, np.array(expected), rtol=1e-11)
    one_hot = np.eye(5)[k.astype(int)]
    for name in ("OneHotCategorical", "OneHotCategoricalStraightThrough"):
        got = family(name).log_prob({parametrization: param}, one_hot, parametrization)
        assert_close(got, np.array(expected), rtol=1e-11)


def test_discrete_uniform_vs_scipy() -> None:
    low = np.array([-3.0, 0.0, 10.0, 4.0])
    high = np.array([3.0, 0.0, 1000.0, 4.0])
    k = np.array([-3.0, 0.0, 517.0, 4.0])
    got = family("DiscreteUniform").log_prob({"low": low, "high": high}, k)
    assert_close(got, stats.randint.logpmf(k, low, high + 1), rtol=1e-14)
    outside = family("DiscreteUniform").log_prob({"low": 2.0, "high": 5.0}, [1.0, 6.0, 3.5])
    assert np.all(outside == -np.inf)
    assert np.isnan(family("DiscreteUniform").log_prob({"low": 5.0, "high": 2.0}, 3.0))


# ----- boundaries, where scipy raises, returns nan, or differs by design -----------------------
def test_binomial_boundaries() -> None:
    f = family("Binomial")
    n = np.array([5.0, 5.0, 5.0, 5.0, 0.0, 0.0])
    p = np.array([0.0, 0.0, 1.0, 1.0, 0.0, 1.0])
    k = np.array([0.0, 1.0, 5.0, 4.0, 0.0, 0.0])
    assert_close(
        f.log_prob({"total_count": n, "probs": p}, k, "probs"), [0, -np.inf, 0, -np.inf, 0, 0]
    )
    logits = np.array([-800.0, 800.0])
    got = f.log_prob({"total_count": 3.0, "logits": logits}, np.array([0.0, 3.0]), "logits")
    assert_close(got, [0.0, 0.0])
    assert np.all(np.isnan(f.log_prob({"total_count": 4.5, "probs": 0.3}, np.array(2.0), "probs")))
    assert np.all(np.isnan(f.log_prob({"total_count": 4.0, "probs": 1.2}, np.array(2.0), "probs")))
    outside = f.log_prob({"total_count": 4.0, "probs": 0.3}, np.array([5.0, -1.0, 2.5]), "probs")
    assert np.all(outside == -np.inf)


def test_poisson_and_zip_boundaries() -> None:
    assert_close(family("Poisson").log_prob({"rate": 0.0}, np.array([0.0, 3.0])), [0.0, -np.inf])
    zip_ = family("ZeroInflatedPoisson")
    k = np.array([0.0, 3.0])
    assert_close(zip_.log_prob({"gate": 0.0, "rate": 2.0}, k, "gate"), stats.poisson(2.0).logpmf(k))
    assert_close(zip_.log_prob({"gate": 1.0, "rate": 2.0}, k, "gate"), [0.0, -np.inf])
    got = zip_.log_prob(
        {"gate_logits": np.array([-40.0, 40.0]), "rate": 2.0}, np.zeros(2), "gate_logits"
    )
    exact = [
        float(mp_zero_inflated_poisson({"gate_logits": MPF(t), "rate": MPF(2)}, MPF(0)))
        for t in (-40.0, 40.0)
    ]
    assert_close(got, exact)
    assert np.all(np.isnan(zip_.log_prob({"gate": 0.3, "rate": 0.0}, np.array(0.0), "gate")))


def test_geometric_boundaries() -> None:
    f = family("Geometric")
    assert_close(f.log_prob({"probs": 1.0}, np.array([0.0, 2.0]), "probs"), [0.0, -np.inf])
    assert np.all(np.isnan(f.log_prob({"probs": 0.0}, np.array([0.0, 2.0]), "probs")))
    big = f.log_prob({"logits": np.array([40.0, -40.0])}, np.array([2.0, 2.0]), "logits")
    exact = [float(mp_geometric({"logits": MPF(t)}, MPF(2))) for t in (40.0, -40.0)]
    assert_close(big, exact)


def test_negative_binomial_boundaries() -> None:
    f = family("NegativeBinomial")
    k = np.array([0.0, 3.0])
    assert_close(f.log_prob({"total_count": 0.0, "probs": 0.4}, k, "probs"), [0.0, -np.inf])
    assert_close(f.log_prob({"total_count": 2.5, "probs": 0.0}, k, "probs"), [0.0, -np.inf])
    assert np.all(np.isnan(f.log_prob({"total_count": 2.5, "probs": 1.0}, k, "probs")))
    got = f.log_prob(
        {"total_count": 1.5, "logits": np.array([-40.0, 40.0])}, np.array([4.0, 4.0]), "logits"
    )
    exact = [
        float(mp_negative_binomial({"total_count": MPF(1.5), "logits": MPF(t)}, MPF(4)))
        for t in (-40.0, 40.0)
    ]
    assert_close(got, exact)


def test_categorical_conventions() -> None:
    f = family("Categorical")
    probs = np.array([0.2, 0.3, 0.5000005])
    k = np.array([0.0, 1.0, 2.0])
    as_given = f.log_prob({"probs": probs}, k, "probs")
    normalised = f.log_prob({"probs": probs}, k, "probs", {"normalize_probs": True})
    assert_close(as_given, np.log(probs))
    assert_close(normalised, np.log(probs / probs.sum()))
    assert np.min(np.abs(as_given - normalised)) > 1e-7  # visible in float64
    zero = np.array([0.0, 0.4, 0.6])
    assert_close(f.log_prob({"probs": zero}, k, "probs"), [-np.inf, np.log(0.4), np.log(0.6)])
    assert np.all(f.log_prob({"probs": zero}, np.array([3.0, -1.0, 1.5]), "probs") == -np.inf)
    with pytest.raises(reference.OracleError):
        f.log_prob({"probs": zero}, k, "probs", {"normalize_probs": "yes"})


def test_one_hot_and_multinomial_supports() -> None:
    oh = family("OneHotCategorical")
    values = np.array([[0, 1, 0], [0, 0, 0], [0, 1, 1], [0, 0.5, 0.5]], dtype=float)
    got = oh.log_prob({"probs": np.array([0.2, 0.3, 0.5])}, values, "probs")
    assert_close(got, [np.log(0.3), -np.inf, -np.inf, -np.inf])
    m = family("Multinomial")
    counts = np.array([[0, 2, 2], [1, 1, 1], [-1, 2, 3], [1.5, 1.5, 1.0], [0, 0, 4]], dtype=float)
    got = m.log_prob({"total_count": 4.0, "probs": np.array([0.0, 0.5, 0.5])}, counts, "probs")
    assert_close(got, [np.log(6 / 16), -np.inf, -np.inf, -np.inf, np.log(1 / 16)])
    assert_close(
        m.log_prob({"total_count": 0.0, "probs": np.array([0.2, 0.8])}, np.zeros(2), "probs"), 0.0
    )


def test_dirichlet_boundaries() -> None:
    f = family("Dirichlet")
    alpha = np.array([1.0, 2.0, 0.5])
    values = np.array([[0.0, 0.5, 0.5], [0.5, 0.0, 0.5], [0.5, 0.5, 0.0], [0.5, 0.5, 0.1]])
    got = f.log_prob({"concentration": alpha}, values)
    finite = float(mp_dirichlet({"concentration": to_mp(alpha)}, to_mp(values[0])))
    assert_close(got, [finite, -np.inf, np.inf, -np.inf])


def test_beta_and_dirichlet_multinomial_boundaries() -> None:
    bb = family("BetaBinomial")
    params = {
        "concentration1": 2.0,
        "concentration0": 3.0,
        "total_count": np.array([0.0, 6.0, 6.0]),
    }
    got = bb.log_prob(params, np.array([0.0, 6.0, 7.0]))
    assert_close(
        got,
        [0.0, float(mp_beta_binomial(mp_params({**params, "total_count": 6.0}), MPF(6))), -np.inf],
    )
    dm = family("DirichletMultinomial")
    got = dm.log_prob({"concentration": np.array([0.5, 2.0]), "total_count": 0.0}, np.zeros(2))
    assert_close(got, 0.0)


def test_relaxed_families_have_open_supports() -> None:
    rb = family("RelaxedBernoulli")
    got = rb.log_prob({"temperature": 0.5, "logits": 0.3}, np.array([0.0, 1.0, 1.5]), "logits")
    assert np.all(got == -np.inf)
    # Far into the tails the oracle still agrees with the closed form (no overflow in softplus).
    y = np.array([1e-12, 1 - 1e-12])
    got = rb.log_prob({"temperature": 3.0, "logits": np.array([-50.0, 50.0])}, y, "logits")
    exact = [
        float(mp_relaxed_bernoulli({"temperature": MPF(3), "logits": MPF(t)}, MPF(float(v))))
        for t, v in zip((-50.0, 50.0), y, strict=True)
    ]
    assert_close(got, exact, rtol=1e-10)
    ro = family("RelaxedOneHotCategorical")
    got = ro.log_prob(
        {"temperature": 0.5, "logits": np.zeros(3)}, np.array([0.0, 0.5, 0.5]), "logits"
    )
    assert got == -np.inf
    # Shifting every logit leaves the Concrete density unchanged (so normalising probs cannot matter).
    y = np.array([0.2, 0.3, 0.5])
    a = ro.log_prob({"temperature": 0.8, "logits": np.array([0.3, 0.1, -0.2])}, y, "logits")
    b = ro.log_prob({"temperature": 0.8, "logits": np.array([5.3, 5.1, 4.8])}, y, "logits")
    assert_close(a, b)


def test_lkj_and_wishart_domains() -> None:
    lkj = family("LKJCholesky")
    eye = np.eye(3)
    assert_close(
        lkj.log_prob({"dimension": 3.0, "concentration": 1.0}, eye),
        -float(mp_lkj_log_normalizer(3, MPF(1))),
    )
    assert np.isnan(lkj.log_prob({"dimension": 1.0, "concentration": 1.0}, np.eye(1)))
    off = np.array([[1.0, 0, 0], [0.6, 0.8, 0], [0.0, 0.606, 0.808]])
    assert lkj.log_prob({"dimension": 3.0, "concentration": 1.0}, off) == -np.inf
    w = family("Wishart")
    cov = np.array([[2.0, 0.3], [0.3, 1.0]])
    x = np.array([[1.5, -0.2], [-0.2, 0.7]])
    got = w.log_prob(
        {"df": np.array([1.0, 0.5, 1.01]), "covariance_matrix": cov}, x, "covariance_matrix"
    )
    assert np.all(np.isnan(got[:2]))
    assert_close(got[2], stats.wishart(1.01, cov).logpdf(x), rtol=1e-11)
    not_pd = np.array([[1.0, 2.0], [2.0, 1.0]])
    assert w.log_prob({"df": 3.0, "covariance_matrix": cov}, not_pd, "covariance_matrix") == -np.inf


def test_mixture_far_tail_is_exact() -> None:
    """logsumexp of log-densities: 40 scales out the densities underflow, the log does not."""
    params = {
        "logits": np.array([0.0, -1.0]),
        "loc": np.array([0.0, 5.0]),
        "scale": np.array([1.0, 0.5]),
    }
    x = np.array([-30.0, 25.0, 40.0])
    got = family("MixtureSameFamily").log_prob(params, x, "normal_logits")
    exact = [float(mp_mixture(mp_params(params), MPF(v))) for v in x]
    assert_close(got, exact)


# ----- normalisation -----------------------------------------------------------------------
def test_discrete_pmfs_sum_to_one() -> None:
    k = np.arange(0.0, 400.0)
    cases = [
        ("Binomial", "probs", {"total_count": 30.0, "probs": 0.37}),
        ("Binomial", "logits", {"total_count": 30.0, "logits": 1.2}),
        ("Poisson", "rate", {"rate": 12.5}),
        ("Geometric", "logits", {"logits": -0.4}),
        ("NegativeBinomial", "probs", {"total_count": 3.3, "probs": 0.6}),
        ("NegativeBinomial", "logits", {"total_count": 0.3, "logits": -1.0}),
        ("BetaBinomial", None, {"concentration1": 0.4, "concentration0": 2.5, "total_count": 25.0}),
        ("ZeroInflatedPoisson", "gate", {"gate": 0.35, "rate": 4.0}),
        ("ZeroInflatedPoisson", "gate_logits", {"gate_logits": 1.5, "rate": 4.0}),
    ]
    for name, par, params in cases:
        total = np.exp(family(name).log_prob(params, k, par)).sum()
        assert abs(total - 1.0) < 1e-12, (name, par, total)


def test_multivariate_pmfs_sum_to_one() -> None:
    n = 6
    grid = np.array(
        [(a, b, n - a - b) for a in range(n + 1) for b in range(n + 1 - a)], dtype=float
    )
    for name, par, params in [
        ("Multinomial", "logits", {"total_count": float(n), "logits": np.array([0.3, -1.0, 0.9])}),
        (
            "DirichletMultinomial",
            None,
            {"concentration": np.array([0.3, 2.0, 5.0]), "total_count": float(n)},
        ),
    ]:
        total = np.exp(family(name).log_prob(params, grid, par)).sum()
        assert abs(total - 1.0) < 1e-13, (name, total)


def test_lkj_density_integrates_to_one() -> None:
    """d = 2: over L21 ∈ (-1, 1); d = 3: over (L21, L31, L32) with L31² + L32² < 1."""
    lkj = family("LKJCholesky")

    def chol2(r: float) -> np.ndarray:
        return np.array([[1.0, 0.0], [r, np.sqrt(1 - r * r)]])

    for eta in (0.6, 1.0, 3.0):
        total, _ = integrate.quad(
            lambda r, e=eta: np.exp(lkj.log_prob({"dimension": 2.0, "concentration": e}, chol2(r))),
            -1,
            1,
            epsabs=1e-13,
            epsrel=1e-12,
        )
        assert abs(total - 1.0) < 1e-9, (eta, total)

    # d = 3 on a Gauss-Legendre grid after a = sin θ, b = sin φ, c = cos φ·sin ψ, which turns
    # the Jacobian and every L_ii into cosines: a smooth integrand, one batched oracle call.
    nodes, weights = np.polynomial.legendre.leggauss(48)
    theta, phi, psi = np.meshgrid(*(0.5 * np.pi * nodes,) * 3, indexing="ij")
    w = np.multiply.reduce(np.meshgrid(*(0.5 * np.pi * weights,) * 3, indexing="ij"))
    a, b, c = np.sin(theta), np.sin(phi), np.cos(phi) * np.sin(psi)
    chol = np.zeros((*a.shape, 3, 3))
    chol[..., 0, 0] = 1.0
    chol[..., 1, 0], chol[..., 1, 1] = a, np.cos(theta)
    chol[..., 2, 0], chol[..., 2, 1], chol[..., 2, 2] = b, c, np.cos(phi) * np.cos(psi)
    jacobian = np.cos(theta) * np.cos(phi) ** 2 * np.cos(psi)
    for eta in (2.0, 2.5):
        density = np.exp(lkj.log_prob({"dimension": 3.0, "concentration": eta}, chol))
        total = float(np.sum(w * jacobian * density))
        assert abs(total - 1.0) < 1e-10, (eta, total)


def test_lkj_normaliser_forms_agree() -> None:
    """The oracle's multivariate-gamma normaliser equals the paper's vine product for d = 2..8,
    down to η = 1e-6 (a generated edge), where recovering η from η + (d − 1)/2 by subtraction
    loses 1e-10 of it."""
    from conformance.reference.families.lkj_cholesky import log_lkj_normalizer

    for d in range(2, 9):
        for eta in (1e-6, 0.1, 0.5, 1.0, 2.7, 40.0):
            assert_close(
                log_lkj_normalizer(np.array(eta), d), float(mp_lkj_log_normalizer(d, MPF(eta)))
            )


# ----- sampling: the values cases draw are in the support and distributed as claimed ------------
def test_samples_lie_in_their_supports() -> None:
    rng = np.random.default_rng(0)
    cases = [
        ("LKJCholesky", None, {"dimension": 4.0, "concentration": np.array([0.3, 1.0, 9.0])}),
        (
            "Wishart",
            "scale_tril",
            {"df": np.array([3.5, 8.0]), "scale_tril": cholesky((2, 3, 3), 1)},
        ),
        ("Multinomial", "probs", {"total_count": 9.0, "probs": simplex((3, 4), 2)}),
        (
            "DirichletMultinomial",
            None,
            {"concentration": positive((3, 4), 3), "total_count": np.array([0.0, 4.0, 9.0])},
        ),
        ("RelaxedOneHotCategorical", "logits", {"temperature": 0.7, "logits": normal((3, 4), 4)}),
        ("OneHotCategorical", "probs", {"probs": simplex((3, 4), 5)}),
    ]
    for name, par, params in cases:
        f = family(name)
        x = f.sample(params, (50,), rng, par)
        assert np.all(f.in_support(params, x, par)), name
        assert np.all(np.isfinite(f.log_prob(params, x, par))), name


def test_sample_means() -> None:
    """First moments of 200 000 draws within 5 standard errors of the exact means."""
    rng = np.random.default_rng(1)
    checks = [
        ("NegativeBinomial", "probs", {"total_count": 2.5, "probs": 0.6}, 2.5 * 0.6 / 0.4),
        ("Geometric", "probs", {"probs": 0.3}, 0.7 / 0.3),
        ("ZeroInflatedPoisson", "gate", {"gate": 0.3, "rate": 4.0}, 0.7 * 4.0),
        (
            "BetaBinomial",
            None,
            {"concentration1": 2.0, "concentration0": 3.0, "total_count": 10.0},
            4.0,
        ),
        (
            "MixtureSameFamily",
            "normal_probs",
            {
                "probs": np.array([0.2, 0.8]),
                "loc": np.array([-1.0, 2.0]),
                "scale": np.array([1.0, 0.5]),
            },
            1.4,
        ),
    ]
    for name, par, params, mean in checks:
        x = family(name).sample(params, (200_000,), rng, par)
        assert abs(x.mean() - mean) < 5 * x.std() / np.sqrt(x.size), name
