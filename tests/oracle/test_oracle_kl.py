"""The oracle's KL divergences (conformance/reference/kl) against independent float64
computations:

- a continuous pair on the line: ∫ p·(log p − log q) by double-exponential quadrature
  (tanh-sinh, exp-sinh, sinh-sinh: endpoint singularities and infinite ranges are what it is
  made for), with each family's own ``log_prob``, all nodes of a level in one call;
- a discrete pair: the explicit sum over p's support (tails below 1e-17);
- a Gaussian or Wishart pair: the textbook formula with ``np.linalg.inv``/``slogdet``, or the
  expectation of log p − log q from the Wishart's known moments;
- a near-equal pair (KL ~1e-14): the textbook formula evaluated by mpmath at 50 digits, where
  float64 would lose every digit to cancellation.

Also: batch broadcasting (p (3, 1) against q (4,)), +inf where q's support does not cover
p's, 0 at p = q, NaN at invalid parameters, and the registry file's pairs against the oracle's.
"""

from __future__ import annotations

import itertools
import math

import mpmath as mp
import numpy as np
import pytest
from scipy import linalg, special

from conformance.reference import OracleError, get_family
from conformance.reference.kl import kl_divergence, kl_pair, kl_pairs
from conformance.registry.kl_pairs import kl_rules

INF = np.inf


def _kl(p, pp, q, qp, pk=None, qk=None, **kw):
    return kl_divergence(p, pp, q, qp, pk, qk, **kw)


# ----- double-exponential quadrature ---------------------------------------------------------


def _de_nodes(a: float, b: float, h: float, center: float, scale: float):
    """Nodes and weights of the trapezoid rule in t for ∫_a^b after the DE substitution."""
    t = np.arange(-6.2, 6.2 + h / 2, h)
    u = 0.5 * np.pi * np.sinh(t)
    du = 0.5 * np.pi * np.cosh(t)
    with np.errstate(over="ignore", invalid="ignore"):
        if np.isfinite(a) and np.isfinite(b):
            e = np.exp(-2.0 * np.abs(u))
            dist = (b - a) * e / (1.0 + e)  # distance to the nearer end
            x = np.where(t < 0, a + dist, b - dist)
            w = 2.0 * (b - a) * du * e / (1.0 + e) ** 2
        elif np.isfinite(a):
            x, w = a + np.exp(u), du * np.exp(u)
        elif np.isfinite(b):
            x, w = b - np.exp(u), du * np.exp(u)
        else:
            x, w = center + scale * np.sinh(u), scale * du * np.cosh(u)
    keep = np.isfinite(x) & np.isfinite(w) & (x > a) & (x < b) & (w > 0)
    return x[keep], w[keep]


def de_integrate(f, a: float, b: float, center: float = 0.0, scale: float = 1.0) -> float:
    """∫_a^b f, f vectorised; halves the step until two levels agree to 1e-12 (the error of a
    converged level is far below the difference to the one before)."""
    found = [math.nan]
    for level in range(1, 11):
        h = 2.0**-level
        x, w = _de_nodes(a, b, h, center, scale)
        found.append(math.fsum(h * w * f(x)))
        if abs(found[-1] - found[-2]) <= 1e-16 + 1e-12 * abs(found[-1]):
            return found[-1]
    raise AssertionError(f"quadrature did not settle on [{a}, {b}]: {found[-3:]}")


def quad_kl(p, pp, q, qp, pk=None, qk=None, breaks=()) -> float:
    """∫ p·(log p − log q) over p's support, split at the kinks ``breaks``."""
    pf, qf = get_family(p), get_family(q)
    support = pf.support({k: np.asarray(v) for k, v in pp.items()}, pk)
    lo = {"real": -INF, "nonnegative": 0.0, "positive": 0.0, "unit_interval": 0.0}
    hi = {"unit_interval": 1.0}
    a = float(support.lower) if support.lower is not None else lo.get(support.name, -INF)
    b = float(support.upper) if support.upper is not None else hi.get(support.name, INF)
    center, scale = float(pp.get("loc", 0.0)), float(pp.get("scale", 1.0))

    def integrand(x: np.ndarray) -> np.ndarray:
        lp = pf.log_prob(pp, x, pk)
        lq = qf.log_prob(qp, x, qk)
        dens = np.exp(lp)
        with np.errstate(invalid="ignore"):
            return np.where(dens > 0, dens * (lp - lq), 0.0)

    ends = [a, *sorted(k for k in breaks if a < k < b), b]
    return math.fsum(
        de_integrate(integrand, lo_, hi_, center, scale) for lo_, hi_ in itertools.pairwise(ends)
    )


# ----- continuous pairs on the line -----------------------------------------------------------

N = {"loc": 0.3, "scale": 1.2}
G = {"concentration": 2.5, "rate": 1.5}
E = {"rate": 0.7}
B = {"concentration1": 2.0, "concentration0": 3.0}
U = {"low": 0.2, "high": 0.9}
LA = {"loc": 0.1, "scale": 0.8}
GU = {"loc": 0.2, "scale": 1.1}
PA = {"scale": 0.5, "alpha": 3.5}
CB = {"probs": 0.3}

