"""The univariate continuous families' summaries (mean, variance, stddev, mode, entropy) held to
independent computations: scipy.stats' frozen distributions where scipy has the family,
mpmath at 50 digits where the float64 forms cancel (large and small parameters), quadrature of
the oracle's own log density for every family at one ordinary point, and the mode to the log
density around it. The undefined and infinite regions are spelled out case by case."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import mpmath
import numpy as np
import pytest
from scipy import integrate, stats

from conformance import reference
from conformance.reference import domains
from conformance.summaries import Summary

A = np.array
MOMENTS = (Summary.MEAN, Summary.VARIANCE, Summary.STDDEV, Summary.ENTROPY)


def _family(name: str) -> reference.Family:
    return reference.get_family(name)


def _rel(got: Any, want: Any) -> float:
    got, want = float(got), float(want)
    return abs(got - want) / abs(want) if want else abs(got)


# ----- scipy ---------------------------------------------------------------------------------
def _asymmetry(q: np.ndarray) -> np.ndarray:
    return np.sqrt(q / (1.0 - q))


def _truncnorm(p: dict[str, np.ndarray]) -> Any:
    lo = (p["low"] - p["loc"]) / p["scale"] if "low" in p else -np.inf
    hi = (p["high"] - p["loc"]) / p["scale"] if "high" in p else np.inf
    return stats.truncnorm(lo, hi, p["loc"], p["scale"])


Frozen = Callable[[dict[str, np.ndarray]], Any]
#: family → [(parametrization or None, parameters, scipy's frozen law at them)]: ordinary,
#: large and small parameters where scipy's own summaries hold 1e-12 (its Beta entropy at
#: large concentrations and its Levy entropy do not: those are held to mpmath and quadrature).
SCIPY: dict[str, list[tuple[str | None, dict[str, np.ndarray], Frozen]]] = {
    "AsymmetricLaplace": [
        (
            None,
            {"loc": A([-1.0, 0.0, 2.0]), "scale": A([0.5, 1.0, 3.0]), "asymmetry": A([0.3, 1, 4])},
            lambda p: stats.laplace_asymmetric(p["asymmetry"], p["loc"], p["scale"]),
        )
    ],
    "AsymmetricLaplaceQuantile": [
        (
            None,
            {
                "loc": A([-1.0, 0.0, 2.0]),
                "scale": A([0.5, 1.0, 3.0]),
                "quantile": A([0.1, 0.5, 0.93]),
            },
            lambda p: stats.laplace_asymmetric(
                _asymmetry(p["quantile"]),
                p["loc"],
                p["scale"] / np.sqrt(p["quantile"] * (1.0 - p["quantile"])),
            ),
        )
    ],
    "Beta": [
        (
            "concentrations",
            {
                "concentration1": A([0.5, 2.0, 1e-3, 30.0]),
                "concentration0": A([0.7, 5.0, 4.0, 0.2]),
            },
            lambda p: stats.beta(p["concentration1"], p["concentration0"]),
        ),
        (
            "mean_concentration",
            {"mean": A([0.2, 0.5, 0.9]), "concentration": A([0.5, 10.0, 40.0])},
            lambda p: stats.beta(
                p["mean"] * p["concentration"], (1.0 - p["mean"]) * p["concentration"]
            ),
        ),
    ],
    "Cauchy": [
        (
            None,
            {"loc": A([-1.0, 0.0, 5.0]), "scale": A([0.1, 1.0, 30.0])},
            lambda p: stats.cauchy(p["loc"], p["scale"]),
        )
    ],
    "Chi2": [(None, {"df": A([0.5, 3.0, 1e4])}, lambda p: stats.chi2(p["df"]))],
    "Dagum": [
        (
            None,
            {
                "concentration": A([0.5, 2.0, 10.0]),
                "sharpness": A([2.5, 5.0, 50.0]),
                "scale": A([1.0, 3.0, 0.1]),
            },
            lambda p: stats.burr(c=p["sharpness"], d=p["concentration"], scale=p["scale"]),
        )
    ],
    "Exponential": [
        (None, {"rate": A([1e-3, 1.0, 50.0])}, lambda p: stats.expon(scale=1 / p["rate"]))
    ],
    "FisherSnedecor": [
        (
            None,
            {"df1": A([1.0, 3.0, 100.0]), "df2": A([5.0, 10.0, 1e4])},
            lambda p: stats.f(p["df1"], p["df2"]),
        )
    ],
    "FoldedDistribution": [
        (
            None,
            {"loc": A([-1.0, 0.0, 3.0, 12.0]), "scale": A([1.0, 2.0, 0.5, 1.0])},
            lambda p: stats.foldnorm(np.abs(p["loc"]) / p["scale"], scale=p["scale"]),
        )
    ],
    "Gamma": [
        (
            None,
            {"concentration": A([0.1, 2.5, 1e5]), "rate": A([2.0, 0.5, 10.0])},
            lambda p: stats.gamma(p["concentration"], scale=1 / p["rate"]),
        )
    ],
    "GeneralizedPareto": [
        (
            None,
            {
                "loc": A([0.0, 1.0, -2.0, 0.0]),
                "scale": A([1.0, 2.0, 0.5, 1.0]),
                "concentration": A([-0.5, 0.0, 0.3, -2.0]),
            },
            lambda p: stats.genpareto(p["concentration"], p["loc"], p["scale"]),
        )
    ],
    "Gumbel": [
        (
            None,
            {"loc": A([-1.0, 0.0, 5.0]), "scale": A([0.1, 1.0, 30.0])},
            lambda p: stats.gumbel_r(p["loc"], p["scale"]),
        )
    ],
    "HalfCauchy": [
        (None, {"scale": A([0.1, 1.0, 30.0])}, lambda p: stats.halfcauchy(scale=p["scale"]))
    ],
    "HalfNormal": [
        (None, {"scale": A([0.1, 1.0, 30.0])}, lambda p: stats.halfnorm(scale=p["scale"]))
    ],
    "InverseGamma": [
        (
            None,
            {"concentration": A([2.5, 10.0, 1e4]), "rate": A([1.0, 0.3, 5.0])},
            lambda p: stats.invgamma(p["concentration"], scale=p["rate"]),
        )
    ],
    "Laplace": [
        (
            None,
            {"loc": A([-1.0, 0.0, 5.0]), "scale": A([0.1, 1.0, 30.0])},
            lambda p: stats.laplace(p["loc"], p["scale"]),
        )
    ],
    "LogNormal": [
        (
            None,
            {"loc": A([-1.0, 0.0, 5.0]), "scale": A([0.1, 1.0, 3.0])},
            lambda p: stats.lognorm(p["scale"], scale=np.exp(p["loc"])),
        )
    ],
    "LogUniform": [
        (
            None,
            {"low": A([1e-3, 1.0, 2.0]), "high": A([1.0, 1.5, 1e4])},
            lambda p: stats.loguniform(p["low"], p["high"]),
        )
    ],
    "Logistic": [
        (
            None,
            {"loc": A([-1.0, 0.0, 5.0]), "scale": A([0.1, 1.0, 30.0])},
            lambda p: stats.logistic(p["loc"], p["scale"]),
        )
    ],
    "Pareto": [
        (
            None,
            {"scale": A([0.5, 1.0, 3.0]), "alpha": A([2.5, 5.0, 100.0])},
            lambda p: stats.pareto(p["alpha"], scale=p["scale"]),
        )
    ],
    "SoftLaplace": [
        (
            None,
            {"loc": A([-1.0, 0.0, 5.0]), "scale": A([0.1, 1.0, 30.0])},
            lambda p: stats.hypsecant(p["loc"], p["scale"]),
        )
    ],
    "StudentT": [
        (
            None,
            {"df": A([2.5, 10.0, 1e6]), "loc": A([-1.0, 0.0, 5.0]), "scale": A([0.1, 1.0, 30.0])},
            lambda p: stats.t(p["df"], p["loc"], p["scale"]),
        )
    ],
    "TruncatedNormal": [
        (
            "two_sided",
            {
                "loc": A([0.0, 1.0, -2.0]),
                "scale": A([1.0, 2.0, 0.5]),
                "low": A([-1.0, 3.0, -2.1]),
                "high": A([2.0, 10.0, -1.9]),
            },
            _truncnorm,
        ),
        (
            "left_truncated",
            {"loc": A([0.0, 1.0, -2.0]), "scale": A([1.0, 2.0, 0.5]), "low": A([-1.0, 3.0, 0.0])},
            _truncnorm,
        ),
        (
            "right_truncated",
            {"loc": A([0.0, 1.0, -2.0]), "scale": A([1.0, 2.0, 0.5]), "high": A([-1.0, 3.0, 0.0])},
            _truncnorm,
        ),
    ],
    "Uniform": [
        (
            None,
            {"low": A([-1.0, 0.0, 5.0]), "high": A([1.0, 1e-3, 50.0])},
            lambda p: stats.uniform(p["low"], p["high"] - p["low"]),
        )
    ],
    "Weibull": [
        (
            None,
            {"scale": A([1.0, 2.0, 0.5]), "concentration": A([0.5, 2.0, 50.0])},
            lambda p: stats.weibull_min(p["concentration"], scale=p["scale"]),
        )
    ],
}
SCIPY_CASES = [(name, i) for name, rows in SCIPY.items() for i in range(len(rows))]


@pytest.mark.parametrize(("family", "case"), SCIPY_CASES, ids=[f"{f}-{i}" for f, i in SCIPY_CASES])
def test_summaries_match_scipy(family: str, case: int) -> None:
    parametrization, params, frozen = SCIPY[family][case]
    oracle = _family(family)
    law = frozen(params)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        expected = {
            Summary.MEAN: law.mean(),
            Summary.VARIANCE: law.var(),
            Summary.STDDEV: law.std(),
            Summary.ENTROPY: law.entropy(),
        }
    checked = 0
    for summary, want in expected.items():
        if oracle.has_summary(summary):
            got = oracle.summary(summary, params, parametrization)
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300, err_msg=str(summary))
            checked += 1
    assert checked


# ----- the undefined and infinite regions ----------------------------------------------------
NAN, INF = np.nan, np.inf
#: (family, parametrization, parameters, summary, expected): where a summary is undefined (NaN)
#: or infinite, and its finite neighbours across the boundary.
EDGES: list[tuple[str, str | None, dict[str, np.ndarray], str, np.ndarray]] = [
    (
        "StudentT",
        None,
        {"df": A([0.5, 1.0, 1.5, 2.0, 4.0]), "loc": A(3.0), "scale": A(2.0)},
        "mean",
        A([NAN, NAN, 3.0, 3.0, 3.0]),
    ),
    (
        "StudentT",
        None,
        {"df": A([0.5, 1.0, 1.5, 2.0, 4.0]), "loc": A(3.0), "scale": A(2.0)},
        "variance",
        A([NAN, NAN, INF, INF, 8.0]),
    ),
    (
        "StudentT",
        None,
        {"df": A([0.5, 1.0, 1.5]), "loc": A(3.0), "scale": A(2.0)},
        "mode",
        A([3.0, 3.0, 3.0]),
    ),
    ("Cauchy", None, {"loc": A([0.0, 2.0]), "scale": A(1.0)}, "mean", A([NAN, NAN])),
    ("Cauchy", None, {"loc": A([0.0, 2.0]), "scale": A(1.0)}, "variance", A([NAN, NAN])),
    ("Cauchy", None, {"loc": A([0.0, 2.0]), "scale": A(1.0)}, "stddev", A([NAN, NAN])),
    ("HalfCauchy", None, {"scale": A([0.5, 2.0])}, "mean", A([INF, INF])),
    ("HalfCauchy", None, {"scale": A([0.5, 2.0])}, "variance", A([INF, INF])),
    ("Levy", None, {"loc": A([0.0, 2.0]), "scale": A(1.0)}, "mean", A([INF, INF])),
    ("Levy", None, {"loc": A([0.0, 2.0]), "scale": A(1.0)}, "variance", A([INF, INF])),
    (
        "Pareto",
        None,
        {"scale": A(2.0), "alpha": A([0.5, 1.0, 1.5, 2.0, 3.0])},
        "mean",
        A([INF, INF, 6.0, 4.0, 3.0]),
    ),
    (
        "Pareto",
        None,
        {"scale": A(2.0), "alpha": A([0.5, 1.0, 1.5, 2.0, 3.0])},
        "variance",
        A([INF, INF, INF, INF, 3.0]),
    ),
    (
        "InverseGamma",
        None,
        {"concentration": A([0.5, 1.0, 1.5, 2.0, 3.0]), "rate": A(2.0)},
        "mean",
        A([INF, INF, 4.0, 2.0, 1.0]),
    ),
    (
        "InverseGamma",
        None,
        {"concentration": A([0.5, 1.0, 1.5, 2.0, 3.0]), "rate": A(2.0)},
        "variance",
        A([INF, INF, INF, INF, 1.0]),
    ),
    (
        "FisherSnedecor",
        None,
        {"df1": A(3.0), "df2": A([1.0, 2.0, 3.0, 4.0, 6.0])},
        "mean",
        A([INF, INF, 3.0, 2.0, 1.5]),
    ),
    (
        "FisherSnedecor",
        None,
        {"df1": A(3.0), "df2": A([1.0, 2.0, 3.0, 4.0, 6.0])},
        "variance",
        A([INF, INF, INF, INF, 2 * 36 * 7 / (3 * 16 * 2)]),
    ),
    (
        "FisherSnedecor",
        None,
        {"df1": A([0.5, 1.0, 2.0, 4.0]), "df2": A(6.0)},
        "mode",
        A([0.0, 0.0, 0.0, 0.5 * 0.75]),
    ),
    (
        "GeneralizedPareto",
        None,
        {"loc": A(1.0), "scale": A(2.0), "concentration": A([0.5, 0.9, 1.0, 1.5])},
        "mean",
        A([5.0, 21.0, INF, INF]),
    ),
    (
        "GeneralizedPareto",
        None,
        {"loc": A(1.0), "scale": A(2.0), "concentration": A([0.25, 0.5, 0.7, 1.5])},
        "variance",
        A([4 / (0.5625 * 0.5), INF, INF, INF]),
    ),
    (
        "GeneralizedPareto",
        None,
        {"loc": A(1.0), "scale": A(2.0), "concentration": A([-2.0, -1.0, -0.5, 0.0, 2.0])},
        "mode",
        A([2.0, NAN, 1.0, 1.0, 1.0]),
    ),
    (
        "Dagum",
        None,
        {"concentration": A(2.0), "sharpness": A([0.5, 1.0, 1.5]), "scale": A(1.0)},
        "mean",
        A([INF, INF, float(stats.burr(c=1.5, d=2.0).mean())]),
    ),
    (
        "Dagum",
        None,
        {"concentration": A(2.0), "sharpness": A([0.5, 1.0, 1.5, 2.0]), "scale": A(1.0)},
        "variance",
        A([INF, INF, INF, INF]),
    ),
    (
        "Beta",
        "concentrations",
        {
            "concentration1": A([0.5, 1.0, 1.0, 0.5, 2.0, 0.5, 1.0, 3.0, 3.0]),
            "concentration0": A([0.5, 1.0, 0.5, 1.0, 0.5, 3.0, 3.0, 1.0, 2.0]),
        },
        "mode",
        A([NAN, NAN, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 2.0 / 3.0]),
    ),
    (
        "Kumaraswamy",
        None,
        {
            "concentration1": A([0.5, 1.0, 1.0, 0.5, 2.0, 0.5, 1.0, 3.0]),
            "concentration0": A([0.5, 1.0, 0.5, 1.0, 0.5, 3.0, 3.0, 1.0]),
        },
        "mode",
        A([NAN, NAN, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0]),
    ),
    (
        "Gamma",
        None,
        {"concentration": A([0.3, 1.0, 3.0]), "rate": A(2.0)},
        "mode",
        A([0.0, 0.0, 1.0]),
    ),
    ("Chi2", None, {"df": A([0.5, 2.0, 5.0])}, "mode", A([0.0, 0.0, 3.0])),
    (
        "Weibull",
        None,
        {"scale": A(2.0), "concentration": A([0.3, 0.5, 1.0, 2.0])},
        "mode",
        A([0.0, 0.0, 0.0, np.sqrt(2.0)]),
    ),
    ("Uniform", None, {"low": A([0.0, -3.0]), "high": A([1.0, 5.0])}, "mode", A([NAN, NAN])),
    ("Exponential", None, {"rate": A([0.5, 3.0])}, "mode", A([0.0, 0.0])),
    ("HalfNormal", None, {"scale": A([0.5, 3.0])}, "mode", A([0.0, 0.0])),
    ("HalfCauchy", None, {"scale": A([0.5, 3.0])}, "mode", A([0.0, 0.0])),
    ("Pareto", None, {"scale": A([0.5, 3.0]), "alpha": A(0.5)}, "mode", A([0.5, 3.0])),
    (
        "HurdleGamma",
        "gate",
        {"gate": A([0.0, 1.0]), "concentration": A(2.0), "rate": A(4.0)},
        "mean",
        A([0.5, 0.0]),
    ),
    (
        "HurdleGamma",
        "gate",
        {"gate": A([0.0, 1.0]), "concentration": A(2.0), "rate": A(4.0)},
        "variance",
        A([0.125, 0.0]),
    ),
]


@pytest.mark.parametrize(
    ("family", "parametrization", "params", "summary", "expected"),
    EDGES,
    ids=[f"{e[0]}-{e[3]}-{i}" for i, e in enumerate(EDGES)],
)
def test_undefined_and_infinite_regions(
    family: str,
    parametrization: str | None,
    params: dict[str, np.ndarray],
    summary: str,
    expected: np.ndarray,
) -> None:
    got = _family(family).summary(summary, params, parametrization)
    np.testing.assert_allclose(got, expected, rtol=1e-14, atol=0)


def test_von_mises_directions_follow_the_declared_support() -> None:
    """The circular mean and mode are loc on the real line (torch), loc wrapped into [−π, π)
    under the circular support (NumPyro)."""
    vm = _family("VonMises")
    params = {"loc": A([0.5, 4.0, -3.5, np.pi]), "concentration": A(2.0)}
    wrapped = A([0.5, 4.0 - 2 * np.pi, -3.5 + 2 * np.pi, -np.pi])
    for summary in ("mean", "mode"):
        np.testing.assert_array_equal(vm.summary(summary, params), params["loc"])
        got = vm.summary(summary, params, options={"support": "circular"})
        np.testing.assert_allclose(got, wrapped, rtol=0, atol=1e-15)


# ----- mpmath at 50 digits: where the float64 forms would cancel ----------------------------
mp = mpmath.mp


def _mp_gamma_entropy(a: Any) -> Any:
    return a + mpmath.loggamma(a) + (1 - a) * mpmath.digamma(a)


def _mp_beta_entropy(a: Any, b: Any) -> Any:
    c = a + b
    return (
        mpmath.log(mpmath.beta(a, b))
        - (a - 1) * mpmath.digamma(a)
        - (b - 1) * mpmath.digamma(b)
        + (c - 2) * mpmath.digamma(c)
    )


def _mp_kumaraswamy_moment(a: Any, b: Any, n: int) -> Any:
    return b * mpmath.beta(1 + mpmath.mpf(n) / a, b)


def _mp_weibull_moment(k: Any, n: int) -> Any:
    return mpmath.gamma(1 + mpmath.mpf(n) / k)


def _mp_dagum_moment(p: Any, a: Any, n: int) -> Any:
    return (
        mpmath.gamma(p + mpmath.mpf(n) / a) * mpmath.gamma(1 - mpmath.mpf(n) / a) / mpmath.gamma(p)
    )


def _mp_variance(moment: Callable[[int], Any]) -> Any:
    m1 = moment(1)
    return moment(2) - m1 * m1


def _mp_truncnorm(a: Any, b: Any) -> tuple[Any, Any]:
    """E[z] and Var[z] of the standard normal on [a, b] (mirrored to the left tail for a > 0,
    where ncdf(b) − ncdf(a) would be a difference of two numbers within e^{−a²/2} of 1)."""
    if a > 0:
        mean, variance = _mp_truncnorm(-b, -a)
        return -mean, variance
    z = mpmath.ncdf(b) - mpmath.ncdf(a)
    pa = mpmath.npdf(a) if mpmath.isfinite(a) else 0
    pb = mpmath.npdf(b) if mpmath.isfinite(b) else 0
    apa = a * pa if mpmath.isfinite(a) else 0
    bpb = b * pb if mpmath.isfinite(b) else 0
    mean = (pa - pb) / z
    return mean, 1 + (apa - bpb) / z - mean * mean


def _mpf(x: float) -> Any:
    return mpmath.mpf(x) if np.isfinite(x) else (mpmath.inf if x > 0 else -mpmath.inf)


#: (family, parametrization, scalar parameters, summary, the mpmath value as a function of
#: the parameters as mpf, digits the mpmath evaluation needs, relative tolerance).
MPMATH: list[tuple[str, str | None, dict[str, float], str, Callable[..., Any], int, float]] = []


def _mp_case(
    family: str,
    parametrization: str | None,
    params: dict[str, float],
    summary: str,
    value: Callable[[dict[str, Any]], Any],
    dps: int = 50,
    rtol: float = 1e-13,
) -> None:
    MPMATH.append((family, parametrization, params, summary, value, dps, rtol))


def _cb_quad(p: dict[str, Any], f: Callable[[Any, Any], Any]) -> Any:
    """∫ f(x, density) over [0, 1] for ContinuousBernoulli's density l·e^{lx}/expm1(l)."""

    def density(x: Any) -> Any:
        return p["logits"] * mpmath.exp(p["logits"] * x) / mpmath.expm1(p["logits"])

    return mpmath.quad(lambda x: f(x, density(x)), [0, 0.5, 1])


