"""rsample_grad in expectation: the t statistics of the draws' mean derivatives."""

from __future__ import annotations

import numpy as np

from conformance.checks import gof, pathwise_moments


def _verdicts(per_draw: np.ndarray, weighted: np.ndarray, first, second, summed=None):
    tests = {"c": pathwise_moments.tests_for("c", weighted, per_draw, (first, second), summed)}
    return pathwise_moments.judge(tests, float(np.finfo(np.float32).eps))


def test_means_at_the_truth_pass_and_a_bias_of_a_tenth_of_the_spread_fails() -> None:
    rng = np.random.default_rng(0)
    n = pathwise_moments.MOMENT_DRAWS
    s = rng.normal(size=(n, 2))
    d = 1.0 + rng.normal(size=(n, 2, 3))  # mean 1, and 2s·d has mean 0
    good = _verdicts(d, s, np.ones((2, 3)), np.zeros((2, 3)))
    assert all(v.passed for v in good)
    assert {v.alpha for v in good} == {gof.ITEM_ALPHA / 12}
    biased = _verdicts(d + 0.1, s, np.ones((2, 3)), np.zeros((2, 3)))
    worst = gof.worst(biased)
    assert not worst.passed and worst.statistic.endswith("∂s/∂c")
    assert worst.details["draws"] == n


def test_the_summed_gradient_is_judged_against_its_reduction() -> None:
    """rsample((n,))'s gradient of Σs by a parameter broadcast along the batch (shape (1, 3)
    against (2, 3)) is n times the per-element means summed over that dimension."""
    rng = np.random.default_rng(1)
    n = 4096
    s = rng.normal(size=(n, 2))
    d = 1.0 + rng.normal(size=(n, 2, 3))
    right = np.full((1, 3), 2.0 * n)  # two batch elements of mean 1
    wrong = np.full((1, 3), 1.0 * n)  # one of them forgotten
    ok = _verdicts(d, s, np.ones((2, 3)), np.zeros((2, 3)), summed=right)
    assert all(v.passed for v in ok)
    bad = gof.worst(_verdicts(d, s, np.ones((2, 3)), np.zeros((2, 3)), summed=wrong))
    assert not bad.passed and "rsample((n,))" in bad.statistic


def test_a_nan_mean_fails() -> None:
    d = np.ones((64, 3))
    d[5, 1] = np.nan
    assert not gof.worst(_verdicts(d, np.zeros(64), np.ones(3), np.zeros(3))).passed