#: (p, p params, q, q params, p's parametrisation, q's, kinks of either density)
# fmt: off
CONTINUOUS = [
    # one family: ordinary, near (1e-3 apart), far
    ("Normal", N, "Normal", {"loc": -0.5, "scale": 0.7}),
    ("Normal", N, "Normal", {"loc": 0.3012, "scale": 1.2012}),
    ("Normal", {"loc": 0.0, "scale": 0.1}, "Normal", {"loc": 20.0, "scale": 3.0}),
    ("Gamma", G, "Gamma", {"concentration": 1.2, "rate": 0.7}),
    ("Gamma", G, "Gamma", {"concentration": 2.5025, "rate": 1.5015}),
    ("Gamma", {"concentration": 0.3, "rate": 5.0}, "Gamma", {"concentration": 30.0, "rate": 0.2}),
    ("Exponential", E, "Exponential", {"rate": 2.1}),
    ("Exponential", E, "Exponential", {"rate": 0.7007}),
    ("Exponential", {"rate": 0.01}, "Exponential", {"rate": 50.0}),
    ("Beta", B, "Beta", {"concentration1": 0.5, "concentration0": 1.5}),
    ("Beta", B, "Beta", {"concentration1": 2.002, "concentration0": 3.003}),
    ("Beta", {"concentration1": 0.4, "concentration0": 1.6}, "Beta", {"concentration1": 20.0, "concentration0": 0.5}),
    ("Beta", {"mean": 0.3, "concentration": 5.0}, "Beta", B, "mean_concentration"),
    ("Uniform", U, "Uniform", {"low": 0.0, "high": 1.0}),
    ("Uniform", U, "Uniform", {"low": 0.1999, "high": 0.9001}),
    ("Uniform", {"low": 0.0, "high": 1e-3}, "Uniform", {"low": -100.0, "high": 100.0}),
    ("Laplace", LA, "Laplace", {"loc": -0.4, "scale": 1.3}, None, None, (0.1, -0.4)),
    ("Laplace", LA, "Laplace", {"loc": 0.1008, "scale": 0.8008}, None, None, (0.1, 0.1008)),
    ("Laplace", {"loc": 0.0, "scale": 0.05}, "Laplace", {"loc": 9.0, "scale": 4.0}, None, None, (0.0, 9.0)),
    ("Gumbel", GU, "Gumbel", {"loc": -1.0, "scale": 2.0}),
    ("Gumbel", GU, "Gumbel", {"loc": 0.2011, "scale": 1.1011}),
    ("Gumbel", {"loc": 0.0, "scale": 0.2}, "Gumbel", {"loc": 5.0, "scale": 3.0}),
    ("Pareto", PA, "Pareto", {"scale": 0.4, "alpha": 2.0}),
    ("Pareto", PA, "Pareto", {"scale": 0.4995, "alpha": 3.5035}),
    ("Pareto", {"scale": 2.0, "alpha": 0.7}, "Pareto", {"scale": 0.1, "alpha": 5.0}),
    ("HalfNormal", {"scale": 1.3}, "HalfNormal", {"scale": 0.6}),
    ("HalfNormal", {"scale": 1.3}, "HalfNormal", {"scale": 1.3013}),
    ("Cauchy", {"loc": 0.0, "scale": 1.0}, "Cauchy", {"loc": 1.0, "scale": 2.0}),
    ("Cauchy", {"loc": 0.0, "scale": 1.0}, "Cauchy", {"loc": 0.001, "scale": 1.001}),
    ("Cauchy", {"loc": 0.0, "scale": 0.01}, "Cauchy", {"loc": 30.0, "scale": 10.0}),
    ("ContinuousBernoulli", CB, "ContinuousBernoulli", {"probs": 0.8}),
    ("ContinuousBernoulli", CB, "ContinuousBernoulli", {"probs": 0.3003}),
    ("ContinuousBernoulli", {"logits": 30.0}, "ContinuousBernoulli", {"logits": -20.0}, "logits", "logits"),
    ("ContinuousBernoulli", {"logits": 0.4}, "ContinuousBernoulli", {"probs": 0.5}, "logits", "probs"),
    ("Chi2", {"df": 3.0}, "Chi2", {"df": 5.0}),
    ("Chi2", {"df": 3.0}, "Gamma", G),
    ("Exponential", E, "Chi2", {"df": 2.5}),
    # two families
    ("Exponential", E, "Gamma", G),
    ("Gamma", G, "Exponential", E),
    ("Beta", B, "ContinuousBernoulli", CB),
    ("Beta", B, "Exponential", E),
    ("Beta", B, "Gamma", G),
    ("Beta", {"concentration1": 0.5, "concentration0": 0.7}, "Gamma", {"concentration": 0.4, "rate": 3.0}),
    ("Beta", B, "Normal", N),
    ("Beta", B, "Uniform", {"low": -0.5, "high": 1.0}),
    ("ContinuousBernoulli", CB, "Exponential", E),
    ("ContinuousBernoulli", {"logits": -12.0}, "Normal", N, "logits"),
    ("ContinuousBernoulli", CB, "Uniform", {"low": 0.0, "high": 3.0}),
    ("Exponential", E, "Gumbel", GU),
    ("Exponential", E, "Normal", N),
    ("Gamma", G, "Gumbel", GU),
    ("Gamma", {"concentration": 0.5, "rate": 0.1}, "Gumbel", {"loc": 40.0, "scale": 9.0}),
    ("Gamma", G, "Normal", N),
    ("Gumbel", GU, "Normal", N),
    ("Laplace", LA, "Normal", N, None, None, (0.1,)),
    ("Normal", N, "Gumbel", GU),
    ("Normal", {"loc": -3.0, "scale": 2.0}, "Gumbel", {"loc": 4.0, "scale": 0.5}),
    ("Normal", N, "Laplace", LA, None, None, (0.1,)),
    ("Pareto", PA, "Exponential", E),
    ("Pareto", PA, "Gamma", G),
    ("Pareto", PA, "Normal", N),
    ("Uniform", U, "Beta", B),
    ("Uniform", {"low": 0.0, "high": 1.0}, "Beta", {"concentration1": 0.5, "concentration0": 0.3}),
    ("Uniform", U, "ContinuousBernoulli", CB),
    ("Uniform", U, "Exponential", E),
    ("Uniform", {"low": 0.0, "high": 2.0}, "Gamma", {"concentration": 0.4, "rate": 1.0}),
    ("Uniform", U, "Gamma", G),
    ("Uniform", U, "Gumbel", GU),
    ("Uniform", {"low": -40.0, "high": 30.0}, "Gumbel", {"loc": 2.0, "scale": 6.0}),
    ("Uniform", U, "Normal", N),
    ("Uniform", {"low": 1.0, "high": 1.0001}, "Normal", N),
    ("Uniform", {"low": 0.7, "high": 3.0}, "Pareto", PA),
    ("Weibull", {"scale": 1.2, "concentration": 1.7}, "Gamma", G),
    ("Weibull", {"scale": 3.0, "concentration": 0.6}, "Gamma", {"concentration": 0.5, "rate": 0.3}),
    ("Weibull", {"scale": 1.2, "concentration": 1.7}, "Chi2", {"df": 4.0}),
    ("Kumaraswamy", {"concentration1": 2.0, "concentration0": 3.0}, "Beta", B),
    ("Kumaraswamy", {"concentration1": 0.5, "concentration0": 1.5}, "Beta", {"concentration1": 1.2, "concentration0": 0.8}),
    ("Delta", {"v": 0.4, "log_density": 0.0}, "Delta", {"v": 0.4, "log_density": -1.0}),
]
# fmt: on


def _padded(case: tuple, n: int, defaults: tuple) -> tuple:
    """``case`` with its optional trailing fields filled from ``defaults``."""
    return (*case, *defaults[len(case) - (n - len(defaults)) :])


def _case_id(case) -> str:
    return f"{case[0]}-{case[2]}-" + "-".join(f"{v}" for v in case[1].values())


@pytest.mark.parametrize("case", [c for c in CONTINUOUS if c[0] != "Delta"], ids=_case_id)
def test_continuous_pair_matches_quadrature(case) -> None:
    p, pp, q, qp, pk, qk, breaks = _padded(case, 7, (None, None, ()))
    found = float(_kl(p, pp, q, qp, pk, qk))
    expected = quad_kl(p, pp, q, qp, pk, qk, breaks)
    assert np.isfinite(found) and found > 0
    assert found == pytest.approx(expected, rel=1e-10, abs=1e-15), (found, expected)


# ----- discrete pairs ------------------------------------------------------------------------


def sum_kl(p, pp, q, qp, ks, pk=None, qk=None) -> tuple[float, float]:
    """Σ p·(log p − log q) over the values ``ks`` (p's support or all of it up to a tail), and
    the rounding the sum may carry: its terms cancel when p ≈ q, each log with its last bit."""
    lp = get_family(p).log_prob(pp, ks, pk)
    lq = get_family(q).log_prob(qp, ks, qk)
    keep = lp > -INF
    dens = np.exp(lp[keep])
    rounding = 1e-15 * math.fsum(dens * (np.abs(lp[keep]) + np.abs(lq[keep])))
    return math.fsum(dens * (lp[keep] - lq[keep])), rounding


COUNTS = np.arange(0.0, 400.0)