def _one_minus_gate(p: dict[str, Any]) -> Any:
    return 1 - p["gate"] if "gate" in p else 1 / (1 + mpmath.exp(p["gate_logits"]))


for _a, _b in [(1e3, 2e3), (1e6, 1e6), (1e-3, 1e6), (1e12, 3.0), (8.5, 9.5), (1e-8, 1e-8)]:
    _mp_case(
        "Beta",
        "concentrations",
        {"concentration1": _a, "concentration0": _b},
        "entropy",
        lambda p: _mp_beta_entropy(p["concentration1"], p["concentration0"]),
        rtol=1e-14 if _a < 10 else 1e-15,
    )
_mp_case(
    "Beta",
    "mean_concentration",
    {"mean": 0.9, "concentration": 1e4},
    "entropy",
    lambda p: _mp_beta_entropy(
        p["mean"] * p["concentration"], (1 - p["mean"]) * p["concentration"]
    ),
)
for _a in [1e-8, 0.3, 12.0, 1e6, 1e12]:
    _mp_case(
        "Gamma",
        None,
        {"concentration": _a, "rate": 3.0},
        "entropy",
        lambda p: _mp_gamma_entropy(p["concentration"]) - mpmath.log(p["rate"]),
    )
    _mp_case(
        "InverseGamma",
        None,
        {"concentration": _a, "rate": 3.0},
        "entropy",
        lambda p: (
            p["concentration"]
            + mpmath.log(p["rate"])
            + mpmath.loggamma(p["concentration"])
            - (1 + p["concentration"]) * mpmath.digamma(p["concentration"])
        ),
    )
    _mp_case(
        "Chi2",
        None,
        {"df": 2 * _a},
        "entropy",
        lambda p: _mp_gamma_entropy(p["df"] / 2) + mpmath.log(2),
    )
