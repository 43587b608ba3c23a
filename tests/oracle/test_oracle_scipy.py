"""The oracle agrees with scipy.stats to ≤ 1e-12 relative, element by element."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from scipy import special, stats

from conformance import reference
from conformance.cases.generators import cholesky, normal, positive, probability, spd

RTOL = 1e-12


def assert_close(actual: np.ndarray, expected: np.ndarray) -> None:
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape
    rel = np.abs(actual - expected) / np.maximum(np.abs(expected), 1e-300)
    assert np.max(rel) <= RTOL, f"max rel err {np.max(rel):.3g}"


@pytest.mark.parametrize("seed", range(5))
def test_normal(seed: int) -> None:
    loc = normal((40,), seed, scale=10.0)
    scale = positive((40,), seed + 100, low=1e-3, high=1e3)
    x = normal((3, 40), seed + 200, scale=20.0)
    got = reference.get_family("Normal").log_prob({"loc": loc, "scale": scale}, x)
    assert_close(got, stats.norm(loc, scale).logpdf(x))


def _mvn_expected(loc, cov, x):
    out = np.empty(x.shape[:-1])
    for idx in np.ndindex(*out.shape):
        out[idx] = stats.multivariate_normal(loc[idx], cov[idx]).logpdf(x[idx])
    return out


@pytest.mark.parametrize("parametrization", ["covariance_matrix", "scale_tril", "precision_matrix"])
@pytest.mark.parametrize("n", [1, 3, 7])
def test_multivariate_normal_all_parametrizations(parametrization: str, n: int) -> None:
    loc = normal((4, n), n)
    cov = spd((4, n, n), n + 1, min_eigenvalue=0.05, max_eigenvalue=5.0)
    assert (
        np.count_nonzero(cov - np.diagonal(cov, axis1=-2, axis2=-1)[..., None] * np.eye(n))
        or n == 1
    )
    x = normal((2, 4, n), n + 2)
    matrix = {
        "covariance_matrix": cov,
        "scale_tril": np.linalg.cholesky(cov),
        "precision_matrix": np.linalg.inv(cov),
    }[parametrization]
    got = reference.get_family("MultivariateNormal").log_prob(
        {"loc": loc, parametrization: matrix}, x, parametrization
    )
    expected = _mvn_expected(np.broadcast_to(loc, (2, 4, n)), np.broadcast_to(cov, (2, 4, n, n)), x)
    # inv/cholesky of the input add rounding of their own: compare at 1e-12 all the same.
    assert_close(got, expected)


def test_multivariate_normal_scale_tril_is_not_symmetrised() -> None:
    tril = cholesky((3, 3), 5)
    x = normal((3,), 6)
    got = reference.get_family("MultivariateNormal").log_prob(
        {"loc": np.zeros(3), "scale_tril": tril}, x, "scale_tril"
    )
    assert_close(got, stats.multivariate_normal(np.zeros(3), tril @ tril.T).logpdf(x))


@pytest.mark.parametrize("value", [0.0, 1.0])
def test_bernoulli_probs(value: float) -> None:
    p = probability((200,), 1, low=1e-6, high=1 - 1e-6)
    got = reference.get_family("Bernoulli").log_prob({"probs": p}, np.full(200, value), "probs")
    assert_close(got, stats.bernoulli(p).logpmf(value))


@pytest.mark.parametrize("value", [0.0, 1.0])
def test_bernoulli_logits(value: float) -> None:
    logits = normal((200,), 2, scale=8.0)
    got = reference.get_family("Bernoulli").log_prob(
        {"logits": logits}, np.full(200, value), "logits"
    )
    # scipy takes p: log(p) for p near 1 loses relative precision, so scipy is a reference only
    # for moderate logits; P(x=0 | l) = P(x=1 | -l) avoids 1 - expit(l). mpmath covers all.
    signed = logits if value == 1.0 else -logits
    moderate = np.abs(logits) < 8
    assert_close(got[moderate], stats.bernoulli(special.expit(signed[moderate])).logpmf(1.0))
    mpmath.mp.dps = 40
    exact = [float(-mpmath.log1p(mpmath.exp(-mpmath.mpf(float(t))))) for t in signed]
    assert_close(got, np.array(exact))


def test_bernoulli_logits_large_magnitude_is_exact() -> None:
    logits = np.array([-40.0, 40.0])
    got = reference.get_family("Bernoulli").log_prob(
        {"logits": logits}, np.array([0.0, 1.0]), "logits"
    )
    assert_close(got, -np.log1p(np.exp(-40.0)) * np.ones(2))


def test_bernoulli_outside_support_is_minus_inf() -> None:
    got = reference.get_family("Bernoulli").log_prob(
        {"probs": np.array(0.3)}, np.array([0.5, 2.0]), "probs"
    )
    assert np.all(got == -np.inf)
