"""The oracle's moments of draws along a weighting (``Family.draw_moments``), which judge
pathwise derivatives in expectation (rsample_grad where no map reads the noise back)."""

from __future__ import annotations

import numpy as np
import pytest

from conformance import reference

#: Families and parameters at which the moments are checked against the oracle's own draws.
POINTS = [
    ("Dirichlet", {"concentration": np.array([0.5, 2.0, 3.0])}),
    ("Dirichlet", {"concentration": np.array([[0.1, 0.2, 0.15], [100.0, 250.0, 400.0]])}),
    ("LKJCholesky", {"dimension": 4, "concentration": np.array(1.5)}),
    ("LKJCholesky", {"dimension": 3, "concentration": np.array([0.05, 7.0])}),
    ("LKJ", {"dimension": 4, "concentration": np.array(0.7)}),
    ("LKJ", {"dimension": 2, "concentration": np.array([0.3, 3.0])}),
    ("ProjectedNormal", {"concentration": np.array([[0.0, 0.0], [0.8, 1.5], [-30.0, -40.0]])}),
    ("ProjectedNormal", {"concentration": np.array([[0.0, 0.0, 0.0], [1.0, -0.5, 0.3]])}),
    ("ProjectedNormal", {"concentration": np.array([[300.0, 400.0, 0.0], [0.03, -0.02, 0.0]])}),
    ("Beta", {"concentration1": np.array([0.3, 5.0]), "concentration0": np.array([2.0, 0.5])}),
    (
        "AsymmetricLaplace",
        {"loc": np.array(0.5), "scale": np.array([2.0, 0.3]), "asymmetry": np.array([0.4, 3.0])},
    ),
    (
        "AsymmetricLaplaceQuantile",
        {"loc": np.array(-1.0), "scale": np.array(0.7), "quantile": np.array([0.2, 0.9])},
    ),
    ("FoldedDistribution", {"loc": np.array([-0.4, 0.0, 2.0]), "scale": np.array(1.3)}),
    (
        "LowRankMultivariateNormal",
        {
            "loc": np.array([0.5, -1.0, 2.0]),
            "cov_factor": np.array([[1.0, 0.2], [0.3, -0.5], [0.0, 1.5]]),
            "cov_diag": np.array([0.5, 1.0, 2.0]),
        },
    ),
    (
        "MultivariateNormal",
        {
            "loc": np.array([[0.5, -1.0, 2.0], [0.0, 3.0, -0.5]]),
            "covariance_matrix": np.array([[2.0, 0.6, -1.5], [0.6, 0.8, 0.1], [-1.5, 0.1, 5.0]]),
        },
    ),
    (
        "MultitaskMultivariateNormal",
        {
            "mean": np.array([[0.5, -1.0], [2.0, 0.0], [3.0, -0.5]]),
            "covariance_matrix": np.kron(
                np.array([[1.0, 0.3, 0.1], [0.3, 2.0, -0.4], [0.1, -0.4, 1.5]]),
                np.array([[1.0, 0.5], [0.5, 2.0]]),
            ),
        },
    ),
    (
        "Wishart",
        {"df": np.array([3.5, 9.0]), "covariance_matrix": np.array([[2.0, 0.3], [0.3, 0.5]])},
    ),
    (
        "WishartCholesky",
        {"df": np.array([2.05, 9.0]), "covariance_matrix": np.array([[2.0, 0.3], [0.3, 0.5]])},
    ),
    (
        "WishartCholesky",
        {
            "df": np.array(3.5),
            "covariance_matrix": np.array([[2.0, 0.6, -1.5], [0.6, 0.8, 0.1], [-1.5, 0.1, 5.0]]),
        },
    ),
]
DRAWS = 400_000


def _weights(event: tuple[int, ...]) -> np.ndarray:
    size = int(np.prod(event))
    return (1.0 + np.arange(size) / size).reshape(event)


def test_every_family_with_moments_is_checked_here() -> None:
    declared = {n for n, f in reference.FAMILIES.items() if f.has_pathwise_moments()}
    assert declared == {name for name, _ in POINTS}


@pytest.mark.parametrize(
    ("name", "params"), POINTS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(POINTS)]
)
def test_moments_are_those_of_the_oracles_draws(name: str, params: dict) -> None:
    """E[s] and E[s²] (s = Σ w·x) against the means of 400,000 of the oracle's own draws: a
    z beyond 5 is a wrong formula (the draws' law is tested against the density elsewhere)."""
    family = reference.get_family(name)
    batch = family.batch_shape(params)
    draws = family.sample(params, (DRAWS,), np.random.default_rng(7))
    rank = family.value.event_rank
    w = _weights(draws.shape[draws.ndim - rank :]) if rank else np.ones(())
    s = (draws * w).sum(axis=tuple(range(draws.ndim - rank, draws.ndim)))
    first, second = family.draw_moments(params, w, batch)
    for got, want in ((s, first), (s * s, second)):
        z = (got.mean(0) - want) / (got.std(0) / np.sqrt(DRAWS))
        assert np.all(np.abs(z) < 5.0), (name, z)


