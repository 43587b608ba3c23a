"""sample_fit on discrete laws (conformance/expect/laws.py's pmf cells): each draw k stands for
[P(X < k), P(X ≤ k)], the pmf summed from the support's lower end, and the randomised transform
is judged as a continuous law's. Right draws pass; draws from a rate 5 % off, or with the mass
of one outcome moved to its neighbour, fail; a law summed too far is skipped, not passed."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import make_case, run_check, subject_for

POISSON = """
- id: p
  family: Poisson
  params: {rate: [0.3, 4.0, 60.0]}
  value: [0, 3, 55]
"""
GEOMETRIC = """
- id: g
  family: Geometric
  parametrization: probs
  params: {probs: [0.02, 0.5]}
  value: [3, 0]
"""


def test_pmf_cells_are_the_summed_pmf() -> None:
    law = subject_for(make_case(POISSON), "torch", "float64").law
    draws = np.array([[0, 3, 55], [2, 0, 70]], dtype=np.int64)
    below, upper = law.cdf_cells(draws)
    from scipy import stats

    rate = np.array([0.3, 4.0, 60.0])
    np.testing.assert_allclose(upper, stats.poisson.cdf(draws, rate), rtol=1e-12)
    np.testing.assert_allclose(below, stats.poisson.cdf(draws - 1, rate), rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("text", [POISSON, GEOMETRIC])
def test_right_discrete_draws_pass(text: str) -> None:
    result = run_check(make_case(text), "torch", "float64", "sample_fit")
    assert result.passed and not result.skip_reason, result.message
    assert result.metrics["law"] == "pmf"


def test_a_rate_five_percent_off_fails(monkeypatch) -> None:
    import torch
    from torch.distributions import Poisson

    def sample(self, sample_shape=()):
        shape = self._extended_shape(torch.Size(sample_shape))
        return torch.poisson(self.rate.expand(shape) * 1.05)

    monkeypatch.setattr(Poisson, "sample", sample)
    result = run_check(make_case(POISSON), "torch", "float64", "sample_fit")
    assert not result.passed and result.kind == "fit", result.message


def test_one_outcome_moved_to_its_neighbour_fails(monkeypatch) -> None:
    """Geometric draws with every 1 reported as 2: the law of every other outcome intact."""
    from torch.distributions import Geometric

    original = Geometric.sample

    def sample(self, sample_shape=()):
        x = original(self, sample_shape)
        return x + (x == 1)

    monkeypatch.setattr(Geometric, "sample", sample)
    result = run_check(make_case(GEOMETRIC), "torch", "float64", "sample_fit")
    assert not result.passed and result.kind == "fit", result.message


def test_draws_too_far_to_sum_are_skipped_not_passed() -> None:
    far = """
- id: f
  family: Poisson
  params: {rate: 1.0e+9}
  value: 1000000000
"""
    result = run_check(make_case(far), "torch", "float64", "sample_fit")
    assert result.skip_reason and "too far" in result.skip_reason


# ----- discrete vector laws: their counts' projections (reference/projections.py) -----------
MULTINOMIAL = """
- id: m
  family: Multinomial
  params: {total_count: 10, probs: [[0.1, 0.2, 0.3, 0.4], [0.7, 0.1, 0.1, 0.1]]}
  param_dtypes: {total_count: int64}
  value: [[1, 2, 3, 4], [7, 1, 1, 1]]
"""
ONE_HOT = """
- id: o
  family: OneHotCategorical
  params: {probs: [0.2, 0.3, 0.5]}
  value: [0, 0, 1]
"""
DIRICHLET_MULTINOMIAL = """
- id: d
  family: DirichletMultinomial
  params: {concentration: [[0.5, 1.0, 2.0, 4.0], [3.0, 3.0, 0.2, 9.0]], total_count: [12, 5]}
  value: [[1, 2, 3, 6], [1, 1, 0, 3]]
