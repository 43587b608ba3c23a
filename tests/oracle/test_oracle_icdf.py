"""The oracle's inverse CDFs (what the ``icdf`` check holds frameworks to): each closed form
against scipy.stats' ``ppf`` (``isf`` of 1 − q for the upper half, so scipy keeps its upper
tail) at rtol 1e-12 from q = 1e-300 to 1 − 1e-15, against the float64 bisection of the
oracle's own CDF on the lower half, and every family's round trip F(F⁻¹(q)) = q; the ends
(q = 0, 1) are the support's, and q outside [0, 1] or an invalid parameter gives NaN."""

from __future__ import annotations

import warnings
from typing import Any

import mpmath
import numpy as np
import pytest
from scipy import stats

from conformance import reference
from conformance.reference.quantiles import invert_cdf

A = np.array
#: Probabilities from the far lower tail to the far upper one.
Q = A([1e-300, 1e-100, 1e-20, 1e-8, 1e-3, 0.1, 0.3, 0.5, 0.7, 0.9, 1 - 1e-3, 1 - 1e-8, 1 - 1e-15])
#: Families whose ``_icdf`` is a closed form (or scipy's special inverses), each at
#: parameters of ordinary and extreme size with scipy's frozen law there.
SCIPY: dict[str, list[tuple[str | None, dict[str, Any], Any]]] = {
    "Normal": [(None, {"loc": 1.5, "scale": 2.0}, stats.norm(1.5, 2.0))],
    "Exponential": [(None, {"rate": 4.0}, stats.expon(scale=0.25))],
    "Cauchy": [(None, {"loc": -1.0, "scale": 3.0}, stats.cauchy(-1.0, 3.0))],
    "Laplace": [(None, {"loc": 2.0, "scale": 0.25}, stats.laplace(2.0, 0.25))],
    "Logistic": [(None, {"loc": 0.5, "scale": 2.0}, stats.logistic(0.5, 2.0))],
    "Gumbel": [(None, {"loc": 1.0, "scale": 2.0}, stats.gumbel_r(1.0, 2.0))],
    "Uniform": [(None, {"low": -2.0, "high": 3.0}, stats.uniform(-2.0, 5.0))],
    "Weibull": [
        (None, {"scale": 2.0, "concentration": 1.7}, stats.weibull_min(1.7, scale=2.0)),
        (None, {"scale": 0.5, "concentration": 0.2}, stats.weibull_min(0.2, scale=0.5)),
    ],
    "Pareto": [(None, {"scale": 1.5, "alpha": 2.5}, stats.pareto(2.5, scale=1.5))],
    "LogNormal": [(None, {"loc": 0.3, "scale": 0.8}, stats.lognorm(0.8, scale=np.exp(0.3)))],
    "HalfNormal": [(None, {"scale": 2.0}, None)],  # scipy's ppf loses q < 1e-8 (ndtri((1+q)/2))
    "HalfCauchy": [(None, {"scale": 0.7}, stats.halfcauchy(scale=0.7))],
    "GeneralizedPareto": [
        (None, {"loc": 1.0, "scale": 2.0, "concentration": 0.3}, stats.genpareto(0.3, 1.0, 2.0)),
        (None, {"loc": 0.0, "scale": 1.0, "concentration": -0.4}, stats.genpareto(-0.4)),
        (None, {"loc": 0.0, "scale": 1.0, "concentration": 0.0}, stats.genpareto(0.0)),
    ],
    "Gamma": [
        (None, {"concentration": 0.7, "rate": 3.0}, stats.gamma(0.7, scale=1 / 3.0)),
        (None, {"concentration": 50.0, "rate": 0.5}, stats.gamma(50.0, scale=2.0)),
    ],
    "Chi2": [(None, {"df": 3.0}, stats.chi2(3.0))],
    "InverseGamma": [
        (None, {"concentration": 2.5, "rate": 1.5}, stats.invgamma(2.5, scale=1.5)),
    ],
    "Beta": [
        (None, {"concentration1": 0.4, "concentration0": 2.5}, stats.beta(0.4, 2.5)),
        (None, {"concentration1": 30.0, "concentration0": 3.0}, stats.beta(30.0, 3.0)),
    ],
    "StudentT": [
        (None, {"df": 2.5, "loc": -1.0, "scale": 0.5}, stats.t(2.5, -1.0, 0.5)),
        (None, {"df": 30.0, "loc": 0.0, "scale": 1.0}, stats.t(30.0)),
    ],
    "Levy": [(None, {"loc": 0.5, "scale": 2.0}, stats.levy(0.5, 2.0))],
    "Gompertz": [
        (None, {"concentration": 0.5, "rate": 2.0}, stats.gompertz(0.5, scale=0.5)),
    ],
    "Dagum": [
        (
            None,
            {"concentration": 0.7, "sharpness": 3.0, "scale": 2.0},
            stats.burr(3.0, 0.7, scale=2.0),
        )
    ],
    "LogUniform": [(None, {"low": 0.1, "high": 20.0}, stats.loguniform(0.1, 20.0))],
    "AsymmetricLaplace": [
        (
            None,
            {"loc": -1.0, "scale": 0.5, "asymmetry": 0.3},
            stats.laplace_asymmetric(0.3, -1.0, 0.5),
        )
    ],
    "Kumaraswamy": [(None, {"concentration1": 0.5, "concentration0": 3.0}, None)],
    "ContinuousBernoulli": [
        ("probs", {"probs": 0.8}, None),
        ("probs", {"probs": 0.1}, None),
    ],
    "SoftLaplace": [(None, {"loc": 0.0, "scale": 1.5}, None)],
    "AsymmetricLaplaceQuantile": [(None, {"loc": 1.0, "scale": 2.0, "quantile": 0.2}, None)],
}
#: Families whose oracle F is relatively exact only above this q (0.5 + arctan(z)/π, the
#: logistic's tanh, scipy's stdtr): the bisection is held there, the tails to scipy and mpmath.
LOSES_LOWER_TAIL = {"Cauchy": 1e-3, "Logistic": 1e-3, "StudentT": 1e-3}
#: Families with an atom (the hurdle at 0): there F(F⁻¹(q)) ≥ q, not = q.
ATOMS = {"HurdleGamma", "HurdleLogNormal"}
CASES = [(name, key, params, law) for name, rows in SCIPY.items() for key, params, law in rows]