for _df in [0.3, 3.0, 1e6, 1e12]:
    _mp_case(
        "StudentT",
        None,
        {"df": _df, "loc": 0.0, "scale": 2.0},
        "entropy",
        lambda p: (
            (p["df"] + 1) / 2 * (mpmath.digamma((p["df"] + 1) / 2) - mpmath.digamma(p["df"] / 2))
            + mpmath.log(p["df"]) / 2
            + mpmath.log(mpmath.beta(p["df"] / 2, mpmath.mpf(0.5)))
            + mpmath.log(p["scale"])
        ),
    )
for _a, _b in [
    (2.0, 3.0),
    (0.5, 0.5),
    (1e3, 2.0),
    (1e6, 1e6),
    (3.0, 1e-3),
    (1e3, 1e-6),
    (10.0, 1e5),
    (0.01, 5.0),
    (4.5, 0.2),
]:
    _kp = {"concentration1": _a, "concentration0": _b}
    _mp_case(
        "Kumaraswamy",
        None,
        _kp,
        "mean",
        lambda p: _mp_kumaraswamy_moment(p["concentration1"], p["concentration0"], 1),
    )
    _mp_case(
        "Kumaraswamy",
        None,
        _kp,
        "variance",
        lambda p: _mp_variance(
            lambda n, p=p: _mp_kumaraswamy_moment(p["concentration1"], p["concentration0"], n)
        ),
        rtol=1e-14 if _a >= 0.1 else 1e-13,
    )
    _mp_case(
        "Kumaraswamy",
        None,
        _kp,
        "entropy",
        lambda p: (
            (1 - 1 / p["concentration0"])
            + (1 - 1 / p["concentration1"])
            * (mpmath.digamma(p["concentration0"] + 1) + mpmath.euler)
            - mpmath.log(p["concentration1"] * p["concentration0"])
        ),
    )