#: (p, p params, q, q params, values to sum over, p's parametrisation, q's)
# fmt: off
DISCRETE = [
    ("Bernoulli", {"probs": 0.3}, "Bernoulli", {"probs": 0.65}, np.array([0.0, 1.0])),
    ("Bernoulli", {"probs": 0.3}, "Bernoulli", {"probs": 0.3003}, np.array([0.0, 1.0])),
    ("Bernoulli", {"probs": 1e-9}, "Bernoulli", {"probs": 0.999}, np.array([0.0, 1.0])),
    ("Bernoulli", {"logits": 2.0}, "Bernoulli", {"logits": -30.0}, np.array([0.0, 1.0]), "logits", "logits"),
    ("Bernoulli", {"logits": 0.4}, "Bernoulli", {"probs": 0.2}, np.array([0.0, 1.0]), "logits", "probs"),
    ("Bernoulli", {"probs": 0.3}, "Poisson", {"rate": 0.8}, np.array([0.0, 1.0])),
    ("Bernoulli", {"logits": -3.0}, "Poisson", {"rate": 25.0}, np.array([0.0, 1.0]), "logits"),
    ("Binomial", {"total_count": 10.0, "probs": 0.3}, "Binomial", {"total_count": 10.0, "probs": 0.55}, COUNTS[:11]),
    ("Binomial", {"total_count": 10.0, "logits": 0.3}, "Binomial", {"total_count": 10.0, "logits": 0.3003}, COUNTS[:11], "logits", "logits"),
    ("Binomial", {"total_count": 6.0, "probs": 0.3}, "Binomial", {"total_count": 9.0, "probs": 0.4}, COUNTS[:7]),
    ("Binomial", {"total_count": 200.0, "probs": 0.01}, "Binomial", {"total_count": 200.0, "probs": 0.9}, COUNTS[:201]),
    ("Poisson", {"rate": 3.0}, "Poisson", {"rate": 7.5}, COUNTS),
    ("Poisson", {"rate": 3.0}, "Poisson", {"rate": 3.003}, COUNTS),
    ("Poisson", {"rate": 150.0}, "Poisson", {"rate": 0.01}, COUNTS),
    ("Geometric", {"probs": 0.4}, "Geometric", {"probs": 0.15}, np.arange(0.0, 200.0)),
    ("Geometric", {"probs": 0.4}, "Geometric", {"probs": 0.4004}, np.arange(0.0, 200.0)),
    ("Geometric", {"logits": -3.0}, "Geometric", {"logits": 4.0}, np.arange(0.0, 3000.0), "logits", "logits"),
    ("Geometric", {"probs": 0.7}, "Geometric", {"logits": -1.0}, np.arange(0.0, 200.0), "probs", "logits"),
    ("Categorical", {"probs": np.array([0.2, 0.3, 0.5])}, "Categorical", {"probs": np.array([0.6, 0.1, 0.3])}, np.arange(3.0)),
    ("Categorical", {"probs": np.array([0.2, 0.0, 0.8])}, "Categorical", {"probs": np.array([0.3, 0.3, 0.4])}, np.arange(3.0)),
    ("Categorical", {"logits": np.array([1.0, -2.0, 0.5, 3.0])}, "Categorical", {"logits": np.array([1.001, -2.0, 0.499, 3.0])}, np.arange(4.0), "logits", "logits"),
    ("Categorical", {"logits": np.array([40.0, -2.0, 0.5])}, "Categorical", {"probs": np.array([0.1, 0.2, 0.7])}, np.arange(3.0), "logits", "probs"),
    ("OrderedLogistic", {"predictor": 0.3, "cutpoints": np.array([-1.0, 0.5, 2.0])}, "Categorical", {"probs": np.array([0.1, 0.2, 0.3, 0.4])}, np.arange(4.0)),
    ("Categorical", {"probs": np.array([0.1, 0.2, 0.3, 0.4])}, "OrderedLogistic", {"predictor": -1.0, "cutpoints": np.array([-1.0, 0.5, 2.0])}, np.arange(4.0)),
    ("OrderedLogistic", {"predictor": 0.3, "cutpoints": np.array([-1.0, 2.0])}, "OrderedLogistic", {"predictor": 1.3, "cutpoints": np.array([-0.5, 2.0])}, np.arange(3.0)),
    ("Delta", {"v": 2.0, "log_density": 0.0}, "Poisson", {"rate": 3.0}, np.array([2.0])),
]
# fmt: on

ONE_HOT = np.eye(3)


@pytest.mark.parametrize("case", DISCRETE, ids=_case_id)
def test_discrete_pair_matches_explicit_sum(case) -> None:
    p, pp, q, qp, ks, pk, qk = _padded(case, 7, (None, None))
    found = float(_kl(p, pp, q, qp, pk, qk))
    expected, rounding = sum_kl(p, pp, q, qp, ks, pk, qk)
    assert found == pytest.approx(expected, rel=1e-12, abs=rounding), (found, expected)


@pytest.mark.parametrize("p_name", ["OneHotCategorical", "OneHotCategoricalStraightThrough"])
def test_one_hot_categorical_is_the_categorical_sum(p_name) -> None:
    pp, qp = {"logits": np.array([0.5, -1.0, 2.0])}, {"probs": np.array([0.25, 0.25, 0.5])}
    found = float(_kl(p_name, pp, "OneHotCategorical", qp, "logits", "probs"))
    expected, _ = sum_kl(p_name, pp, "OneHotCategorical", qp, ONE_HOT, "logits", "probs")
    assert found == pytest.approx(expected, rel=1e-12)


def test_normalize_probs_option_is_read() -> None:
    pp, qp = {"probs": np.array([0.2, 0.3, 0.5000004])}, {"probs": np.array([0.5, 0.25, 0.25])}
    raw = float(_kl("Categorical", pp, "Categorical", qp))
    normed = float(_kl("Categorical", pp, "Categorical", qp, p_options={"normalize_probs": True}))
    p = pp["probs"] / pp["probs"].sum()
    assert normed == pytest.approx(float((p * np.log(p / qp["probs"])).sum()), rel=1e-13)
    assert raw != normed


# ----- densities singular at 1: float64 cannot place nodes within 1e-16 of the end --------------


def _mp_kumaraswamy_beta(a, b, alpha, beta):
    """∫₀¹ (log p − log q)(x(z)) dz with x(z) = (1 − z^{1/b})^{1/a} the inverse of the
    Kumaraswamy's survival function (Z uniform), every log written in z."""

    def integrand(z):
        log_x = mp.log1p(-(z ** (1 / b))) / a
        log_p = mp.log(a * b) + (a - 1) * log_x + (b - 1) * mp.log(z) / b
        log_q = (alpha - 1) * log_x + (beta - 1) * mp.log(-mp.expm1(log_x)) - _mp_lbeta(alpha, beta)
        return log_p - log_q

    return mp.quad(integrand, [0, mp.mpf(1) / 2, 1])


@pytest.mark.parametrize(
    ("p", "pp", "qp", "qk"),
    [
        (
            "Beta",
            {"concentration1": 0.4, "concentration0": 0.6},
            {"concentration1": 20.0, "concentration0": 5.0},
            None,
        ),
        (
            "Kumaraswamy",
            {"concentration1": 0.5, "concentration0": 0.7},
            {"concentration1": 1.2, "concentration0": 0.8},
            None,
        ),
        (
            "Kumaraswamy",
            {"concentration1": 4.0, "concentration0": 0.3},
            {"mean": 0.6, "concentration": 3.0},
            "mean_concentration",
        ),
        (
            "Kumaraswamy",
            {"concentration1": 0.2, "concentration0": 0.05},
            {"concentration1": 0.5, "concentration0": 0.5},
            None,
        ),
    ],
    ids=lambda x: x if isinstance(x, str) else "",
)
@mp.workdps(30)
def test_singular_at_one_against_mpmath(p, pp, qp, qk) -> None:
    q = {k: _mp(v) for k, v in qp.items()}
    alpha, beta = (
        (q["mean"] * q["concentration"], (1 - q["mean"]) * q["concentration"])
        if qk
        else (q["concentration1"], q["concentration0"])
    )
    a, b = _mp(pp["concentration1"]), _mp(pp["concentration0"])
    if p == "Beta":
        expected = (
            _mp_lbeta(alpha, beta)
            - _mp_lbeta(a, b)
            + (a - alpha) * mp.digamma(a)
            + (b - beta) * mp.digamma(b)
            + (alpha - a + beta - b) * mp.digamma(a + b)
        )
    else:
        expected = _mp_kumaraswamy_beta(a, b, alpha, beta)
    found = float(_kl(p, pp, "Beta", qp, None, qk))
    assert found == pytest.approx(float(expected), rel=1e-12)


# ----- Gaussians and Wisharts ------------------------------------------------------------------

RNG = np.random.default_rng(20261129)


