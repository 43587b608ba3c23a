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


def _student_t_inverse_cdf_draws(df: float, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Draws x = F⁻¹(u; df) of a standard t and their exact pathwise derivative by df (the
    inverse CDF's, by a central difference of scipy's stdtrit at fixed u)."""
    from scipy import special

    u = np.random.default_rng(7).uniform(size=n)
    h = 1e-6 * df
    x = special.stdtrit(df, u)
    return x, (special.stdtrit(df + h, u) - special.stdtrit(df - h, u)) / (2 * h)


def test_bounded_test_functions_hold_a_heavy_tailed_derivative_and_see_it_halved() -> None:
    """StudentT(df = 0.7), whose draws have no mean: the bumps' mean derivatives of exact
    inverse-CDF draws agree with the oracle's quadrature, and the same draws with half their
    derivative fail by far."""
    from conformance import reference

    family = reference.get_family("StudentT")
    params = {"df": np.array(0.7), "loc": np.array(0.0), "scale": np.array(1.0)}
    bounded = family.bounded_pathwise(params, np.ones(()), (), names=["df"])
    x, dx = _student_t_inverse_cdf_draws(0.7, pathwise_moments.MOMENT_DRAWS)
    expected = bounded.derivatives["df"]
    judged = bounded.judged(np.dtype("float64"))

    def worst(derivative: np.ndarray) -> gof.Verdict:
        tests = {
            "df": pathwise_moments.bounded_tests_for("df", x, derivative, expected, bounded, judged)
        }
        return gof.worst(pathwise_moments.judge(tests, float(np.finfo(np.float64).eps)))

    right = worst(dx)
    assert right.passed and right.details["largest_term_share"] < 0.05
    halved = worst(0.5 * dx)
    assert not halved.passed and halved.value > 10 * halved.threshold