for _k in [0.3, 4.1, 1e3, 1e8]:
    _mp_case(
        "Weibull",
        None,
        {"scale": 2.0, "concentration": _k},
        "variance",
        lambda p: (
            p["scale"] ** 2 * _mp_variance(lambda n, p=p: _mp_weibull_moment(p["concentration"], n))
        ),
    )
for _p, _a in [(1e6, 3.0), (1e-3, 1e3), (1e6, 1e6), (0.3, 10.0)]:
    _dp = {"concentration": _p, "sharpness": _a, "scale": 2.0}
    _mp_case(
        "Dagum",
        None,
        _dp,
        "mean",
        lambda p: p["scale"] * _mp_dagum_moment(p["concentration"], p["sharpness"], 1),
    )
    _mp_case(
        "Dagum",
        None,
        _dp,
        "variance",
        lambda p: (
            p["scale"] ** 2
            * _mp_variance(lambda n, p=p: _mp_dagum_moment(p["concentration"], p["sharpness"], n))
        ),
    )
for _c in [1e-10, 0.5, 10.0, 700.0, 1e8]:
    _mp_case(
        "Gompertz",
        None,
        {"concentration": _c, "rate": 2.0},
        "mean",
        lambda p: mpmath.exp(p["concentration"]) * mpmath.e1(p["concentration"]) / p["rate"],
        rtol=1e-14,
    )