def _spd(n: int, batch=()) -> np.ndarray:
    a = RNG.normal(size=(*batch, n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def _covariance(family: str, params: dict, key: str | None) -> tuple[np.ndarray, np.ndarray]:
    """(mean, covariance), written from the definitions."""
    if family == "MultivariateNormal":
        mat = params[key]
        cov = {
            "covariance_matrix": lambda: mat,
            "scale_tril": lambda: mat @ np.swapaxes(mat, -1, -2),
            "precision_matrix": lambda: np.linalg.inv(mat),
        }[key]()
        return params["loc"], cov
    if family == "LowRankMultivariateNormal":
        w = params["cov_factor"]
        return params["loc"], w @ np.swapaxes(w, -1, -2) + np.apply_along_axis(
            np.diag, -1, params["cov_diag"]
        )
    if family == "Independent":
        loc, scale = np.broadcast_arrays(params["loc"], params["scale"])
        return loc, np.apply_along_axis(np.diag, -1, scale**2)
    if family == "CirculantNormal":
        n = params["loc"].shape[-1]
        row = (
            params["covariance_row"]
            if key == "covariance_row"
            else np.fft.irfft(params["covariance_rfft"], n)
        )
        return params["loc"], linalg.circulant(row)
    raise AssertionError(family)


def textbook_gaussian_kl(mean_p, cp, mq, cq) -> float:
    inv = np.linalg.inv(cq)
    d = mq - mean_p
    _, ldq = np.linalg.slogdet(cq)
    _, ldp = np.linalg.slogdet(cp)
    return 0.5 * (np.trace(inv @ cp) + d @ inv @ d - len(d) + ldq - ldp)


def _mvn(n: int, key: str, batch=()):
    cov = _spd(n, batch)
    mat = {
        "covariance_matrix": cov,
        "scale_tril": np.linalg.cholesky(cov),
        "precision_matrix": np.linalg.inv(cov),
    }[key]
    return {"loc": RNG.normal(size=(*batch, n)), key: mat}


MVN_KEYS = ["covariance_matrix", "scale_tril", "precision_matrix"]
LOW_RANK = {
    "loc": np.array([0.5, -1.0, 2.0]),
    "cov_factor": np.array([[1.0, 0.2], [0.5, -0.3], [0.0, 2.0]]),
    "cov_diag": np.array([0.5, 1.5, 0.2]),
}


@pytest.mark.parametrize("pk", MVN_KEYS)
@pytest.mark.parametrize("qk", MVN_KEYS)
def test_mvn_pair_matches_inverse_and_slogdet(pk, qk) -> None:
    pp, qp = _mvn(3, pk), _mvn(3, qk)
    expected = textbook_gaussian_kl(
        *_covariance("MultivariateNormal", pp, pk), *_covariance("MultivariateNormal", qp, qk)
    )
    assert float(_kl("MultivariateNormal", pp, "MultivariateNormal", qp, pk, qk)) == pytest.approx(
        expected, rel=1e-12
    )


@pytest.mark.parametrize(
    ("p", "pk", "q", "qk"),
    [
        ("LowRankMultivariateNormal", None, "LowRankMultivariateNormal", None),
        ("LowRankMultivariateNormal", None, "MultivariateNormal", "precision_matrix"),
        ("MultivariateNormal", "scale_tril", "LowRankMultivariateNormal", None),
        ("Independent", None, "CirculantNormal", "covariance_row"),
        ("Independent", None, "CirculantNormal", "covariance_rfft"),
        ("Independent", None, "Independent", None),
    ],
)
def test_gaussian_pairs_match_inverse_and_slogdet(p, pk, q, qk) -> None:
    def params(family, key, shift):
        if family == "LowRankMultivariateNormal":
            return {k: v + shift * (k != "cov_diag") for k, v in LOW_RANK.items()}
        if family == "MultivariateNormal":
            return _mvn(3, key)
        if family == "Independent":
            return {
                "loc": np.array([0.1, -0.2, 0.3, shift]),
                "scale": np.array([0.5, 1.0, 2.0, 1.5 + shift]),
            }
        row = np.array([2.0, 0.6, -0.2, 0.6])
        return {
            "loc": np.array([0.0, 1.0, 0.5, -1.0]),
            key: row if key == "covariance_row" else np.fft.rfft(row).real,
        }

    n = 4 if "Independent" in (p, q) else 3
    pp, qp = params(p, pk, 0.0), params(q, qk, 0.3)
    assert pp["loc"].shape[-1] == qp["loc"].shape[-1] == n
    expected = textbook_gaussian_kl(*_covariance(p, pp, pk), *_covariance(q, qp, qk))
    assert float(_kl(p, pp, q, qp, pk, qk)) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    ("pk", "qk"), [("covariance_matrix", "precision_matrix"), ("precision_matrix", "scale_tril")]
)
def test_mvn_batches_broadcast_p_against_q(pk, qk) -> None:
    """p batch (3, 1), q batch (4,): KL is (3, 4), element (i, j) that of p_i against q_j."""
    pp, qp = _mvn(2, pk, (3, 1)), _mvn(2, qk, (4,))
    found = _kl("MultivariateNormal", pp, "MultivariateNormal", qp, pk, qk)
    assert found.shape == (3, 4)
    for i in range(3):
        for j in range(4):
            pi = {k: v[i, 0] for k, v in pp.items()}
            qj = {k: v[j] for k, v in qp.items()}
            expected = textbook_gaussian_kl(
                *_covariance("MultivariateNormal", pi, pk),
                *_covariance("MultivariateNormal", qj, qk),
            )
            assert found[i, j] == pytest.approx(expected, rel=1e-12)


def test_mvn_loc_batch_alone_broadcasts_against_a_batch_of_matrices() -> None:
    """p: one covariance, a (5,) batch of means; q: a (5,) batch of covariances, one mean."""
    cov_p, cov_q = _spd(3), _spd(3, (5,))
    loc_p, loc_q = RNG.normal(size=(5, 3)), RNG.normal(size=3)
    found = _kl(
        "MultivariateNormal",
        {"loc": loc_p, "covariance_matrix": cov_p},
        "MultivariateNormal",
        {"loc": loc_q, "scale_tril": np.linalg.cholesky(cov_q)},
        "covariance_matrix",
        "scale_tril",
    )
    expected = [textbook_gaussian_kl(loc_p[i], cov_p, loc_q, cov_q[i]) for i in range(5)]
    np.testing.assert_allclose(found, expected, rtol=1e-12)


def _wishart_moments_kl(pp, qp, d) -> float:
    """E_p[log p(X) − log q(X)] from the oracle's log_prob, which is affine in
    T(X) = (log|X|, X_ij): fit it exactly at random points, then take
    E[X] = ν·Σ and E[log|X|] = ψ_d(ν/2) + d·log 2 + log|Σ|."""
    w = get_family("Wishart")
    xs = np.stack([_spd(d) for _ in range(3 * d * d + 3)])
    g = w.log_prob(pp, xs, "covariance_matrix") - w.log_prob(qp, xs, "covariance_matrix")
    iu = np.triu_indices(d)
    feats = np.column_stack([np.linalg.slogdet(xs)[1], xs[:, iu[0], iu[1]], np.ones(len(xs))])
    coef, *_ = np.linalg.lstsq(feats, g, rcond=None)
    nu, sigma = pp["df"], pp["covariance_matrix"]
    mean_logdet = (
        special.digamma(0.5 * (nu - np.arange(d))).sum()
        + d * np.log(2)
        + np.linalg.slogdet(sigma)[1]
    )
    return float(coef[0] * mean_logdet + coef[1:-1] @ (nu * sigma)[iu] + coef[-1])


@pytest.mark.parametrize("d", [2, 3])
def test_wishart_pair_matches_its_moments(d) -> None:
    pp = {"df": np.float64(d + 1.5), "covariance_matrix": _spd(d)}
    qp = {"df": np.float64(d + 4.0), "covariance_matrix": _spd(d)}
    expected = _wishart_moments_kl(pp, qp, d)
    assert float(_kl("Wishart", pp, "Wishart", qp)) == pytest.approx(expected, rel=1e-9)
    # the other parametrisations are the same law
    pp2 = {"df": pp["df"], "scale_tril": np.linalg.cholesky(pp["covariance_matrix"])}
    qp2 = {"df": qp["df"], "precision_matrix": np.linalg.inv(qp["covariance_matrix"])}
    found = float(_kl("Wishart", pp2, "Wishart", qp2, "scale_tril", "precision_matrix"))
    assert found == pytest.approx(expected, rel=1e-9)


def test_one_dimensional_wishart_is_a_gamma() -> None:
    """Wishart(ν, σ²) on 1×1 matrices is Gamma(ν/2, rate 1/(2σ²))."""
    found = _kl(
        "Wishart",
        {"df": 3.0, "covariance_matrix": np.array([[2.0]])},
        "Wishart",
        {"df": 5.5, "covariance_matrix": np.array([[0.7]])},
    )
    pp, qp = {"concentration": 1.5, "rate": 0.25}, {"concentration": 2.75, "rate": 1 / 1.4}
    assert float(found) == pytest.approx(quad_kl("Gamma", pp, "Gamma", qp), rel=1e-10)


def test_dirichlet_pair_matches_quadrature_over_the_simplex() -> None:
    """K = 2: the density of the first coordinate on [0, 1]."""
    pp, qp = {"concentration": np.array([0.7, 3.0])}, {"concentration": np.array([1.2, 0.4])}
    dirichlet = get_family("Dirichlet")

    def f(x):
        v = np.stack([x, 1.0 - x], axis=-1)
        lp, lq = dirichlet.log_prob(pp, v), dirichlet.log_prob(qp, v)
        return np.exp(lp) * (lp - lq)

    expected = de_integrate(f, 0.0, 1.0, 0.5, 0.5)
    assert float(_kl("Dirichlet", pp, "Dirichlet", qp)) == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("k", [3, 5])
def test_dirichlet_pair_matches_its_moments(k) -> None:
    """log p − log q is affine in T(x) = log x: fit it exactly from the oracle's log_prob at
    random points, then take E[log x_i] = ψ(α_i) − ψ(Σα)."""
    alpha, beta = RNG.uniform(0.3, 4.0, k), RNG.uniform(0.3, 4.0, k)
    dirichlet = get_family("Dirichlet")
    xs = RNG.dirichlet(np.ones(k), 4 * k)
    g = dirichlet.log_prob({"concentration": alpha}, xs) - dirichlet.log_prob(
        {"concentration": beta}, xs
    )
    coef, *_ = np.linalg.lstsq(np.column_stack([np.log(xs), np.ones(len(xs))]), g, rcond=None)
    expected = coef[:-1] @ (special.digamma(alpha) - special.digamma(alpha.sum())) + coef[-1]
    found = _kl("Dirichlet", {"concentration": alpha}, "Dirichlet", {"concentration": beta})
    assert float(found) == pytest.approx(expected, rel=1e-10)


# ----- near p = q: the closed forms keep the digits of tiny KLs ----------------------------------


def _mp(x):
    return mp.mpf(float(x))


def _mp_lbeta(a, b):
    return mp.loggamma(a) + mp.loggamma(b) - mp.loggamma(a + b)


def _mp_cb_a(eta):
    return mp.log(mp.expm1(eta) / eta)


def _mp_cb_mean(eta):
    return 1 / (1 - mp.exp(-eta)) - 1 / eta


#: (p, p params, q, q params, textbook KL at 50 digits, p's parametrisation, q's)
# fmt: off
TEXTBOOK = [
    ("Normal", {"loc": 0.3, "scale": 1.2}, {"loc": 0.3000001, "scale": 1.2000002},
     lambda a, b: mp.log(b["scale"] / a["scale"]) + (a["scale"] ** 2 + (a["loc"] - b["loc"]) ** 2) / (2 * b["scale"] ** 2) - 0.5),
    ("HalfNormal", {"scale": 1.2}, {"scale": 1.2000002},
     lambda a, b: mp.log(b["scale"] / a["scale"]) + a["scale"] ** 2 / (2 * b["scale"] ** 2) - 0.5),
    ("Exponential", {"rate": 0.7}, {"rate": 0.70000006},
     lambda a, b: mp.log(a["rate"] / b["rate"]) + b["rate"] / a["rate"] - 1),
    ("Gamma", {"concentration": 2.5, "rate": 1.5}, {"concentration": 2.5000003, "rate": 1.4999998},
     lambda a, b: (a["concentration"] - b["concentration"]) * mp.digamma(a["concentration"]) - mp.loggamma(a["concentration"])
     + mp.loggamma(b["concentration"]) + b["concentration"] * (mp.log(a["rate"]) - mp.log(b["rate"]))
     + a["concentration"] * (b["rate"] - a["rate"]) / a["rate"]),
    ("Gamma", {"concentration": 0.01, "rate": 1.5}, {"concentration": 0.0100000003, "rate": 1.5},
     lambda a, b: (a["concentration"] - b["concentration"]) * mp.digamma(a["concentration"]) - mp.loggamma(a["concentration"])
     + mp.loggamma(b["concentration"])),
    ("Beta", {"concentration1": 2.0, "concentration0": 3.0}, {"concentration1": 2.0000002, "concentration0": 2.9999997},
     lambda a, b: _mp_lbeta(b["concentration1"], b["concentration0"]) - _mp_lbeta(a["concentration1"], a["concentration0"])
     + (a["concentration1"] - b["concentration1"]) * mp.digamma(a["concentration1"])
     + (a["concentration0"] - b["concentration0"]) * mp.digamma(a["concentration0"])
     + (b["concentration1"] - a["concentration1"] + b["concentration0"] - a["concentration0"]) * mp.digamma(a["concentration1"] + a["concentration0"])),
    ("Laplace", {"loc": 0.1, "scale": 0.8}, {"loc": 0.1000001, "scale": 0.7999999},
     lambda a, b: mp.log(b["scale"] / a["scale"]) + abs(a["loc"] - b["loc"]) / b["scale"]
     + a["scale"] / b["scale"] * mp.exp(-abs(a["loc"] - b["loc"]) / a["scale"]) - 1),
    ("Gumbel", {"loc": 0.2, "scale": 1.1}, {"loc": 0.2000001, "scale": 1.1000002},
     lambda a, b: -mp.log(a["scale"] / b["scale"]) + (a["loc"] - b["loc"]) / b["scale"] + mp.euler * (a["scale"] / b["scale"] - 1)
     + mp.exp((b["loc"] - a["loc"]) / b["scale"] + mp.loggamma(1 + a["scale"] / b["scale"])) - 1),
    ("Cauchy", {"loc": 0.0, "scale": 1.0}, {"loc": 1e-7, "scale": 1.0000001},
     lambda a, b: mp.log((a["scale"] + b["scale"]) ** 2 + (a["loc"] - b["loc"]) ** 2) - mp.log(4 * a["scale"] * b["scale"])),
    ("Pareto", {"scale": 0.5, "alpha": 3.5}, {"scale": 0.5, "alpha": 3.5000004},
     lambda a, b: mp.log(a["alpha"] / b["alpha"]) + (b["alpha"] - a["alpha"]) / a["alpha"] + b["alpha"] * mp.log(a["scale"] / b["scale"])),
    ("Uniform", {"low": 0.2, "high": 0.9}, {"low": 0.1999999, "high": 0.9},
     lambda a, b: mp.log((b["high"] - b["low"]) / (a["high"] - a["low"]))),
    ("ContinuousBernoulli", {"logits": 0.7}, {"logits": 0.7000002},
     lambda a, b: _mp_cb_a(b["logits"]) - _mp_cb_a(a["logits"]) - (b["logits"] - a["logits"]) * _mp_cb_mean(a["logits"]), "logits", "logits"),
    ("ContinuousBernoulli", {"logits": 25.0}, {"logits": 25.000003},
     lambda a, b: _mp_cb_a(b["logits"]) - _mp_cb_a(a["logits"]) - (b["logits"] - a["logits"]) * _mp_cb_mean(a["logits"]), "logits", "logits"),
    ("Bernoulli", {"probs": 0.3}, {"probs": 0.3000001},
     lambda a, b: a["probs"] * mp.log(a["probs"] / b["probs"]) + (1 - a["probs"]) * mp.log((1 - a["probs"]) / (1 - b["probs"]))),
    ("Bernoulli", {"logits": -8.0}, {"logits": -8.0000005},
     lambda a, b: (lambda x, y: x * mp.log(x / y) + (1 - x) * mp.log((1 - x) / (1 - y)))(1 / (1 + mp.exp(-a["logits"])), 1 / (1 + mp.exp(-b["logits"]))), "logits", "logits"),
    ("Geometric", {"probs": 0.4}, {"probs": 0.4000001},
     lambda a, b: mp.log(a["probs"] / b["probs"]) + (1 - a["probs"]) / a["probs"] * mp.log((1 - a["probs"]) / (1 - b["probs"]))),
    ("Poisson", {"rate": 3.0}, {"rate": 3.0000003},
     lambda a, b: a["rate"] * mp.log(a["rate"] / b["rate"]) - a["rate"] + b["rate"]),
    ("Binomial", {"total_count": 7.0, "probs": 0.3}, {"total_count": 7.0, "probs": 0.3000001},
     lambda a, b: a["total_count"] * (a["probs"] * mp.log(a["probs"] / b["probs"]) + (1 - a["probs"]) * mp.log((1 - a["probs"]) / (1 - b["probs"])))),
]
# fmt: on


@pytest.mark.parametrize("case", TEXTBOOK, ids=_case_id)
def test_near_equal_pair_keeps_its_digits(case) -> None:
    name, pp, qp, formula, pk, qk = _padded(case, 6, (None, None))
    with mp.workdps(50):
        expected = float(
            formula({k: _mp(v) for k, v in pp.items()}, {k: _mp(v) for k, v in qp.items()})
        )
    found = float(_kl(name, pp, name, qp, pk, qk))
    assert 0 < expected < 1e-6  # 1e-14 where the KL is second order in the difference
    assert found == pytest.approx(expected, rel=1e-8)


@mp.workdps(50)
def test_near_equal_categorical_and_dirichlet_keep_their_digits() -> None:
    lp = np.array([1.0, -2.0, 0.5, 3.0])
    lq = lp + np.array([1e-7, 0.0, -2e-7, 0.0])
    mp_p = [mp.exp(_mp(x)) for x in lp]
    mp_q = [mp.exp(_mp(x)) for x in lq]
    zp, zq = sum(mp_p), sum(mp_q)
    expected = sum((a / zp) * mp.log((a / zp) / (b / zq)) for a, b in zip(mp_p, mp_q, strict=True))
    found = _kl("Categorical", {"logits": lp}, "Categorical", {"logits": lq}, "logits", "logits")
    assert float(found) == pytest.approx(float(expected), rel=1e-8)

    a = np.array([2.0, 3.0, 0.5])
    b = a * (1 + np.array([1e-7, -2e-7, 3e-7]))
    ma, mb = [_mp(x) for x in a], [_mp(x) for x in b]
    sa, sb = sum(ma), sum(mb)
    expected = (
        mp.loggamma(sa)
        - mp.loggamma(sb)
        - sum(mp.loggamma(x) - mp.loggamma(y) for x, y in zip(ma, mb, strict=True))
        + sum((x - y) * (mp.digamma(x) - mp.digamma(sa)) for x, y in zip(ma, mb, strict=True))
    )
    found = _kl("Dirichlet", {"concentration": a}, "Dirichlet", {"concentration": b})
    assert float(found) == pytest.approx(float(expected), rel=1e-8)


@mp.workdps(50)
def test_near_equal_mvn_and_wishart_keep_their_digits() -> None:
    cov = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]])
    cov_q = cov + 1e-7 * np.array([[1.0, 0.5, 0.0], [0.5, -1.0, 0.2], [0.0, 0.2, 0.3]])
    loc_q = np.array([1e-7, 0.0, -1e-7])
    sp, sq = mp.matrix(cov.tolist()), mp.matrix(cov_q.tolist())
    d = mp.matrix(loc_q.tolist())
    inv_q = sq**-1
    tr = sum((inv_q * sp)[i, i] for i in range(3))
    expected = 0.5 * (tr + (d.T * inv_q * d)[0] - 3 + mp.log(mp.det(sq)) - mp.log(mp.det(sp)))
    for key, mat_p, mat_q in [
        ("covariance_matrix", cov, cov_q),
        ("precision_matrix", np.linalg.inv(cov), np.linalg.inv(cov_q)),
    ]:
        found = _kl(
            "MultivariateNormal",
            {"loc": np.zeros(3), key: mat_p},
            "MultivariateNormal",
            {"loc": loc_q, key: mat_q},
            key,
            key,
        )
        rel = 1e-8 if key == "covariance_matrix" else 1e-5  # inverting the precision costs digits
        assert float(found) == pytest.approx(float(expected), rel=rel)

    nu_p, nu_q = mp.mpf(5), mp.mpf(float(np.float64(5.0000001)))

    def log_mgamma(x):
        return sum(mp.loggamma(x + mp.mpf(1 - j) / 2) for j in range(1, 4))

    def mdigamma(x):
        return sum(mp.digamma(x + mp.mpf(1 - j) / 2) for j in range(1, 4))

    expected = (
        -nu_q / 2 * mp.log(mp.det(inv_q * sp))
        + nu_p / 2 * (tr - 3)
        + log_mgamma(nu_q / 2)
        - log_mgamma(nu_p / 2)
        + (nu_p - nu_q) / 2 * mdigamma(nu_p / 2)
    )
    found = _kl(
        "Wishart",
        {"df": 5.0, "covariance_matrix": cov},
        "Wishart",
        {"df": 5.0000001, "covariance_matrix": cov_q},
    )
    assert float(found) == pytest.approx(float(expected), rel=1e-8)