def _arrays(params: dict[str, Any]) -> dict[str, np.ndarray]:
    return {k: np.array(v, dtype=np.float64) for k, v in params.items()}


def test_every_closed_form_is_tested() -> None:
    written = {n for n in reference.family_names() if reference.get_family(n)._overrides("_icdf")}
    assert written == set(SCIPY), sorted(written ^ set(SCIPY))


@pytest.mark.parametrize(("name", "key", "params", "law"), CASES, ids=[c[0] for c in CASES])
def test_icdf_against_scipy(name: str, key: str | None, params: dict, law: Any) -> None:
    if law is None:
        pytest.skip(f"scipy has no {name}: held to the bisection and the round trip below")
    q = Q[1:]  # scipy's t and burr ppf fail at 1e-300 (the oracle's is held to mpmath there)
    got = reference.get_family(name).icdf(_arrays(params), q, key)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = np.where(q > 0.5, law.isf(1.0 - q), law.ppf(q))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize(("name", "key", "params", "law"), CASES, ids=[c[0] for c in CASES])
def test_closed_form_is_the_bisection_of_the_cdf(
    name: str, key: str | None, params: dict, law: Any
) -> None:
    """On the lower half, where F is relatively exact, the closed form is the least float64
    x with F(x) ≥ q to a few ulps (the bisection inverts the oracle's own F, nothing else)."""
    family = reference.get_family(name)
    arrays = _arrays(params)
    lower = Q[(Q <= 0.5) & (LOSES_LOWER_TAIL.get(name, 0.0) <= Q)]
    got = family.icdf(arrays, lower, key)
    lo, hi = family.support_span(arrays, key or family.default_parametrization)
    lo, hi, q = np.broadcast_arrays(lo, hi, lower)

    def cdf(x: np.ndarray) -> np.ndarray:
        return family.cdf(arrays, x, key)

    want = invert_cdf(cdf, q, lo, hi)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


def _icdf_families() -> list[str]:
    return sorted(n for n in reference.family_names() if reference.get_family(n).has_icdf)


def _one_case(name: str) -> tuple[str | None, dict[str, np.ndarray]] | None:
    """The first written case of the family's built-in files with every parameter valid."""
    from conformance.cases.builtin import builtin_cases
    from conformance.cases.loader import load_case_file
    from conformance.expect.materialize import float64_inputs

    family = reference.get_family(name)
    for path in sorted(builtin_cases().glob("*.yaml")):
        for case in load_case_file(path).cases:
            if case.family != name:
                continue
            try:
                params, value = float64_inputs(case)
                valid = family.evaluate(params, value, case.parametrization).params_valid
            except (ValueError, ArithmeticError):
                continue
            if np.all(valid):
                return case.parametrization, params
    return None