for _lo, _hi in [(1.0, 1.0 + 1e-12), (1.0, 1.001), (2.0, 2.0 * np.exp(2.00001)), (0.5, 100.0)]:
    _mp_case(
        "LogUniform",
        None,
        {"low": _lo, "high": _hi},
        "variance",
        lambda p: (
            (p["high"] ** 2 - p["low"] ** 2) / (2 * mpmath.log(p["high"] / p["low"]))
            - ((p["high"] - p["low"]) / mpmath.log(p["high"] / p["low"])) ** 2
        ),
        dps=80,
        rtol=1e-14,
    )
for _l in [1e-9, 0.1, 1.999, 2.0, 10.0, -1.5, 800.0]:
    _cb = {"logits": _l}
    if abs(_l) < 100:
        _mp_case(
            "ContinuousBernoulli",
            "logits",
            _cb,
            "mean",
            lambda p: _cb_quad(p, lambda x, d: x * d),
            rtol=1e-14,
        )
        _mp_case(
            "ContinuousBernoulli",
            "logits",
            _cb,
            "entropy",
            lambda p: -_cb_quad(p, lambda x, d: d * mpmath.log(d)),
            rtol=1e-13,
        )
    _mp_case(
        "ContinuousBernoulli",
        "logits",
        _cb,
        "variance",
        lambda p: 1 / p["logits"] ** 2 - 1 / (4 * mpmath.sinh(p["logits"] / 2) ** 2),
        rtol=1e-14,
    )
for _pr in [1e-9, 0.3, 0.5 + 1e-12, 1 - 1e-9]:
    _mp_case(
        "ContinuousBernoulli",
        "probs",
        {"probs": _pr},
        "mean",
        lambda p: (
            1 / (1 - (1 - p["probs"]) / p["probs"]) - 1 / mpmath.log(p["probs"] / (1 - p["probs"]))
        ),
        rtol=1e-14,
    )
for _mu in [3.0, 12.0, 40.0]:
    _mp_case(
        "FoldedDistribution",
        None,
        {"loc": _mu, "scale": 1.0},
        "variance",
        lambda p: (
            p["loc"] ** 2
            + p["scale"] ** 2
            - (
                p["scale"]
                * mpmath.sqrt(2 / mpmath.pi)
                * mpmath.exp(-((p["loc"] / p["scale"]) ** 2) / 2)
                + p["loc"] * mpmath.erf(p["loc"] / p["scale"] / mpmath.sqrt(2))
            )
            ** 2
        ),
        dps=60,
        rtol=1e-14,
    )
for _key, _lo, _hi in [
    ("two_sided", -0.05, 0.06),
    ("two_sided", 10.0, 10.001),
    ("two_sided", -20.0, -19.5),
    ("two_sided", -1e-9, 1.1e-9),
    ("two_sided", 1000.0, 1001.0),
    ("left_truncated", 1000.0, np.inf),
    ("right_truncated", -np.inf, -50.0),
    ("two_sided", -7.0, 30.0),
]:
    _tn = (
        {"loc": 0.0, "scale": 1.0}
        | ({"low": _lo} if np.isfinite(_lo) else {})
        | ({"high": _hi} if np.isfinite(_hi) else {})
    )
    for _i, _s in enumerate(("mean", "variance")):
        _mp_case(
            "TruncatedNormal",
            _key,
            _tn,
            _s,
            lambda p, i=_i: (
                p["loc"]
                + _mp_truncnorm(
                    _mpf(float(p.get("low", -np.inf))), _mpf(float(p.get("high", np.inf)))
                )[i]
            ),
            dps=60,
            rtol=1e-14,
        )
