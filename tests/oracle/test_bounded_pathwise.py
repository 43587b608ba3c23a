"""The oracle's bounded test functions' expectations and their derivatives
(``Family.bounded_pathwise``), which judge the pathwise derivatives of draws whose law has no
moments to differentiate (StudentT's, FisherSnedecor's and MultivariateStudentT's df), held to
scipy's densities integrated by ``scipy.integrate.quad`` and differenced apart from the oracle."""

from __future__ import annotations

import itertools

import mpmath
import numpy as np
import pytest
from scipy import integrate, stats

from conformance import reference
from conformance.reference import bounded

BUMPS = (lambda z: np.exp(-0.5 * z * z), lambda z: z * np.exp(-0.5 * z * z))


def _expectation(pdf, centre: float, width: float, log_scale: bool, which: int) -> float:
    """E[g(s)] by adaptive quadrature of scipy's density, over y = log s or s, in pieces
    split at the centre and at ±1 around it (a heavy-tailed law's density can be 10⁵ times
    narrower at its median than the bumps)."""
    g = BUMPS[which]

    def integrand(y: float) -> float:
        s = np.exp(y) if log_scale else y
        return g((y - centre) / width) * pdf(s) * (s if log_scale else 1.0)

    ends = sorted({centre - 14 * width, centre - 1.0, centre, centre + 1.0, centre + 14 * width})
    return sum(
        integrate.quad(integrand, a, b, epsabs=1e-15, epsrel=1e-12, limit=400)[0]
        for a, b in itertools.pairwise(ends)
        if a < b
    )


def _derivative(make_pdf, value: float, centre, width, log_scale, which) -> float:
    h = 1e-4 * abs(value)
    up = _expectation(make_pdf(value + h), centre, width, log_scale, which)
    down = _expectation(make_pdf(value - h), centre, width, log_scale, which)
    return (up - down) / (2 * h)


def _t_pdf(x, df, loc, scale):
    t = (x - loc) / scale
    norm = mpmath.gamma((df + 1) / 2) / (mpmath.sqrt(df * mpmath.pi) * mpmath.gamma(df / 2))
    return norm * (1 + t * t / df) ** (-(df + 1) / 2) / scale


@pytest.mark.parametrize("df", [0.05, 0.7, 3.0, 40.0, 1e5])
def test_student_t_df_derivative_matches_mpmath(df: float) -> None:
    """Against mpmath's quadrature of the t density (split at the centre, its core and the
    bumps' reach: at df = 0.05 the bumps are 4e5 wide and the density's core about 1), its
    derivative by df a central difference at 1e-8 in 30 digits."""
    family = reference.get_family("StudentT")
    params = {"df": np.array(df), "loc": np.array(0.5), "scale": np.array(2.0)}
    found = family.bounded_pathwise(params, np.ones(()), (), names=["df"])
    assert not found.log_scale and bool(found.placed) and bool(found.converged)
    with mpmath.workdps(30):
        c, w = mpmath.mpf(float(found.centre)), mpmath.mpf(float(found.width))
        ends = sorted({c - 14 * w, c - w, c - 10, c, c + 10, c + w, c + 14 * w})

        def expectation(d, which: int):
            def g(x):
                z = (x - c) / w
                return mpmath.exp(-z * z / 2) * (z if which else 1)

            return mpmath.quad(lambda x: g(x) * _t_pdf(x, d, 0.5, 2), ends)

        h = mpmath.mpf("1e-8") * df
        for which in (0, 1):
            up, down = (
                expectation(mpmath.mpf(df) + h, which),
                expectation(mpmath.mpf(df) - h, which),
            )
            want = float((up - down) / (2 * h))
            got = float(found.derivatives["df"][which])
            assert got == pytest.approx(want, rel=1e-7, abs=1e-13 * max(1.0, abs(want))), which