# ----- batches, supports, p = q, invalid parameters -------------------------------------------

# fmt: off
BATCHED = [
    ("Normal", {"loc": RNG.normal(size=(3, 1)), "scale": RNG.uniform(0.5, 2, (3, 1))}, "Normal", {"loc": RNG.normal(size=4), "scale": RNG.uniform(0.5, 2, 4)}),
    ("Gamma", {"concentration": RNG.uniform(0.5, 5, (3, 1)), "rate": 1.5}, "Gamma", {"concentration": 2.0, "rate": RNG.uniform(0.5, 2, 4)}),
    ("Binomial", {"total_count": np.array([[3.0], [5.0], [8.0]]), "probs": 0.3}, "Binomial", {"total_count": np.array([5.0, 8.0, 9.0, 12.0]), "probs": RNG.uniform(0.1, 0.9, 4)}),
    ("Dirichlet", {"concentration": RNG.uniform(0.5, 3, (3, 1, 3))}, "Dirichlet", {"concentration": RNG.uniform(0.5, 3, (4, 3))}),
    ("Categorical", {"logits": RNG.normal(size=(3, 1, 5))}, "Categorical", {"probs": RNG.dirichlet(np.ones(5), 4)}, "logits", "probs"),
    ("Independent", {"loc": RNG.normal(size=(3, 1, 2)), "scale": np.ones(2)}, "Independent", {"loc": np.zeros((4, 2)), "scale": RNG.uniform(0.5, 2, (4, 1))}),
    ("LowRankMultivariateNormal", {"loc": RNG.normal(size=(3, 1, 3)), "cov_factor": LOW_RANK["cov_factor"], "cov_diag": LOW_RANK["cov_diag"]}, "MultivariateNormal", _mvn(3, "scale_tril", (4,)), None, "scale_tril"),
    ("Uniform", {"low": np.array([[0.0], [0.5], [-2.0]]), "high": 1.0}, "Beta", {"concentration1": RNG.uniform(0.5, 3, 4), "concentration0": 2.0}),
]
# fmt: on