for _kappa in [1e-3, 2.0, 29.0, 31.0, 1e4]:
    _mp_case(
        "VonMises",
        None,
        {"loc": 0.5, "concentration": _kappa},
        "variance",
        lambda p: 1 - mpmath.besseli(1, p["concentration"]) / mpmath.besseli(0, p["concentration"]),
        rtol=1e-14,
    )
for _g, _a, _rate in [(0.3, 2.5, 1.5), (0.999, 1e6, 1e3), (1e-9, 0.01, 2.0)]:
    _hg = {"gate": _g, "concentration": _a, "rate": _rate}
    _mp_case(
        "HurdleGamma",
        "gate",
        _hg,
        "mean",
        lambda p: (1 - p["gate"]) * p["concentration"] / p["rate"],
        rtol=1e-15,
    )
    _mp_case(
        "HurdleGamma",
        "gate",
        _hg,
        "variance",
        lambda p: (
            (1 - p["gate"]) * p["concentration"] * (p["concentration"] + 1) / p["rate"] ** 2
            - ((1 - p["gate"]) * p["concentration"] / p["rate"]) ** 2
        ),
        rtol=1e-15,
    )
for _key, _gp in [
    ("gate", {"gate": 0.3}),
    ("generic_gate_logits", {"gate_logits": -2.0}),
    ("gate", {"gate": 1e-12}),
]:
    for _sigma in [0.01, 0.8, 3.0]:
        _hl = _gp | {"loc": 0.3, "scale": _sigma}
        _mp_case(
            "HurdleLogNormal",
            _key,
            _hl,
            "mean",
            lambda p: _one_minus_gate(p) * mpmath.exp(p["loc"] + p["scale"] ** 2 / 2),
            rtol=1e-14,
        )
        _mp_case(
            "HurdleLogNormal",
            _key,
            _hl,
            "variance",
            lambda p: (
                _one_minus_gate(p) * mpmath.exp(2 * p["loc"] + 2 * p["scale"] ** 2)
                - (_one_minus_gate(p) * mpmath.exp(p["loc"] + p["scale"] ** 2 / 2)) ** 2
            ),
            rtol=1e-14,
        )
for _key, _tg in [
    ("two_sided", {"low": 0.5, "high": 3.0}),
    ("left_truncated", {"low": 100.0}),
    ("right_truncated", {"high": 3.0}),
    ("two_sided", {"low": 3.0, "high": 3.0001}),
    ("two_sided", {"low": 100.0, "high": 101.0}),
]:
    _mp_case(
        "TruncatedGamma",
        _key,
        {"concentration": 2.5, "rate": 1.5} | _tg,
        "mean",
        lambda p: (
            mpmath.gammainc(
                p["concentration"] + 1,
                p["rate"] * p.get("low", 0),
                p["rate"] * p.get("high", mpmath.inf),
            )
            / mpmath.gammainc(
                p["concentration"],
                p["rate"] * p.get("low", 0),
                p["rate"] * p.get("high", mpmath.inf),
            )
            / p["rate"]
        ),
        rtol=1e-14,
    )


@pytest.mark.parametrize(
    ("family", "parametrization", "params", "summary", "value", "dps", "rtol"),
    MPMATH,
    ids=[f"{c[0]}-{c[3]}-{i}" for i, c in enumerate(MPMATH)],
)
def test_summaries_match_mpmath(
    family: str,
    parametrization: str | None,
    params: dict[str, float],
    summary: str,
    value: Callable[[dict[str, Any]], Any],
    dps: int,
    rtol: float,
) -> None:
    with mpmath.workdps(dps):
        want = value({k: mpmath.mpf(v) for k, v in params.items()})
        want = float(want)
    got = _family(family).summary(summary, {k: A(v) for k, v in params.items()}, parametrization)
    assert _rel(got, want) <= rtol, (float(got), want, _rel(got, want))


# ----- the mode: the log density is no higher around it ---------------------------------------
#: family → (parametrization, parameters, grid half-width in the value's units per element):
#: interior modes and boundary ones (where the density rises to the support's end).
MODE_POINTS: dict[str, tuple[str | None, dict[str, np.ndarray], np.ndarray]] = {
    "Beta": (
        "concentrations",
        {
            "concentration1": A([2.5, 30.0, 0.5, 3.0, 1.0]),
            "concentration0": A([4.0, 1.5, 3.0, 0.5, 2.0]),
        },
        A([0.5, 0.5, 0.5, 0.5, 0.5]),
    ),
    "Cauchy": (None, {"loc": A([-1.0, 3.0]), "scale": A([0.5, 2.0])}, A([3.0, 10.0])),
    "Chi2": (None, {"df": A([5.0, 1e3, 1.0])}, A([5.0, 200.0, 5.0])),
    "Exponential": (None, {"rate": A([0.5, 4.0])}, A([5.0, 1.0])),
    "FisherSnedecor": (
        None,
        {"df1": A([5.0, 40.0, 1.5]), "df2": A([7.0, 3.0, 9.0])},
        A([2.0, 2.0, 2.0]),
    ),
    "Gamma": (
        None,
        {"concentration": A([2.5, 1e4, 0.5]), "rate": A([1.5, 3.0, 2.0])},
        A([3.0, 200.0, 3.0]),
    ),
    "GeneralizedPareto": (
        None,
        {
            "loc": A([1.0, 0.0, 0.0]),
            "scale": A([2.0, 1.0, 1.0]),
            "concentration": A([0.3, -0.5, -3.0]),
        },
        A([5.0, 2.0, 1.0]),
    ),
    "Gumbel": (None, {"loc": A([-1.0, 3.0]), "scale": A([0.5, 2.0])}, A([3.0, 10.0])),
    "HalfCauchy": (None, {"scale": A([0.5, 2.0])}, A([3.0, 10.0])),
    "HalfNormal": (None, {"scale": A([0.5, 2.0])}, A([3.0, 10.0])),
    "InverseGamma": (
        None,
        {"concentration": A([2.5, 0.5, 1e4]), "rate": A([1.5, 2.0, 3.0])},
        A([3.0, 5.0, 1e-3]),
    ),
    "Kumaraswamy": (
        None,
        {
            "concentration1": A([2.5, 30.0, 0.5, 3.0, 1.0, 1e3]),
            "concentration0": A([4.0, 1.5, 3.0, 0.5, 2.0, 50.0]),
        },
        A([0.5, 0.5, 0.5, 0.5, 0.5, 0.05]),
    ),
    "Laplace": (None, {"loc": A([-1.0, 3.0]), "scale": A([0.5, 2.0])}, A([3.0, 10.0])),
    "LogNormal": (None, {"loc": A([-1.0, 3.0]), "scale": A([0.5, 0.2])}, A([1.0, 10.0])),
    "Normal": (None, {"loc": A([-1.0, 3.0]), "scale": A([0.5, 2.0])}, A([3.0, 10.0])),
    "Pareto": (None, {"scale": A([0.5, 3.0]), "alpha": A([2.5, 0.5])}, A([3.0, 10.0])),
    "StudentT": (
        None,
        {"df": A([0.5, 5.0]), "loc": A([-1.0, 3.0]), "scale": A([0.5, 2.0])},
        A([3.0, 10.0]),
    ),
    "VonMises": (None, {"loc": A([-1.0, 3.0]), "concentration": A([0.5, 50.0])}, A([3.0, 3.0])),
    "Weibull": (
        None,
        {"scale": A([1.5, 2.0, 2.0, 1.0]), "concentration": A([2.5, 50.0, 0.5, 1.0])},
        A([3.0, 1.0, 3.0, 3.0]),
    ),
}