@pytest.mark.parametrize("name", _icdf_families())
def test_round_trip(name: str) -> None:
    """F(F⁻¹(q)) = q within what F's rounding allows: 1e-12 relative to min(q, 1 − q) plus
    F's own absolute rounding near 1 and the density times x's last bits."""
    found = _one_case(name)
    if found is None:
        pytest.skip(f"no case of {name} with every parameter valid")
    key, params = found
    family = reference.get_family(name)
    batch = family.batch_shape(params, key)
    q = Q.reshape((-1,) + (1,) * len(batch))
    x = family.icdf(params, q, key)
    back = family.cdf(params, x, key)
    with np.errstate(all="ignore"):
        density = np.exp(family.log_prob(params, x, key))
        slack = np.where(np.isfinite(density * x), density * np.abs(x), 0.0) * 8e-16
    gap = np.maximum(q - back, 0.0) if name in ATOMS else np.abs(back - q)
    allowed = 1e-12 * np.minimum(q, 1.0 - q) + 4e-16 + slack
    # At a support end the float64 x itself is the nearest number to the quantile (a relaxed
    # Bernoulli's upper tail lies within 1e-16 of 1): F there is not held to q.
    lo, hi = family.support_span(family.params_broadcast_to(params, batch, key), key)
    bad = np.isfinite(x) & (x != lo) & (x != hi) & ~(gap <= allowed)
    assert not np.any(bad), (name, q[bad.any(axis=tuple(range(1, bad.ndim)))], gap[bad])


@pytest.mark.parametrize("name", _icdf_families())
def test_ends_and_outside(name: str) -> None:
    """q = 0 and 1 give the support's ends; q outside [0, 1] and NaN give NaN."""
    found = _one_case(name)
    if found is None:
        pytest.skip(f"no case of {name} with every parameter valid")
    key, params = found
    family = reference.get_family(name)
    batch = family.batch_shape(params, key)
    q = A([0.0, 1.0, -0.5, 1.5, np.nan]).reshape((-1,) + (1,) * len(batch))
    got = family.icdf(params, q, key)
    lo, hi = family.support_span(
        family.params_broadcast_to(params, batch, key), key or family.default_parametrization
    )
    np.testing.assert_array_equal(got[0], np.broadcast_to(lo, batch))
    np.testing.assert_array_equal(got[1], np.broadcast_to(hi, batch))
    assert np.all(np.isnan(got[2:]))


def test_invalid_parameter_gives_nan() -> None:
    got = reference.get_family("Normal").icdf({"loc": A(0.0), "scale": A([1.0, -1.0])}, A(0.3))
    assert np.isfinite(got[0]) and np.isnan(got[1])


def test_normal_far_tails_against_mpmath() -> None:
    """The far tails, where 2q − 1 (torch's form) rounds away: Φ⁻¹ at 50 digits."""
    mpmath.mp.dps = 50
    q = A([1e-300, 1e-40, 1e-10])
    got = reference.get_family("Normal").icdf({"loc": A(0.0), "scale": A(1.0)}, q)
    want = [
        float(mpmath.findroot(lambda z, p=p: mpmath.ncdf(z) - p, float(stats.norm.ppf(p))))
        for p in q
    ]
    np.testing.assert_allclose(got, want, rtol=1e-13)
    q_up = 1.0 - A(1e-15)
    upper = reference.get_family("Normal").icdf({"loc": A(0.0), "scale": A(1.0)}, q_up)
    want_up = float(-mpmath.findroot(lambda z: mpmath.ncdf(z) - (1 - mpmath.mpf(q_up)), -7.9))
    assert float(upper) == pytest.approx(want_up, rel=1e-13)


def test_far_lower_tails_against_mpmath() -> None:
    """Dagum at q = 1e-300, where scipy's burr.ppf gives 0: F at the answer is q."""
    mpmath.mp.dps = 50
    p, a, b = 0.7, 3.0, 2.0
    q = A([1e-300, 1e-200])
    params = {"concentration": A(p), "sharpness": A(a), "scale": A(b)}
    got = reference.get_family("Dagum").icdf(params, q)
    back = [float((1 + (mpmath.mpf(float(x)) / b) ** -a) ** -p) for x in got]
    np.testing.assert_allclose(back, q, rtol=1e-12)


def test_student_t_far_tail_against_mpmath() -> None:
    """stdtrit gives +inf at q = 1e-300 (scipy's t.ppf too): the beta form below 0.05."""
    mpmath.mp.dps = 50
    df = 2.5
    q = A([1e-300, 1e-100, 1e-20, 0.01])
    got = reference.get_family("StudentT").icdf({"df": A(df), "loc": A(0.0), "scale": A(1.0)}, q)

    def cdf(t: Any) -> Any:
        x = df / (df + t * t)
        return mpmath.betainc(df / 2, 0.5, 0, x, regularized=True) / 2

    # F at the answer, at 50 digits: the relative condition of F in the tail is df, so an
    # answer right to 1e-13 gives back q to about 3e-13.
    back = np.array([float(cdf(mpmath.mpf(float(t)))) for t in got])
    np.testing.assert_allclose(back, q, rtol=1e-12)