"""


def _projections(text: str, framework: str) -> dict:
    law = subject_for(make_case(text), framework, "float64").law
    assert law.kind == "projections"
    batch = law.family.batch_shape(law.params)
    return {p.name: p for p in law.family.projections(law.params, batch)}


def test_multinomial_counts_are_binomial() -> None:
    from scipy import stats

    found = _projections(MULTINOMIAL, "torch")
    assert set(found) == {"x[0]", "x[3]", "x[0] + … + x[1]"}
    k = np.arange(-1, 12, dtype=np.float64)[:, None]
    probs = np.array([[0.1, 0.2, 0.3, 0.4], [0.7, 0.1, 0.1, 0.1]])
    for name, q in (
        ("x[0]", probs[:, 0]),
        ("x[3]", probs[:, 3]),
        ("x[0] + … + x[1]", probs[:, :2].sum(-1)),
    ):
        assert found[name].discrete
        np.testing.assert_allclose(
            found[name].cdf(k), stats.binom.cdf(k, 10, q), rtol=1e-12, atol=1e-15
        )


def test_dirichlet_multinomial_counts_are_beta_binomial() -> None:
    from scipy import stats

    found = _projections(DIRICHLET_MULTINOMIAL, "numpyro")
    alpha = np.array([[0.5, 1.0, 2.0, 4.0], [3.0, 3.0, 0.2, 9.0]])
    n = np.array([12.0, 5.0])
    k = np.arange(-1, 14, dtype=np.float64)[:, None]
    for name, chosen in (("x[0]", [0]), ("x[3]", [3]), ("x[0] + … + x[1]", [0, 1])):
        a = alpha[:, chosen].sum(-1)
        want = stats.betabinom.cdf(k, n, a, alpha.sum(-1) - a)
        np.testing.assert_allclose(found[name].cdf(k), want, rtol=1e-10, atol=1e-14)


def test_a_one_hot_draw_is_judged_by_its_hot_index() -> None:
    (index,) = _projections(ONE_HOT, "torch").values()
    draws = np.eye(3)[[2, 0, 1]]
    np.testing.assert_array_equal(index.apply(draws), [2.0, 0.0, 1.0])
    np.testing.assert_allclose(
        index.cdf(np.array([[-1.0], [0.0], [1.0], [2.0]])), [[0.0], [0.2], [0.5], [1.0]]
    )


@pytest.mark.parametrize("text", [MULTINOMIAL, ONE_HOT])
def test_right_vector_draws_pass(text: str) -> None:
    result = run_check(make_case(text), "torch", "float64", "sample_fit")
    assert result.passed and not result.skip_reason, result.message
    assert result.metrics["law"] == "projections"


def test_multinomial_draws_with_one_probability_off_fail(monkeypatch) -> None:
    """Counts drawn with the first category's probability 10 % too high (renormalised)."""
    from torch.distributions import Multinomial

    original = Multinomial.sample

    def sample(self, sample_shape=()):
        probs = self.probs.clone()
        probs[..., 0] *= 1.1
        return original(
            Multinomial(self.total_count, probs / probs.sum(-1, keepdim=True)), sample_shape
        )

    monkeypatch.setattr(Multinomial, "sample", sample)
    result = run_check(make_case(MULTINOMIAL), "torch", "float64", "sample_fit")
    assert not result.passed and result.kind == "fit", result.message
    assert "projection x[0]" in result.message


def test_dirichlet_multinomial_law_passes_its_own_draws_and_fails_others() -> None:
    """The oracle's own draws (numpy's Dirichlet and Multinomial) fit; draws with the
    concentrations doubled (the same means, less spread) do not."""
    from conformance.checks import gof

    law = subject_for(make_case(DIRICHLET_MULTINOMIAL), "numpyro", "float64").law
    rng = np.random.default_rng(0)

    def verdicts(concentration):
        params = {**law.params, "concentration": concentration}
        draws = law.family.sample(params, (4096,), rng)
        found = []
        for p in law.projected(draws):
            found += gof.univariate(
                p.values, p.lower, p.upper, seed=0, tests=gof.UNIVARIATE_TESTS * 6
            )
        return gof.worst(found)

    assert verdicts(law.params["concentration"]).passed
    assert not verdicts(2.0 * law.params["concentration"]).passed