def _log_density(
    family: reference.Family, key: str | None, params: dict[str, np.ndarray], x: np.ndarray
) -> np.ndarray:
    with np.errstate(all="ignore"):
        return family.log_prob(params, x, key)


@pytest.mark.parametrize("family", sorted(MODE_POINTS))
def test_mode_is_where_the_density_is_highest(family: str) -> None:
    """No grid point within the half-width has a higher log density than the mode; a mode on
    an open end of the support (log density −inf there) is where the density rises to: it
    increases towards it over the grid's first points."""
    key, params, width = MODE_POINTS[family]
    oracle = _family(family)
    modes = oracle.summary("mode", params, key)
    for i, mode in enumerate(modes):
        point = {k: v[i] if np.ndim(v) else v for k, v in params.items()}
        assert np.isfinite(mode), (family, point)
        grid = mode + width[i] * np.linspace(-1.0, 1.0, 801)
        grid = np.concatenate([grid, mode + width[i] * A([-1e-6, 1e-6, -1e-9, 1e-9])])
        at_mode = _log_density(oracle, key, point, A(mode))
        around = _log_density(oracle, key, point, grid)
        if at_mode == -np.inf:  # an open end: the density must rise towards it
            inside = grid[np.isfinite(around) & (grid > mode)]
            steps = mode + (inside.min() - mode) * A([1.0, 2.0, 4.0, 8.0])
            rising = _log_density(oracle, key, point, steps)
            assert np.all(np.diff(rising) < 0), (family, point, rising)
            continue
        slack = 1e-12 * max(1.0, abs(float(at_mode))) if np.isfinite(at_mode) else 0.0
        assert np.all(around <= at_mode + slack), (family, point, grid[np.argmax(around)], mode)


# ----- every family: quadrature of its own log density at one ordinary point -----------------
#: family → (parametrization, scalar parameters): one ordinary point each, every summary
#: finite unless the family has none there (Cauchy's mean, the heavy tails' moments).
ORDINARY: dict[str, tuple[str | None, dict[str, float]]] = {
    "AsymmetricLaplace": (None, {"loc": 0.5, "scale": 1.5, "asymmetry": 0.7}),
    "AsymmetricLaplaceQuantile": (None, {"loc": -0.3, "scale": 0.8, "quantile": 0.3}),
    "Beta": ("concentrations", {"concentration1": 2.5, "concentration0": 3.5}),
    "Cauchy": (None, {"loc": 0.2, "scale": 1.3}),
    "Chi2": (None, {"df": 3.5}),
    "ContinuousBernoulli": ("probs", {"probs": 0.3}),
    "Dagum": (None, {"concentration": 1.5, "sharpness": 4.0, "scale": 2.0}),
    "Exponential": (None, {"rate": 1.7}),
    "FisherSnedecor": (None, {"df1": 5.0, "df2": 11.0}),
    "FoldedDistribution": (None, {"loc": 0.7, "scale": 1.2}),
    "Gamma": (None, {"concentration": 2.5, "rate": 1.5}),
    "GeneralizedPareto": (None, {"loc": 0.5, "scale": 1.3, "concentration": 0.2}),
    "Gompertz": (None, {"concentration": 0.8, "rate": 1.5}),
    "Gumbel": (None, {"loc": 0.5, "scale": 2.0}),
    "HalfCauchy": (None, {"scale": 1.5}),
    "HalfNormal": (None, {"scale": 1.5}),
    "HurdleGamma": ("gate", {"gate": 0.3, "concentration": 2.5, "rate": 1.5}),
    "HurdleLogNormal": ("generic_gate_logits", {"gate_logits": -0.8, "loc": 0.2, "scale": 0.6}),
    "InverseGamma": (None, {"concentration": 4.5, "rate": 2.0}),
    "Kumaraswamy": (None, {"concentration1": 2.5, "concentration0": 3.5}),
    "Laplace": (None, {"loc": 0.5, "scale": 1.5}),
    "Levy": (None, {"loc": 0.5, "scale": 1.2}),
    "LogNormal": (None, {"loc": 0.3, "scale": 0.5}),
    "LogUniform": (None, {"low": 0.5, "high": 4.0}),
    "Logistic": (None, {"loc": 0.5, "scale": 1.5}),
    "Normal": (None, {"loc": 0.5, "scale": 1.5}),
    "Pareto": (None, {"scale": 1.5, "alpha": 4.5}),
    "SoftLaplace": (None, {"loc": 0.5, "scale": 1.5}),
    "StudentT": (None, {"df": 5.5, "loc": 0.5, "scale": 1.5}),
    "TruncatedGamma": ("two_sided", {"concentration": 2.5, "rate": 1.5, "low": 0.5, "high": 3.0}),
    "TruncatedNormal": ("two_sided", {"loc": 0.5, "scale": 1.5, "low": -1.0, "high": 2.5}),
    "Uniform": (None, {"low": -1.0, "high": 2.5}),
    "VonMises": (None, {"loc": 0.5, "concentration": 2.0}),
    "Weibull": (None, {"scale": 1.5, "concentration": 2.5}),
}
#: Families with an atom at 0 beside their density (log_prob there is the atom's log mass).
ATOMS = {"HurdleGamma", "HurdleLogNormal"}
#: Families whose summaries are circular (the mean direction, 1 − |E e^{iX}|).
CIRCULAR = {"VonMises"}