def test_dirichlet_moment_derivatives_are_the_closed_form() -> None:
    """∂E[s]/∂α_j = (w_j − A/α₀)/α₀ (A = Σ w·α): the Richardson differences of the moments
    against the derivative written out."""
    alpha = np.array([[0.5, 2.0, 3.0], [0.1, 0.2, 0.15]])
    w = _weights((3,))
    ((first, _),) = (
        reference.get_family("Dirichlet")
        .pathwise_moments({"concentration": alpha}, w, (2,))
        .values()
    )
    total = alpha.sum(-1, keepdims=True)
    want = (w - (w * alpha).sum(-1, keepdims=True) / total) / total
    np.testing.assert_allclose(first, want, rtol=1e-9)


def test_beta_moments_are_the_same_law_in_either_parametrization() -> None:
    """Beta(mean m, concentration c) is Beta(m·c, (1 − m)·c): the same moments, and the
    derivatives by (m, c) are those by (a, b) through the chain rule."""
    family = reference.get_family("Beta")
    a, b = 0.6, 1.4
    by_ab = family.pathwise_moments(
        {"concentration1": np.array(a), "concentration0": np.array(b)}, np.ones(()), ()
    )
    by_mc = family.pathwise_moments(
        {"mean": np.array(a / (a + b)), "concentration": np.array(a + b)},
        np.ones(()),
        (),
        "mean_concentration",
    )
    c = a + b
    for moment in (0, 1):
        d_a, d_b = by_ab["concentration1"][moment], by_ab["concentration0"][moment]
        assert by_mc["mean"][moment] == pytest.approx(c * (d_a - d_b), rel=1e-8)
        assert by_mc["concentration"][moment] == pytest.approx((a * d_a + b * d_b) / c, rel=1e-8)


def test_projected_normal_moments_at_zero_are_the_uniform_laws() -> None:
    """At μ = 0 the direction is uniform on the sphere: E[s] = 0, E[s²] = ‖w‖²/d exactly, and
    ∂E[s]/∂μ = a′(0)·w with a′(0) = √(π/8) at d = 2 (E[c] ≈ r·√(π/8) for a small r)."""
    family = reference.get_family("ProjectedNormal")
    for d in (2, 3, 5):
        w = _weights((d,))
        first, second = family.draw_moments({"concentration": np.zeros(d)}, w, ())
        assert first == pytest.approx(0.0, abs=1e-15)
        assert second == pytest.approx((w * w).sum() / d, rel=1e-12)
    w = _weights((2,))
    (slope, _) = family.pathwise_moments({"concentration": np.zeros(2)}, w, ())["concentration"]
    np.testing.assert_allclose(slope, np.sqrt(np.pi / 8.0) * w, rtol=1e-8)


def test_projected_normal_in_two_dimensions_is_not_judged_in_expectation() -> None:
    family = reference.get_family("ProjectedNormal")
    assert "infinite variance" in family.moments_unjudged({"concentration": np.ones(2)})
    assert family.moments_unjudged({"concentration": np.ones(3)}) == ""


@pytest.mark.parametrize("d", [3, 4, 6])
def test_lkj_cholesky_draws_have_every_rows_correlation_law(d: int) -> None:
    """Every correlation r of LKJ(η) has E[r²] = 1/(2η + d − 1), rows beyond the second too:
    the oracle once drew row i's squared norm from Beta(i − ½, …) as torch does (known failure
    torch-lkj-cholesky-onion-beta), which only the first two rows survive."""
    eta = 1.3
    factor = reference.get_family("LKJCholesky").sample(
        {"dimension": d, "concentration": np.array(eta)}, (200_000,), np.random.default_rng(3)
    )
    corr = factor @ np.swapaxes(factor, -1, -2)
    rows, cols = np.tril_indices(d, -1)
    squares = corr[:, rows, cols] ** 2
    z = (squares.mean(0) - 1.0 / (2.0 * eta + d - 1.0)) / (squares.std(0) / np.sqrt(200_000))
    assert np.all(np.abs(z) < 5.0), z


def test_multivariate_normal_moments_are_the_same_law_in_every_parametrization() -> None:
    """Σ, its Cholesky factor and its inverse give one law: the same E[s] and E[s²] (what
    judges GPyTorch's draws through a root decomposition in expectation)."""
    family = reference.get_family("MultivariateNormal")
    cov = np.array([[2.0, 0.6, -1.5], [0.6, 0.8, 0.1], [-1.5, 0.1, 5.0]])
    loc, w = np.array([0.5, -1.0, 2.0]), _weights((3,))
    by_cov = family.draw_moments({"loc": loc, "covariance_matrix": cov}, w, ())
    by_tril = family.draw_moments(
        {"loc": loc, "scale_tril": np.linalg.cholesky(cov)}, w, (), "scale_tril"
    )
    by_precision = family.draw_moments(
        {"loc": loc, "precision_matrix": np.linalg.inv(cov)}, w, (), "precision_matrix"
    )
    for found in (by_tril, by_precision):
        np.testing.assert_allclose(found, by_cov, rtol=1e-12)
    assert by_cov[1] == pytest.approx(float(w @ loc) ** 2 + float(w @ cov @ w), rel=1e-14)