def _element(params: dict, family: str, key, index: tuple, batch: tuple) -> dict:
    f = get_family(family)
    return {k: v[index] for k, v in f.params_broadcast_to(params, batch, key).items()}


@pytest.mark.parametrize("case", BATCHED, ids=lambda c: f"{c[0]}-{c[2]}")
def test_batches_broadcast_elementwise(case) -> None:
    p, pp, q, qp, pk, qk = _padded(case, 6, (None, None))
    found = _kl(p, pp, q, qp, pk, qk)
    assert found.shape == (3, 4)
    for i in range(3):
        for j in range(4):
            one = _kl(
                p,
                _element(pp, p, pk, (i, j), (3, 4)),
                q,
                _element(qp, q, qk, (i, j), (3, 4)),
                pk,
                qk,
            )
            assert one.shape == ()
            np.testing.assert_allclose(found[i, j], one, rtol=1e-14, atol=1e-17)


#: (p, p params, q, q params) where q's support misses part of p's: +inf.
# fmt: off
NOT_COVERED = [
    ("Uniform", {"low": 0.0, "high": 2.0}, "Uniform", {"low": 0.5, "high": 3.0}),
    ("Uniform", {"low": -1.0, "high": 2.0}, "Exponential", E),
    ("Uniform", {"low": -1.0, "high": 2.0}, "Gamma", G),
    ("Uniform", {"low": 0.5, "high": 1.5}, "Beta", B),
    ("Uniform", {"low": -0.5, "high": 0.5}, "ContinuousBernoulli", CB),
    ("Uniform", {"low": 0.3, "high": 1.0}, "Pareto", PA),
    ("Beta", B, "Uniform", {"low": 0.1, "high": 2.0}),
    ("ContinuousBernoulli", CB, "Uniform", {"low": -1.0, "high": 0.9}),
    ("Pareto", {"scale": 0.3, "alpha": 3.0}, "Pareto", PA),
    ("Pareto", {"scale": 1.0, "alpha": 0.9}, "Exponential", E),  # infinite mean
    ("Pareto", {"scale": 1.0, "alpha": 1.0}, "Gamma", G),
    ("Pareto", {"scale": 1.0, "alpha": 2.0}, "Normal", N),  # infinite variance
    ("Poisson", {"rate": 2.0}, "Bernoulli", {"probs": 0.5}),
    ("Poisson", {"rate": 2.0}, "Binomial", {"total_count": 30.0, "probs": 0.5}),
    ("Poisson", {"rate": 2.0}, "Poisson", {"rate": 0.0}),
    ("Binomial", {"total_count": 9.0, "probs": 0.5}, "Binomial", {"total_count": 5.0, "probs": 0.5}),
    ("Bernoulli", {"probs": 0.5}, "Bernoulli", {"probs": 0.0}),
    ("Bernoulli", {"probs": 0.5}, "Poisson", {"rate": 0.0}),
    ("Geometric", {"probs": 0.5}, "Geometric", {"probs": 1.0}),
    ("Categorical", {"probs": np.array([0.5, 0.5])}, "Categorical", {"probs": np.array([1.0, 0.0])}),
    ("Delta", {"v": -1.0, "log_density": 0.0}, "Gamma", G),
    ("Delta", {"v": 1.0, "log_density": 0.0}, "Delta", {"v": 2.0, "log_density": 0.0}),
]
# fmt: on