def _continuous_univariate_with_summaries() -> list[str]:
    """Families of scalar parameters and values (a mixture's vector parameters are held to
    quadrature in test_summaries_discrete_multivariate.py)."""
    return sorted(
        name
        for name, fam in reference.FAMILIES.items()
        if fam.value.event_rank == 0
        and not fam.value.discrete
        and not any(p.event_rank for p in fam.params().values())
        and any(fam.has_summary(s) for s in (Summary.MEAN, Summary.VARIANCE, Summary.ENTROPY))
    )


def _range(
    family: reference.Family, key: str | None, params: dict[str, float]
) -> tuple[float, float]:
    base = domains.interval(family.value.support)
    lo, hi = (base.lo, base.hi) if base is not None else (-np.inf, np.inf)
    low, high = family.support_ends(params, key)
    return (lo if low is None else low), (hi if high is None else high)


def _quadrature(
    family: reference.Family, key: str | None, params: dict[str, float], name: str
) -> dict[str, float]:
    """Mean, variance and entropy of the oracle's own density by adaptive quadrature (about the
    oracle's mean where it is finite, so the variance is a sum of positive terms)."""
    lo, hi = _range(family, key, params)
    arrays = {k: A(v) for k, v in params.items()}
    centre = float(family.summary("mean", arrays, key)) if family.has_summary("mean") else 0.0
    # Moments only where they exist: a heavy tail's would not converge (and take seconds).
    moments = name in CIRCULAR or bool(np.isfinite(centre))
    if not moments or name in CIRCULAR:
        centre = params.get("loc", 0.0)
    if name in CIRCULAR:
        lo, hi = centre - np.pi, centre + np.pi

    def parts(x: float) -> np.ndarray:
        lp = float(_log_density(family, key, arrays, A(x)))
        p = np.exp(lp)
        h = -p * lp if p > 0 else 0.0
        if not moments:
            return A([p, 0.0, 0.0, h])
        if name in CIRCULAR:
            return A([p, p * np.cos(x - centre), p * np.sin(x - centre), h])
        return A([p, p * (x - centre), p * (x - centre) ** 2, h])

    points = [centre] if lo < centre < hi else None
    kink = params.get("loc")
    if kink is not None and lo < kink < hi and np.isfinite(lo + hi):
        points = sorted({*(points or []), kink})
    if np.isfinite(lo) and np.isfinite(hi):
        total, _ = integrate.quad_vec(
            parts, lo, hi, epsabs=0, epsrel=1e-12, points=points, limit=400
        )
    else:  # quad_vec takes no points on an infinite range: split there
        split = centre if lo < centre < hi else (lo + 1.0 if np.isfinite(lo) else hi - 1.0)
        left, _ = integrate.quad_vec(parts, lo, split, epsabs=0, epsrel=1e-12, limit=400)
        right, _ = integrate.quad_vec(parts, split, hi, epsabs=0, epsrel=1e-12, limit=400)
        total = left + right
    mass, first, second, entropy = total
    if name in ATOMS:  # the atom at 0 carries the rest of the mass
        atom = float(np.exp(_log_density(family, key, arrays, A(0.0))))
        mass, first, second = mass + atom, first + atom * (0.0 - centre), second + atom * centre**2
    if name in CIRCULAR:
        return {
            "mass": mass,
            "mean": centre + float(np.arctan2(second, first)),
            "variance": 1.0 - float(np.hypot(first, second)),
            "entropy": entropy,
        }
    mean = centre + first / mass
    return {
        "mass": mass,
        "mean": mean,
        "variance": second / mass - (first / mass) ** 2,
        "entropy": entropy,
    }


@pytest.mark.parametrize("name", _continuous_univariate_with_summaries())
def test_summaries_match_quadrature_of_the_log_density(name: str) -> None:
    assert name in ORDINARY, f"{name} has summaries but no ordinary point in ORDINARY"
    key, params = ORDINARY[name]
    family = _family(name)
    found = _quadrature(family, key, params, name)
    assert abs(found["mass"] - 1.0) < 1e-10, found
    arrays = {k: A(v) for k, v in params.items()}
    for summary in ("mean", "variance", "entropy"):
        if not family.has_summary(summary):
            continue
        got = float(family.summary(summary, arrays, key))
        if not np.isfinite(got):  # a heavy tail (checked in test_undefined_and_infinite_regions)
            continue
        scale = max(1.0, abs(got)) if summary == "entropy" else abs(got)
        assert abs(got - found[summary]) <= 1e-9 * scale, (summary, got, found[summary])


@pytest.mark.parametrize("name", sorted(ORDINARY))
def test_summaries_broadcast_over_the_batch(name: str) -> None:
    """A (2, 1) first parameter against (3,) others: every summary (2, 3), each element the
    scalar point's value."""
    key, params = ORDINARY[name]
    family = _family(name)
    first, *rest = params
    column = (2, 1) if rest else (2, 3)  # a lone parameter carries the whole batch
    batched = {first: np.full(column, params[first])} | {k: np.full(3, params[k]) for k in rest}
    scalar = {k: A(v) for k, v in params.items()}
    for summary in Summary:
        if not family.has_summary(summary):
            continue
        want = family.summary(summary, scalar, key)
        got = family.summary(summary, batched, key)
        assert got.shape == (2, 3), (summary, got.shape)
        np.testing.assert_array_equal(got, np.broadcast_to(want, (2, 3)), err_msg=str(summary))
