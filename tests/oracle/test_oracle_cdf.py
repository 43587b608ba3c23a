"""The oracle's CDFs (what ``sample_fit`` holds draws to): each one is the integral of the
oracle's own density, for every family that declares one, at the first valid written case of
every built-in case file; and the common ones agree with scipy.stats.

Differences F(b) − F(a) between the oracle's own draws are held to the density's quadrature
(scipy.integrate.quad) on the interval, so a wrong normalisation shows as a gap; intervals
that straddle a hurdle's atom are skipped, and families whose log_prob is not the draws'
density (Delta's atom, the censored likelihoods) are held to monotonicity and [0, 1] alone.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import integrate, stats

from conformance import reference
from conformance.cases.builtin import builtin_cases
from conformance.cases.loader import load_case_file
from conformance.expect.materialize import float64_inputs

#: Where draws have an atom the density does not show: only intervals without it integrate.
ATOMS = {"HurdleGamma": 0.0, "HurdleLogNormal": 0.0}
#: Families whose log_prob is not the density of their draws (an atom; the likelihood of a
#: censored observation, whose draws are the base distribution's).
NOT_A_DENSITY = {"Delta", "LeftCensoredDistribution", "RightCensoredDistribution"}


def _first_valid_cases() -> list[tuple[str, str, dict, str]]:
    """(file, case id, float64 parameters, parametrization) of the first written case of each
    case file whose family has a CDF and whose parameters are all valid."""
    found = []
    for path in sorted(builtin_cases().glob("*.yaml")):
        loaded = load_case_file(path)
        for case in loaded.cases:
            family = reference.get_family(case.family)
            if family.law(case.parametrization) != reference.CDF:
                continue
            try:
                params, value = float64_inputs(case)
                valid = family.evaluate(params, value, case.parametrization).params_valid
            except (ValueError, ArithmeticError):
                continue
            if np.all(valid):
                found.append((path.name, case.id, params, case.parametrization, case.family))
                break
    return found


CASES = _first_valid_cases()


def test_every_cdf_family_has_a_case() -> None:
    families = {f for *_, f in CASES}
    with_cdf = {n for n in reference.family_names() if reference.get_family(n).law() == "cdf"}
    assert with_cdf - families == set() or len(families) >= 30, sorted(with_cdf - families)


@pytest.mark.parametrize(
    ("file", "case", "params", "parametrization", "name"),
    CASES,
    ids=[f"{f}::{c}" for f, c, *_ in CASES],
)
def test_cdf_is_the_integral_of_the_density(
    file: str, case: str, params: dict, parametrization: str, name: str
) -> None:
    family = reference.get_family(name)
    draws = family.sample(params, (6,), np.random.default_rng(0), parametrization)
    batch = draws.shape[1:]
    flat = draws.reshape(6, -1)
    element = 0  # the first batch element: cheap, and every parameter broadcast reaches it
    xs = np.unique(flat[:, element][np.isfinite(flat[:, element])])
    broadcast = family.params_broadcast_to(params, batch, parametrization)
    one = {
        k: np.asarray(v).reshape(-1, *np.shape(v)[len(batch) :])[element]
        for k, v in broadcast.items()
    }
    cdf = family.cdf(one, xs, parametrization)
    assert np.all((cdf >= 0.0) & (cdf <= 1.0)), cdf
    assert np.all(np.diff(cdf) >= -1e-12), cdf
    if name in NOT_A_DENSITY:
        return
    atom = ATOMS.get(name)
    for a, b, fa, fb in zip(xs[:-1], xs[1:], cdf[:-1], cdf[1:], strict=True):
        if atom is not None and a <= atom <= b:
            continue

        def density(t: float) -> float:
            # The draws' law's density: log_prob, or where that is not it (HorseshoePrior's
            # documented approximation) the family's draw_log_density.
            at = np.array(t)
            drawn = family.draw_log_density(one, at, parametrization, {})
            log_p = family.log_prob(one, at, parametrization) if drawn is None else drawn
            return float(np.exp(log_p))

        mass, err = integrate.quad(density, a, b, limit=200, epsabs=1e-12, epsrel=1e-9)
        assert abs((fb - fa) - mass) <= 1e-6 + 1e-5 * mass, (a, b, fb - fa, mass, err)


@pytest.mark.parametrize(
    ("name", "params", "law"),
    [
        ("Normal", {"loc": 1.5, "scale": 2.0}, stats.norm(1.5, 2.0)),
        ("Gamma", {"concentration": 0.7, "rate": 3.0}, stats.gamma(0.7, scale=1 / 3.0)),
        ("Beta", {"concentration1": 0.4, "concentration0": 2.5}, stats.beta(0.4, 2.5)),
        ("StudentT", {"df": 2.5, "loc": -1.0, "scale": 0.5}, stats.t(2.5, -1.0, 0.5)),
        ("Cauchy", {"loc": 0.0, "scale": 3.0}, stats.cauchy(0.0, 3.0)),
        ("Laplace", {"loc": 2.0, "scale": 0.25}, stats.laplace(2.0, 0.25)),
        ("Gumbel", {"loc": 1.0, "scale": 2.0}, stats.gumbel_r(1.0, 2.0)),
        ("LogNormal", {"loc": 0.3, "scale": 0.8}, stats.lognorm(0.8, scale=np.exp(0.3))),
        ("Weibull", {"scale": 2.0, "concentration": 1.7}, stats.weibull_min(1.7, scale=2.0)),
        ("Pareto", {"scale": 1.5, "alpha": 2.5}, stats.pareto(2.5, scale=1.5)),
        ("Exponential", {"rate": 4.0}, stats.expon(scale=0.25)),
        ("VonMises", {"loc": 0.5, "concentration": 2.0}, None),
    ],
)
def test_cdf_against_scipy(name: str, params: dict, law) -> None:
    family = reference.get_family(name)
    arrays = {k: np.array(v, dtype=np.float64) for k, v in params.items()}
    x = family.sample(arrays, (200,), np.random.default_rng(1))
    got = family.cdf(arrays, x)
    if law is None:  # von Mises on [−π, π): scipy's CDF is of the unwrapped angle from −π
        law = stats.vonmises(params["concentration"], loc=params["loc"])
        want = law.cdf(x) - law.cdf(-np.pi)
    else:
        want = law.cdf(x)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("Gamma", {"concentration": 1e-10, "rate": 1e-3}),
        ("Gamma", {"concentration": 1e-3, "rate": 1.0}),
        ("Gamma", {"concentration": 1e-3, "rate": 1e3}),
    ],
)
def test_gamma_cdf_keeps_the_subnormals(name: str, params: dict) -> None:
    """Concentrations near 0 put most of the mass among the subnormals, where rate·x
    underflows: the CDF there is mpmath's (a draw of 0 is judged by F at the cell above it),
    not scipy's P(a, 0) = 0."""
    import mpmath

    family = reference.get_family(name)
    arrays = {k: np.array(v, dtype=np.float64) for k, v in params.items()}
    x = np.array([5e-324, 1e-323, 1e-310, 2.2e-308, 1e-300])
    got = family.cdf(arrays, x)
    a, rate = (mpmath.mpf(params[k]) for k in ("concentration", "rate"))
    want = [float(mpmath.gammainc(a, 0, rate * mpmath.mpf(float(v)), regularized=True)) for v in x]
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_logistic_cdf_keeps_its_left_tail() -> None:
    """F = expit(z) to the last digit in both tails (mpmath): a 1 + tanh form is 0 below
    z ≈ −37, where F is still a normal float64 (F(−80) = 1.8e−35)."""
    import mpmath

    family = reference.get_family("Logistic")
    arrays = {"loc": np.array(1.0), "scale": np.array(2.0)}
    x = np.array([-1400.0, -160.0, -75.0, -5.0, 1.0, 3.0, 40.0, 160.0])
    got = family.cdf(arrays, x)
    want = [float(1 / (1 + mpmath.exp(-(mpmath.mpf(float(v)) - 1) / 2))) for v in x]
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=0)
    assert got[0] > 0.0  # e^−700.5, a normal float64


def test_binomial_cdf_is_scipys_and_warns_of_nothing() -> None:
    """The projected Multinomial counts' CDF: scipy's binomial CDF, with no deprecation warning
    of its own (SciPy deprecates non-integer arguments to ``bdtr``)."""
    from conformance.reference.projections import binomial_cdf

    total = np.array([[7.0], [12.0]])
    q = np.array([0.1, 0.45, 0.9])
    k = np.array([-1.0, 0.0, 2.5, 6.0, 7.0, 11.0, 12.0, 30.0])[:, None, None]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = binomial_cdf(total, q)(k)
    np.testing.assert_allclose(got, stats.binom.cdf(np.floor(k), total, q), rtol=1e-12, atol=0)