#: Pairs whose supports never nest, with valid parameters for each family.
ANY = {
    "Beta": B,
    "ContinuousBernoulli": CB,
    "Exponential": E,
    "Gamma": G,
    "Gumbel": GU,
    "Laplace": LA,
    "Normal": N,
    "Pareto": PA,
    "Uniform": U,
    "Chi2": {"df": 3.0},
}


@pytest.mark.parametrize("case", NOT_COVERED, ids=_case_id)
def test_support_not_covered_is_infinite(case) -> None:
    p, pp, q, qp = case
    assert float(_kl(p, pp, q, qp)) == INF


def test_pairs_whose_supports_never_nest_are_infinite() -> None:
    from conformance.reference.kl import continuous

    pairs = [
        (p, q) for p, q in kl_pairs() if kl_pair(p, q).function is continuous._support_not_covered
    ]
    assert len(pairs) >= 31
    for p, q in pairs:
        assert float(_kl(p, ANY[p], q, ANY[q])) == INF, (p, q)


def test_a_rate_zero_poisson_is_a_point_mass() -> None:
    """Poisson(0) puts all its mass at 0, which a Bernoulli or Binomial q covers."""
    assert float(_kl("Poisson", {"rate": 0.0}, "Bernoulli", {"probs": 0.3})) == pytest.approx(
        -np.log(0.7), rel=1e-15
    )
    found = _kl(
        "Poisson", {"rate": 0.0}, "Binomial", {"total_count": 4.0, "logits": 0.2}, None, "logits"
    )
    assert float(found) == pytest.approx(4 * np.log1p(np.exp(0.2)), rel=1e-14)
    assert float(_kl("Poisson", {"rate": 0.0}, "Poisson", {"rate": 2.5})) == 2.5


#: A point of every family that has a pair with itself (aliases included).
# fmt: off
SELF = {
    "Normal": N, "Gamma": G, "Exponential": E, "Beta": B, "Uniform": U, "Laplace": LA, "Gumbel": GU,
    "Pareto": PA, "HalfNormal": {"scale": 1.3}, "Cauchy": {"loc": 0.2, "scale": 3.0},
    "ContinuousBernoulli": CB, "Chi2": {"df": 3.0}, "Dirichlet": {"concentration": np.array([0.5, 2.0, 3.0])},
    "Bernoulli": {"probs": 0.3}, "Binomial": {"total_count": 5.0, "probs": 0.3}, "Poisson": {"rate": 2.0},
    "Geometric": {"probs": 0.3}, "Categorical": {"probs": np.array([0.2, 0.0, 0.8])},
    "OneHotCategorical": {"probs": np.array([0.2, 0.3, 0.5])},
    "OneHotCategoricalStraightThrough": {"probs": np.array([0.2, 0.3, 0.5])},
    "OrderedLogistic": {"predictor": 0.3, "cutpoints": np.array([-1.0, 0.5])},
    "MultivariateNormal": _mvn(3, "precision_matrix"), "LowRankMultivariateNormal": LOW_RANK,
    "Independent": {"loc": np.zeros(3), "scale": np.array([1.0, 2.0, 0.5])},
    "Wishart": {"df": 4.0, "covariance_matrix": _spd(3)},
    "ExpandedDistribution": {"loc": 0.2, "scale": 1.5, "expand_to": np.zeros((2, 3))},
    "MaskedDistribution": {"concentration": 2.0, "rate": 1.0, "mask": np.array([1.0, 0.0])},
    "Delta": {"v": 0.4, "log_density": 0.0},
}
# fmt: on
KEYS = {"MultivariateNormal": "precision_matrix"}


@pytest.mark.parametrize("name", sorted(n for n in SELF if (n, n) in kl_pairs()))
def test_kl_of_a_distribution_with_itself_is_zero(name) -> None:
    key = KEYS.get(name)
    found = _kl(name, SELF[name], name, SELF[name], key, key)
    np.testing.assert_allclose(found, 0.0, atol=1e-15)


