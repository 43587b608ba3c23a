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