@pytest.mark.parametrize(("df1", "df2"), [(3.0, 5.0), (0.5, 2.5), (40.0, 0.8), (0.15, 0.2)])
def test_fisher_snedecor_derivatives_match_scipy_on_the_log_scale(df1: float, df2: float) -> None:
    family = reference.get_family("FisherSnedecor")
    params = {"df1": np.array(df1), "df2": np.array(df2)}
    found = family.bounded_pathwise(params, np.ones(()), (), names=["df1", "df2"])
    assert found.log_scale
    c, w = float(found.centre), float(found.width)
    for which in (0, 1):
        d1 = _derivative(lambda a: lambda s: stats.f.pdf(s, a, df2), df1, c, w, True, which)
        d2 = _derivative(lambda b: lambda s: stats.f.pdf(s, df1, b), df2, c, w, True, which)
        assert float(found.derivatives["df1"][which]) == pytest.approx(d1, rel=1e-6, abs=1e-13)
        assert float(found.derivatives["df2"][which]) == pytest.approx(d2, rel=1e-6, abs=1e-13)


def test_multivariate_t_weighted_draws_follow_the_univariate_law() -> None:
    """s = wᵀx of a multivariate t is a Student t (``_weighted_law``): the bumps' expectation
    by quadrature is the mean of g over the oracle's own draws, and df's derivative is scipy's
    univariate t's."""
    family = reference.get_family("MultivariateStudentT")
    chol = np.array([[1.0, 0.0, 0.0], [0.4, 0.8, 0.0], [-0.3, 0.2, 1.5]])
    params = {"df": np.array(2.5), "loc": np.array([0.5, -1.0, 2.0]), "scale_tril": chol}
    w = np.array([1.0, 4 / 3, 5 / 3])
    found = family.bounded_pathwise(params, w, (), names=["df"])
    c, width = float(found.centre), float(found.width)
    draws = family.sample(params, (400_000,), np.random.default_rng(5)) @ w
    z = (draws - c) / width
    loc, scale = float(w @ params["loc"]), float(np.linalg.norm(chol.T @ w))
    for which in (0, 1):
        terms = BUMPS[which](z)
        quadrature = _expectation(lambda s: stats.t.pdf(s, 2.5, loc, scale), c, width, False, which)
        assert abs(terms.mean() - quadrature) < 5 * terms.std() / np.sqrt(terms.size)
        want = _derivative(lambda d: (lambda s: stats.t.pdf(s, d, loc, scale)), 2.5, c, width,
                           False, which)  # fmt: skip
        assert float(found.derivatives["df"][which]) == pytest.approx(want, rel=1e-6)


def test_an_element_whose_bumps_leave_float32_is_not_judged() -> None:
    """FisherSnedecor at df1 = 0.01: log s spreads over hundreds of units, so float32 draws
    round to 0 where the bumps still weigh them; the element is placed but left out, the
    others judged."""
    family = reference.get_family("FisherSnedecor")
    params = {"df1": np.array([0.01, 3.0]), "df2": np.array([3.0, 5.0])}
    found = family.bounded_pathwise(params, np.ones(()), (2,), names=["df1"])
    assert found.judged(np.dtype("float32")).tolist() == [False, True]
    assert found.placed.tolist() == [True, True]
    assert found.unjudged(np.dtype("float32")) == ""


def test_terms_are_zero_where_the_bumps_are_flat_and_keep_nan() -> None:
    """A draw far out (or overflowed) weighs nothing whatever its derivative; a NaN derivative
    where a bump weighs the draw stays NaN (the check reports it)."""
    s = np.array([0.0, 1e30, np.inf, 0.5])
    ds = np.array([np.nan, np.inf, np.nan, np.nan])
    first, second = bounded.derivative_terms(s, ds, np.array(0.0), np.array(1.0), False)
    assert first[1] == second[1] == first[2] == second[2] == 0.0
    assert np.isnan(first[3]) and np.isnan(second[3]) and np.isnan(second[0])