@pytest.mark.parametrize(
    ("p", "pp", "q", "qp"),
    [
        ("Exponential", E, "Gamma", {"concentration": 1.0, "rate": 0.7}),
        ("Gamma", {"concentration": 1.0, "rate": 0.7}, "Exponential", E),
        ("Chi2", {"df": 2.0}, "Exponential", {"rate": 0.5}),
        (
            "Uniform",
            {"low": 0.0, "high": 1.0},
            "Beta",
            {"concentration1": 1.0, "concentration0": 1.0},
        ),
        (
            "Beta",
            {"concentration1": 1.0, "concentration0": 1.0},
            "Uniform",
            {"low": 0.0, "high": 1.0},
        ),
        ("Uniform", {"low": 0.0, "high": 1.0}, "ContinuousBernoulli", {"probs": 0.5}),
        ("ContinuousBernoulli", {"logits": 0.0}, "Uniform", {"low": 0.0, "high": 1.0}),
        (
            "Normal",
            {"loc": 0.2, "scale": 1.5},
            "ExpandedDistribution",
            SELF["ExpandedDistribution"],
        ),
        (
            "LowRankMultivariateNormal",
            LOW_RANK,
            "MultivariateNormal",
            {
                "loc": LOW_RANK["loc"],
                "covariance_matrix": LOW_RANK["cov_factor"] @ LOW_RANK["cov_factor"].T
                + np.diag(LOW_RANK["cov_diag"]),
            },
        ),
        (
            "Independent",
            {"loc": np.zeros(4), "scale": np.full(4, 1.5)},
            "CirculantNormal",
            {"loc": np.zeros(4), "covariance_row": np.array([2.25, 0.0, 0.0, 0.0])},
        ),
        (
            "Categorical",
            {"probs": np.array([0.2, 0.3, 0.5])},
            "Categorical",
            {"logits": np.log([0.4, 0.6, 1.0])},
        ),
    ],
    ids=lambda x: x if isinstance(x, str) else "",
)
def test_the_same_law_in_two_families_is_zero(p, pp, q, qp) -> None:
    pk = "logits" if "logits" in pp else None
    qk = "covariance_row" if q == "CirculantNormal" else ("logits" if "logits" in qp else None)
    np.testing.assert_allclose(_kl(p, pp, q, qp, pk, qk), 0.0, atol=2e-15)


@pytest.mark.parametrize(
    ("p", "pp", "q", "qp", "pk"),
    [
        ("Normal", {"loc": 0.0, "scale": np.array([1.0, -1.0, np.nan])}, "Normal", N, None),
        (
            "Uniform",
            {"low": np.array([0.0, 2.0]), "high": 1.0},
            "Uniform",
            {"low": -1.0, "high": 3.0},
            None,
        ),
        ("Gamma", G, "Exponential", {"rate": np.array([1.0, 0.0])}, None),
        (
            "Categorical",
            {"probs": np.array([[0.5, 0.5], [0.7, 0.7]])},
            "Categorical",
            {"probs": np.array([0.5, 0.5])},
            None,
        ),
        (
            "MultivariateNormal",
            {
                "loc": np.zeros(2),
                "covariance_matrix": np.array([np.eye(2), [[1.0, 2.0], [2.0, 1.0]]]),
            },
            "MultivariateNormal",
            {"loc": np.ones(2), "covariance_matrix": np.eye(2)},
            "covariance_matrix",
        ),
        (
            "MultivariateNormal",
            {"loc": np.zeros(2), "precision_matrix": np.array([np.eye(2), -np.eye(2)])},
            "LowRankMultivariateNormal",
            {"loc": np.ones(2), "cov_factor": np.ones((2, 1)), "cov_diag": np.ones(2)},
            "precision_matrix",
        ),
        (
            "Wishart",
            {"df": np.array([3.0, 0.5]), "covariance_matrix": np.eye(2)},
            "Wishart",
            {"df": 4.0, "covariance_matrix": np.eye(2)},
            None,
        ),
        (
            "Dirichlet",
            {"concentration": np.array([[1.0, 2.0], [1.0, -2.0]])},
            "Dirichlet",
            {"concentration": np.ones(2)},
            None,
        ),
        ("Chi2", {"df": np.array([3.0, -3.0])}, "Gamma", G, None),
    ],
    ids=lambda x: x if isinstance(x, str) else "",
)
def test_invalid_parameters_give_nan_only_where_they_are(p, pp, q, qp, pk) -> None:
    found = _kl(p, pp, q, qp, pk)
    assert np.isnan(found[-1]) and np.isfinite(found[0]), found


def test_wrappers() -> None:
    """NumPyro's: a Delta is log_density − log q(v); an ExpandedDistribution its base's KL
    broadcast; a MaskedDistribution scores only where both masks are on."""
    found = _kl("Delta", {"v": np.array([0.5, 3.0]), "log_density": 0.25}, "Normal", N)
    expected = 0.25 - get_family("Normal").log_prob(N, np.array([0.5, 3.0]))
    np.testing.assert_allclose(found, expected, rtol=1e-15)
    chi2 = _kl(
        "Delta",
        {"v": 0.0, "log_density": 0.0},
        "Chi2",
        {"df": 3.0},
        q_options={"support_lower": "open"},
    )
    assert float(chi2) == INF

    expanded = {"loc": np.array([0.0, 1.0]), "scale": 2.0, "expand_to": np.zeros((3, 2))}
    found = _kl(
        "ExpandedDistribution",
        expanded,
        "ExpandedDistribution",
        {"loc": 0.5, "scale": 1.0, "expand_to": np.zeros((3, 1))},
    )
    assert found.shape == (3, 2)
    np.testing.assert_allclose(
        found,
        np.broadcast_to(
            _kl(
                "Normal",
                {"loc": np.array([0.0, 1.0]), "scale": 2.0},
                "Normal",
                {"loc": 0.5, "scale": 1.0},
            ),
            (3, 2),
        ),
    )

    mp_, mq = np.array([1.0, 1.0, 0.0, 0.0]), np.array([1.0, 0.0, 1.0, 0.0])
    found = _kl(
        "MaskedDistribution",
        {"concentration": 2.0, "rate": 1.0, "mask": mp_},
        "MaskedDistribution",
        {"concentration": 3.0, "rate": 2.0, "mask": mq},
    )
    gamma = float(
        _kl(
            "Gamma",
            {"concentration": 2.0, "rate": 1.0},
            "Gamma",
            {"concentration": 3.0, "rate": 2.0},
        )
    )
    np.testing.assert_array_equal(found, [gamma, 0.0, 0.0, 0.0])


def test_errors_name_what_does_not_fit() -> None:
    with pytest.raises(OracleError, match="no KL"):
        _kl("Normal", N, "Cauchy", {"loc": 0.0, "scale": 1.0})
    with pytest.raises(OracleError, match="event size"):
        _kl(
            "MultivariateNormal",
            _mvn(2, "scale_tril"),
            "MultivariateNormal",
            _mvn(3, "scale_tril"),
            "scale_tril",
            "scale_tril",
        )
    with pytest.raises(OracleError, match="categories"):
        _kl(
            "Categorical", {"probs": np.array([0.5, 0.5])}, "Categorical", {"probs": np.ones(3) / 3}
        )
    with pytest.raises(OracleError, match="do not broadcast"):
        _kl(
            "Normal",
            {"loc": np.zeros(2), "scale": 1.0},
            "Normal",
            {"loc": np.zeros(3), "scale": 1.0},
        )


def test_every_pair_says_which_parametrizations_it_takes() -> None:
    for p, q in kl_pairs():
        pair = kl_pair(p, q)
        assert set(pair.p_parametrizations) <= set(get_family(p).parametrizations)
        assert set(pair.q_parametrizations) <= set(get_family(q).parametrizations)
    assert kl_pair("Chi2", "Exponential").via == ("Gamma", "Exponential")
    assert kl_pair("Beta", "Beta").p_parametrizations == ("concentrations", "mean_concentration")


# ----- the registry's file ------------------------------------------------------------------


def test_registry_file_names_exactly_the_oracles_pairs() -> None:
    """Every oracle pair a rule names exists, and every oracle pair answers for some rule."""
    rules = kl_rules()
    assert {fw: len(r) for fw, r in rules.items()} == {"torch": 87, "numpyro": 16, "gpytorch": 2}
    oracle = set(kl_pairs())
    named = set()
    for fw_rules in rules.values():
        for rule in fw_rules:
            for p, q in rule.oracle:
                pairs = {pq for pq in oracle if pq[0] == p} if q == "*" else {(p, q)}
                assert pairs and pairs <= oracle, (rule, p, q)
                named |= pairs
    assert named == oracle, sorted(oracle - named)
