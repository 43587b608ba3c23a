"""The wrapper families against mpmath and scipy: hurdle and zero-inflated over a base, the
censored wrappers, folded, expanded, masked, MixtureGeneral, Delta and ImproperUniform. log_prob
and every closed-form partial derivative at random points (mpmath's from the definition, scipy's
from its own base distributions), normalisation, the edges of each parametrisation, and the
samplers' means."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import mpmath
import numpy as np
import pytest
from scipy import stats

from conformance import reference

mp = mpmath.mp
MpParams = dict[str, mpmath.mpf]


def _logu(rng: np.random.Generator, n: int, low: float, high: float) -> np.ndarray:
    return np.exp(rng.uniform(np.log(low), np.log(high), n))


def _gate_of(p: MpParams) -> mpmath.mpf:
    if "gate" in p:
        return p["gate"]
    return 1 / (1 + mp.exp(-p["gate_logits"]))


# ----- the definitions, in mpmath ------------------------------------------------------------
def mp_poisson(rate, k):
    return k * mp.log(rate) - rate - mp.loggamma(k + 1)


def mp_hurdle_poisson(p: MpParams, k):
    g = _gate_of(p)
    if k == 0:
        return mp.log(g)
    rate = p["rate"]
    return mp.log(1 - g) + mp_poisson(rate, k) - mp.log(1 - mp.exp(-rate))


def mp_gamma(a, rate, x):
    return a * mp.log(rate) + (a - 1) * mp.log(x) - rate * x - mp.loggamma(a)


def mp_hurdle_gamma(p: MpParams, x):
    g = _gate_of(p)
    if x == 0:
        return mp.log(g)
    return mp.log(1 - g) + mp_gamma(p["concentration"], p["rate"], x)


def mp_log_normal(loc, scale, x):
    z = (mp.log(x) - loc) / scale
    return -z * z / 2 - mp.log(scale) - mp.log(2 * mp.pi) / 2 - mp.log(x)


def mp_hurdle_log_normal(p: MpParams, x):
    g = _gate_of(p)
    if x == 0:
        return mp.log(g)
    return mp.log(1 - g) + mp_log_normal(p["loc"], p["scale"], x)


def mp_binomial(n, prob, k):
    return (
        mp.loggamma(n + 1)
        - mp.loggamma(k + 1)
        - mp.loggamma(n - k + 1)
        + k * mp.log(prob)
        + (n - k) * mp.log(1 - prob)
    )


def mp_zero_inflated_binomial(p: MpParams, k):
    g = _gate_of(p)
    base = mp.exp(mp_binomial(p["total_count"], p["probs"], k))
    return mp.log(g + (1 - g) * base) if k == 0 else mp.log((1 - g) * base)


def _base_logpdf(p: MpParams, x, base: str):
    if base == "log_normal":
        return mp_log_normal(p["loc"], p["scale"], x)
    z = (x - p["loc"]) / p["scale"]
    return -z * z / 2 - mp.log(p["scale"]) - mp.log(2 * mp.pi) / 2


def _base_cdf(p: MpParams, x, base: str):
    if base == "log_normal":
        return mp.ncdf((mp.log(x) - p["loc"]) / p["scale"]) if x > 0 else mpmath.mpf(0)
    return mp.ncdf((x - p["loc"]) / p["scale"])


def mp_censored(side: str, base: str):
    def log_prob(p: MpParams, x):
        if p["censored"] == 0:
            return _base_logpdf(p, x, base)
        cdf = _base_cdf(p, x, base)
        if side == "right":  # S(x) without 1 − F: the upper tail of z directly
            if base == "log_normal":
                return mp.log(mp.ncdf(-(mp.log(x) - p["loc"]) / p["scale"]))
            return mp.log(mp.ncdf(-(x - p["loc"]) / p["scale"]))
        return mp.log(cdf)

    return log_prob


def mp_folded(p: MpParams, x):
    def half(t):
        return _base_logpdf(p, t, "normal")

    return mp.log(mp.exp(half(x)) + mp.exp(half(-x)))


def mp_expanded(p: MpParams, x):
    return _base_logpdf(p, x, "normal")


def mp_masked(p: MpParams, x):
    return mp_gamma(p["concentration"], p["rate"], x) if p["mask"] == 1 else mpmath.mpf(0)


# ----- random points ----------------------------------------------------------------------------
def _gate_draw(rng, n, parametrization):
    if "logits" in parametrization:
        return {"gate_logits": rng.normal(0, 3, n)}
    return {"gate": rng.uniform(0.02, 0.98, n)}


def _hurdle_poisson_draw(rng, n, parametrization):
    p = {**_gate_draw(rng, n, parametrization), "rate": _logu(rng, n, 1e-3, 50)}
    k = np.maximum(rng.poisson(p["rate"]), rng.integers(0, 2, n)).astype(float)
    return p, k


def _hurdle_gamma_draw(rng, n, parametrization):
    p = {
        **_gate_draw(rng, n, parametrization),
        "concentration": _logu(rng, n, 0.2, 40),
        "rate": _logu(rng, n, 0.1, 10),
    }
    x = rng.gamma(p["concentration"], 1 / p["rate"])
    return p, np.where(rng.random(n) < 0.2, 0.0, x)


def _hurdle_log_normal_draw(rng, n, parametrization):
    p = {
        **_gate_draw(rng, n, parametrization),
        "loc": rng.normal(0, 2, n),
        "scale": _logu(rng, n, 0.1, 3),
    }
    x = np.exp(p["loc"] + p["scale"] * rng.normal(0, 1.5, n))
    return p, np.where(rng.random(n) < 0.2, 0.0, x)


def _zero_inflated_binomial_draw(rng, n, parametrization):
    p = {
        **_gate_draw(rng, n, parametrization),
        "total_count": rng.integers(0, 60, n).astype(float),
        "probs": rng.uniform(0.01, 0.99, n),
    }
    k = rng.binomial(p["total_count"].astype(int), p["probs"]).astype(float)
    return p, np.where(rng.random(n) < 0.3, 0.0, k)


def _censored_draw(base: str):
    def draw(rng, n, parametrization):
        p = {
            "loc": rng.normal(0, 2, n),
            "scale": _logu(rng, n, 0.1, 5),
            "censored": rng.integers(0, 2, n).astype(float),
        }
        t = p["loc"] + p["scale"] * rng.normal(0, 2.5, n)
        return p, (np.exp(t) if base == "log_normal" else t)

    return draw


def _folded_draw(rng, n, parametrization):
    p = {"loc": rng.normal(0, 3, n), "scale": _logu(rng, n, 0.1, 5)}
    return p, np.abs(p["loc"] + p["scale"] * rng.normal(0, 2, n))


def _expanded_draw(rng, n, parametrization):
    p = {"loc": rng.normal(0, 3, n), "scale": _logu(rng, n, 0.1, 5), "expand_to": np.zeros(n)}
    return p, p["loc"] + p["scale"] * rng.normal(0, 2, n)


def _masked_draw(rng, n, parametrization):
    p = {
        "concentration": _logu(rng, n, 0.2, 40),
        "rate": _logu(rng, n, 0.1, 10),
        "mask": rng.integers(0, 2, n).astype(float),
    }
    return p, rng.gamma(p["concentration"], 1 / p["rate"])


def _scipy_folded(p, x):
    return stats.foldnorm.logpdf(x, np.abs(p["loc"]) / p["scale"], scale=p["scale"])


def _scipy_expanded(p, x):
    return stats.norm.logpdf(x, p["loc"], p["scale"])


def _scipy_masked(p, x):
    lp = stats.gamma.logpdf(x, p["concentration"], scale=1 / p["rate"])
    return np.where(p["mask"] == 1, lp, 0.0)


@dataclass
class Spec:
    family: str
    parametrization: str
    mp_log_prob: Callable
    draw: Callable
    #: Parameters not differentiated (integers).
    fixed: tuple[str, ...] = ()
    discrete: bool = False
    scipy_log_prob: Callable | None = None
    extra: dict = field(default_factory=dict)


def _scipy_hurdle_poisson(p, k):
    g = p["gate"] if "gate" in p else 1 / (1 + np.exp(-p["gate_logits"]))
    rate = p["rate"]
    positive = np.log1p(-g) + stats.poisson.logpmf(k, rate) - np.log(-np.expm1(-rate))
    return np.where(k == 0, np.log(g), positive)


def _scipy_hurdle_gamma(p, x):
    g = p["gate"]
    positive = np.log1p(-g) + stats.gamma.logpdf(x, p["concentration"], scale=1 / p["rate"])
    return np.where(x == 0, np.log(g), positive)


def _scipy_hurdle_log_normal(p, x):
    g = p["gate"] if "gate" in p else 1 / (1 + np.exp(-p["gate_logits"]))
    with np.errstate(divide="ignore"):
        positive = np.log1p(-g) + stats.lognorm.logpdf(x, p["scale"], scale=np.exp(p["loc"]))
    return np.where(x == 0, np.log(g), positive)


def _scipy_zero_inflated_binomial(p, k):
    g = p["gate"] if "gate" in p else 1 / (1 + np.exp(-p["gate_logits"]))
    base = stats.binom.pmf(k, p["total_count"], p["probs"])
    return np.where(k == 0, np.log(g + (1 - g) * base), np.log1p(-g) + np.log(base))


def _scipy_censored(side: str, base: str):
    def log_prob(p, x):
        if base == "log_normal":
            law = stats.lognorm(p["scale"], scale=np.exp(p["loc"]))
        else:
            law = stats.norm(p["loc"], p["scale"])
        tail = law.logsf(x) if side == "right" else law.logcdf(x)
        return np.where(p["censored"] == 1, tail, law.logpdf(x))

    return log_prob


SPECS = [
    Spec("HurdlePoisson", "gate", mp_hurdle_poisson, _hurdle_poisson_draw, discrete=True,
         scipy_log_prob=_scipy_hurdle_poisson),
    Spec("HurdlePoisson", "gate_logits", mp_hurdle_poisson, _hurdle_poisson_draw, discrete=True,
         scipy_log_prob=_scipy_hurdle_poisson),
    Spec("HurdleGamma", "gate", mp_hurdle_gamma, _hurdle_gamma_draw,
         scipy_log_prob=_scipy_hurdle_gamma),
    Spec("HurdleGamma", "generic_gate", mp_hurdle_gamma, _hurdle_gamma_draw,
         scipy_log_prob=_scipy_hurdle_gamma),
    Spec("HurdleLogNormal", "gate", mp_hurdle_log_normal, _hurdle_log_normal_draw,
         scipy_log_prob=_scipy_hurdle_log_normal),
    Spec("HurdleLogNormal", "generic_gate_logits", mp_hurdle_log_normal, _hurdle_log_normal_draw,
         scipy_log_prob=_scipy_hurdle_log_normal),
    Spec("ZeroInflatedBinomial", "gate", mp_zero_inflated_binomial, _zero_inflated_binomial_draw,
         fixed=("total_count",), discrete=True, scipy_log_prob=_scipy_zero_inflated_binomial),
    Spec("ZeroInflatedBinomial", "gate_logits", mp_zero_inflated_binomial,
         _zero_inflated_binomial_draw, fixed=("total_count",), discrete=True,
         scipy_log_prob=_scipy_zero_inflated_binomial),
    *(
        Spec(f"{side.title()}CensoredDistribution", base, mp_censored(side, base),
             _censored_draw(base), fixed=("censored",),
             scipy_log_prob=_scipy_censored(side, base))
        for side in ("left", "right")
        for base in ("normal", "log_normal")
    ),
    Spec("FoldedDistribution", "normal", mp_folded, _folded_draw,
         scipy_log_prob=_scipy_folded),
    Spec("ExpandedDistribution", "normal", mp_expanded, _expanded_draw, fixed=("expand_to",),
         scipy_log_prob=_scipy_expanded),
    Spec("MaskedDistribution", "gamma", mp_masked, _masked_draw, fixed=("mask",),
         scipy_log_prob=_scipy_masked),
]  # fmt: skip
IDS = [f"{s.family}-{s.parametrization}" for s in SPECS]


def _mp_point(params: dict[str, np.ndarray], i: int) -> MpParams:
    return {k: mpmath.mpf(float(v[i])) for k, v in params.items()}


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_log_prob_and_gradients_match_mpmath(spec: Spec) -> None:
    family = reference.get_family(spec.family)
    params, x = spec.draw(np.random.default_rng(11), 40, spec.parametrization)
    got = family.log_prob(params, x, spec.parametrization)
    grads = family.elementwise_grad(params, x, spec.parametrization)
    with mp.workdps(40):
        for i in range(len(x)):
            point, xi = _mp_point(params, i), mpmath.mpf(float(x[i]))
            exact = spec.mp_log_prob(point, xi)
            assert got[i] == pytest.approx(float(exact), rel=1e-12, abs=1e-12), (i, point, xi)
            wrt = [k for k in params if k not in spec.fixed]
            if not spec.discrete and xi != 0:
                wrt.append("value")
            for name in wrt:

                def along(t, name=name, point=point, xi=xi):
                    if name == "value":
                        return spec.mp_log_prob(point, t)
                    return spec.mp_log_prob({**point, name: t}, xi)

                at = xi if name == "value" else point[name]
                d = float(mp.diff(along, at))
                assert grads[name][i] == pytest.approx(d, rel=1e-9, abs=1e-9), (name, i, point, xi)


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_log_prob_matches_scipy(spec: Spec) -> None:
    family = reference.get_family(spec.family)
    params, x = spec.draw(np.random.default_rng(12), 200, spec.parametrization)
    got = family.log_prob(params, x, spec.parametrization)
    np.testing.assert_allclose(got, spec.scipy_log_prob(params, x), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize(
    ("name", "params", "parametrization"),
    [
        ("HurdlePoisson", {"gate": 0.3, "rate": 2.5}, "gate"),
        ("HurdlePoisson", {"gate_logits": -1.2, "rate": 1e-4}, "gate_logits"),
        ("ZeroInflatedBinomial", {"gate": 0.3, "total_count": 12.0, "probs": 0.7}, "gate"),
        ("ZeroInflatedBinomial", {"gate_logits": 2.0, "total_count": 5.0, "probs": 0.1}, "gate_logits"),
    ],
)  # fmt: skip
def test_discrete_families_sum_to_one(name, params, parametrization) -> None:
    family = reference.get_family(name)
    k = np.arange(0.0, 200.0)
    total = np.exp(family.log_prob(params, k, parametrization)).sum()
    assert total == pytest.approx(1.0, abs=1e-13)


@pytest.mark.parametrize(
    ("name", "params", "parametrization", "mp_log_prob"),
    [
        ("HurdleGamma", {"gate": 0.3, "concentration": 2.5, "rate": 1.5}, "gate", mp_hurdle_gamma),
        ("HurdleGamma", {"gate": 0.7, "concentration": 0.4, "rate": 3.0}, "generic_gate",
         mp_hurdle_gamma),
        ("HurdleLogNormal", {"gate_logits": -0.5, "loc": 0.3, "scale": 0.8},
         "generic_gate_logits", mp_hurdle_log_normal),
    ],
)  # fmt: skip
def test_hurdles_atom_and_density_sum_to_one(name, params, parametrization, mp_log_prob) -> None:
    """The mass g at 0 and the density's integral over (0, ∞) make 1; the oracle agrees."""
    family = reference.get_family(name)
    with mp.workdps(30):
        p = {k: mpmath.mpf(v) for k, v in params.items()}
        atom = mp.exp(mp_log_prob(p, mpmath.mpf(0)))
        rest = mp.quad(lambda t: mp.exp(mp_log_prob(p, t)), [0, 1, mp.inf])
        assert float(atom + rest) == pytest.approx(1.0, abs=1e-12)
    assert family.log_prob(params, 0.0, parametrization) == pytest.approx(float(mp.log(atom)))


def test_edges_of_the_gates_and_supports() -> None:
    hp = reference.get_family("HurdlePoisson")
    assert hp.log_prob({"gate": 0.0, "rate": 2.0}, 0.0) == -np.inf
    assert hp.log_prob({"gate": 1.0, "rate": 2.0}, 0.0) == 0.0
    assert hp.log_prob({"gate": 1.0, "rate": 2.0}, 3.0) == -np.inf
    assert hp.elementwise_grad({"gate": 0.0, "rate": 2.0}, 3.0)["gate"] == -1.0
    # λ = 1e-6: P(1 | k ≥ 1) = λe^{-λ}/(1 − e^{-λ}) = 1 − λ/2 + O(λ²)
    lp = hp.log_prob({"gate": 0.0, "rate": 1e-6}, 1.0)
    assert lp == pytest.approx(-0.5e-6, rel=1e-6)
    assert np.all(hp.log_prob({"gate": 0.3, "rate": 2.0}, [-1.0, 1.5]) == -np.inf)
    assert np.isnan(hp.log_prob({"gate": 0.3, "rate": 0.0}, 1.0))
    hg = reference.get_family("HurdleGamma")
    at_zero = hg.elementwise_grad({"gate": 0.3, "concentration": 2.0, "rate": 1.0}, 0.0)
    assert np.isnan(at_zero["value"]) and at_zero["concentration"] == 0.0
    assert at_zero["gate"] == pytest.approx(1 / 0.3)
    assert hg.log_prob({"gate": 0.3, "concentration": 2.0, "rate": 1.0}, -1e-6) == -np.inf
    hl = reference.get_family("HurdleLogNormal")
    lp = hl.log_prob({"gate_logits": -800.0, "loc": 0.0, "scale": 1.0}, 0.0, "generic_gate_logits")
    assert lp == -800.0
    zib = reference.get_family("ZeroInflatedBinomial")
    p = {"gate": 0.0, "total_count": 150.0, "probs": 0.9}
    assert zib.log_prob(p, 0.0) == pytest.approx(150 * np.log(0.1), rel=1e-14)
    assert zib.log_prob(p, 151.0) == -np.inf
    assert zib.log_prob({"gate": 0.3, "total_count": 5.0, "probs": 1.0}, 5.0) == pytest.approx(
        np.log(0.7)
    )


@pytest.mark.parametrize(
    ("name", "params", "parametrization", "mean"),
    [
        ("HurdlePoisson", {"gate": 0.3, "rate": 0.5}, "gate", 0.7 * 0.5 / -np.expm1(-0.5)),
        ("HurdleGamma", {"gate": 0.4, "concentration": 3.0, "rate": 2.0}, "gate", 0.6 * 1.5),
        ("HurdleLogNormal", {"gate_logits": 0.0, "loc": 0.2, "scale": 0.5}, "generic_gate_logits",
         0.5 * np.exp(0.2 + 0.125)),
        ("ZeroInflatedBinomial", {"gate": 0.2, "total_count": 10.0, "probs": 0.3}, "gate", 0.8 * 3),
    ],
)  # fmt: skip
def test_samplers_have_the_right_mean(name, params, parametrization, mean) -> None:
    family = reference.get_family(name)
    draws = family.sample(params, (200_000,), np.random.default_rng(3), parametrization)
    assert draws.mean() == pytest.approx(mean, rel=0.02)
    assert np.all(family.in_support(params, draws, parametrization))


def mp_interval_censored(p: MpParams, lower, upper):
    loc, scale = p["loc"], p["scale"]
    left, right = p["left_censored"] == 1, p["right_censored"] == 1
    cdf = lambda x: mp.ncdf((x - loc) / scale)  # noqa: E731
    if left and not right:
        return mp.log(cdf(upper))
    if right and not left:
        return mp.log(mp.ncdf(-(lower - loc) / scale))
    if lower == upper and not left:
        return _base_logpdf(p, lower, "normal")
    inside = mp.quad(lambda t: mp.npdf(t, loc, scale), [lower, upper])
    return mp.log(1 - inside) if left else mp.log(inside)


def test_interval_censored_matches_mpmath() -> None:
    family = reference.get_family("IntervalCensoredDistribution")
    rng = np.random.default_rng(21)
    n = 40
    params = {
        "loc": rng.normal(0, 2, n),
        "scale": _logu(rng, n, 0.1, 5),
        "left_censored": rng.integers(0, 2, n).astype(float),
        "right_censored": rng.integers(0, 2, n).astype(float),
    }
    value = family.sample(params, (), rng)
    width = np.where(rng.random(n) < 0.2, 1e-4, 1.0) * (value[:, 1] - value[:, 0])
    value[:, 1] = value[:, 0] + width
    value[:5, 1] = value[:5, 0]  # exact observations where neither flag is set
    got = family.log_prob(params, value)
    grads = family.elementwise_grad(params, value)
    with mp.workdps(40):
        for i in range(n):
            point = _mp_point(params, i)
            lo, up = (mpmath.mpf(float(v)) for v in value[i])
            exact = mp_interval_censored(point, lo, up)
            assert got[i] == pytest.approx(float(exact), rel=1e-12, abs=1e-12), (i, point)
            exact_obs = lo == up and point["left_censored"] == point["right_censored"] == 0
            for name in ("loc", "scale", "lower", "upper"):
                if name in ("lower", "upper") and exact_obs:
                    assert np.isnan(grads["value"][i, int(name == "upper")])
                    continue

                def along(t, name=name, point=point, lo=lo, up=up):
                    if name == "lower":
                        return mp_interval_censored(point, t, up)
                    if name == "upper":
                        return mp_interval_censored(point, lo, t)
                    return mp_interval_censored({**point, name: t}, lo, up)

                at = {"lower": lo, "upper": up}.get(name, point.get(name))
                d = float(mp.diff(along, at))
                got_d = (
                    grads["value"][i, int(name == "upper")]
                    if name in ("lower", "upper")
                    else grads[name][i]
                )
                assert got_d == pytest.approx(d, rel=1e-8, abs=1e-10), (name, i, point, lo, up)


def test_interval_censored_kinds_of_rows_add_up() -> None:
    """F(u) + (F(v) − F(u)) + S(v) = 1, and a pair's outside is 1 minus its inside."""
    family = reference.get_family("IntervalCensoredDistribution")
    base = {"loc": 0.3, "scale": 1.7}
    u, v = -0.4, 2.2
    flags = {"left_censored": [1.0, 0.0, 0.0, 1.0], "right_censored": [0.0, 0.0, 1.0, 1.0]}
    pairs = [[u - 5.0, u], [u, v], [v, v + 5.0], [u, v]]
    lp = np.exp(family.log_prob({**base, **flags}, pairs))
    assert lp[0] + lp[1] + lp[2] == pytest.approx(1.0, abs=1e-15)
    assert lp[3] == pytest.approx(1.0 - lp[1], abs=1e-15)
    empty = family.log_prob({**base, "left_censored": 0.0, "right_censored": 0.0}, [1.0, 0.5])
    assert empty == -np.inf
    assert np.isnan(family.log_prob({**base, "left_censored": 0.5, "right_censored": 0.0}, [0, 1]))


def test_censored_families_far_tails() -> None:
    """log F and log S far out, where 1 − F is lost: log Φ(−40) = −804.6."""
    left = reference.get_family("LeftCensoredDistribution")
    right = reference.get_family("RightCensoredDistribution")
    p = {"loc": 0.0, "scale": 1.0, "censored": 1.0}
    assert left.log_prob(p, -40.0, "normal") == pytest.approx(stats.norm.logcdf(-40.0), rel=1e-14)
    assert right.log_prob(p, 40.0, "normal") == pytest.approx(stats.norm.logsf(40.0), rel=1e-14)
    assert right.log_prob(p, -40.0, "log_normal") == -np.inf
    assert left.log_prob(p, 0.0, "log_normal") == -np.inf
    grad = right.elementwise_grad(p, 40.0, "normal")["value"]
    assert grad == pytest.approx(-40.02498, rel=1e-6)  # −φ/S ≈ −(z + 1/z)


def mp_mixture_general(w, p: MpParams, x):
    """log Σ_k w_k f_k(x) with w the normalised weights (mpf list)."""
    zn = (x - p["normal_loc"]) / p["normal_scale"]
    zc = (x - p["cauchy_loc"]) / p["cauchy_scale"]
    f_n = mp.exp(-zn * zn / 2) / (p["normal_scale"] * mp.sqrt(2 * mp.pi))
    f_c = 1 / (mp.pi * p["cauchy_scale"] * (1 + zc * zc))
    return mp.log(w[0] * f_n + w[1] * f_c)


@pytest.mark.parametrize("parametrization", ["logits", "probs"])
def test_mixture_general_matches_mpmath(parametrization: str) -> None:
    family = reference.get_family("MixtureGeneral")
    rng = np.random.default_rng(31)
    n = 30
    params = {
        "normal_loc": rng.normal(0, 2, n),
        "normal_scale": _logu(rng, n, 0.1, 5),
        "cauchy_loc": rng.normal(0, 2, n),
        "cauchy_scale": _logu(rng, n, 0.1, 5),
    }
    if parametrization == "logits":
        params["logits"] = rng.normal(0, 2, (n, 2))
    else:
        params["probs"] = rng.dirichlet([1.0, 1.0], n)
    x = rng.normal(0, 4, n)
    options = {"normalize_probs": True}
    got = family.log_prob(params, x, parametrization, options)
    grads = family.elementwise_grad(params, x, parametrization, options)
    scalars = ["normal_loc", "normal_scale", "cauchy_loc", "cauchy_scale"]
    with mp.workdps(40):
        for i in range(n):
            p = {k: mpmath.mpf(float(params[k][i])) for k in scalars}
            raw = [mpmath.mpf(float(v)) for v in params[parametrization][i]]

            def weights(raw):
                if parametrization == "logits":
                    e = [mp.exp(r) for r in raw]
                    return [v / sum(e) for v in e]
                return [v / sum(raw) for v in raw]

            xi = mpmath.mpf(float(x[i]))
            assert got[i] == pytest.approx(
                float(mp_mixture_general(weights(raw), p, xi)), rel=1e-12
            )
            for name in [*scalars, "value"]:

                def along(t, name=name, p=p, raw=raw, xi=xi):
                    if name == "value":
                        return mp_mixture_general(weights(raw), p, t)
                    return mp_mixture_general(weights(raw), {**p, name: t}, xi)

                d = float(mp.diff(along, xi if name == "value" else p[name]))
                assert grads[name][i] == pytest.approx(d, rel=1e-9, abs=1e-12), (name, i)
            for k in range(2):

                def along_w(t, k=k, p=p, raw=raw, xi=xi):
                    moved = list(raw)
                    moved[k] = t
                    return mp_mixture_general(weights(moved), p, xi)

                d = float(mp.diff(along_w, raw[k]))
                assert grads[parametrization][i, k] == pytest.approx(d, rel=1e-9, abs=1e-12)


def test_mixture_general_vs_scipy_and_normalised() -> None:
    family = reference.get_family("MixtureGeneral")
    p = {"probs": [0.3, 0.7], "normal_loc": -1.0, "normal_scale": 0.5,
         "cauchy_loc": 2.0, "cauchy_scale": 1.5}  # fmt: skip
    x = np.linspace(-50, 50, 7)
    want = np.log(0.3 * stats.norm.pdf(x, -1, 0.5) + 0.7 * stats.cauchy.pdf(x, 2, 1.5))
    np.testing.assert_allclose(family.log_prob(p, x, "probs"), want, rtol=1e-13)
    with mp.workdps(20):
        total = mp.quad(
            lambda t: mp.exp(float(family.log_prob(p, float(t), "probs"))), [-mp.inf, -1, 2, mp.inf]
        )
    assert float(total) == pytest.approx(1.0, abs=1e-9)


def test_folded_normalised_and_its_ends() -> None:
    family = reference.get_family("FoldedDistribution")
    p = {"loc": 0.7, "scale": 1.3}
    with mp.workdps(20):
        total = mp.quad(lambda t: mp.exp(float(family.log_prob(p, float(t)))), [0, 0.7, mp.inf])
    assert float(total) == pytest.approx(1.0, abs=1e-10)
    at_zero = family.log_prob(p, 0.0)
    assert at_zero == pytest.approx(np.log(2 * stats.norm.pdf(0.7 / 1.3) / 1.3), rel=1e-14)
    assert family.log_prob(p, 0.0, options={"support_lower": "open"}) == -np.inf
    assert family.log_prob(p, -1e-9) == -np.inf
    far = family.log_prob({"loc": 30.0, "scale": 1.0}, 29.0)
    assert far == pytest.approx(stats.norm.logpdf(29.0, 30.0), rel=1e-14)


def test_expanded_broadcasts_and_rejects_a_base_larger_than_its_target() -> None:
    family = reference.get_family("ExpandedDistribution")
    p = {"loc": np.zeros((3, 1)), "scale": np.ones(4), "expand_to": np.zeros((2, 3, 4))}
    assert family.batch_shape(p) == (2, 3, 4)
    grads = family.grad(p, np.zeros((2, 3, 4)), np.ones((2, 3, 4)))
    assert grads["loc"].shape == (3, 1) and grads["scale"].shape == (4,)
    with pytest.raises(reference.OracleError):
        family.event_shape({"loc": np.zeros(5), "scale": 1.0, "expand_to": np.zeros(3)})
    with pytest.raises(reference.OracleError):
        family.event_shape({"loc": np.zeros((2, 3)), "scale": 1.0, "expand_to": np.zeros(3)})


def test_masked_scores_zero_where_masked_whatever_the_value() -> None:
    family = reference.get_family("MaskedDistribution")
    p = {"concentration": 2.0, "rate": 1.5, "mask": np.array([0.0, 0.0, 1.0, 1.0])}
    x = np.array([-1.0, 0.0, -1.0, 1.2])
    lp = family.log_prob(p, x)
    assert lp[0] == 0.0 and lp[1] == 0.0 and lp[2] == -np.inf
    assert lp[3] == pytest.approx(stats.gamma.logpdf(1.2, 2.0, scale=1 / 1.5), rel=1e-14)
    grads = family.elementwise_grad(p, np.array([1.0, 2.0, 3.0, 1.2]))
    assert np.all(grads["concentration"][:2] == 0) and np.all(grads["value"][:2] == 0)
    assert family.log_prob(p, np.zeros(4), options={"support_lower": "open"})[2] == -np.inf
    assert np.isnan(family.log_prob({**p, "mask": 0.5}, 1.0))


def test_delta_and_improper_uniform() -> None:
    delta = reference.get_family("Delta")
    lp = delta.log_prob({"v": 1.5, "log_density": -2.0}, np.array([1.5, 1.5000001, -1.5]))
    assert lp[0] == -2.0 and np.all(lp[1:] == -np.inf)
    assert delta.elementwise_grad({"v": 1.5, "log_density": 0.3}, 1.5)["log_density"] == 1.0
    assert delta.batch_shape({"v": np.zeros((1, 4)), "log_density": np.zeros((3, 1))}) == (3, 4)
    draws = delta.sample(
        {"v": np.array([1.0, 2.0]), "log_density": 0.0}, (3,), np.random.default_rng(0)
    )
    assert np.all(draws == [1.0, 2.0])
    improper = reference.get_family("ImproperUniform")
    lp = improper.log_prob({"low": 0.5}, np.array([0.5, 0.5000001, 1e30, -3.0]))
    assert list(lp) == [-np.inf, 0.0, 0.0, -np.inf]
    g = improper.elementwise_grad({"low": 0.5}, np.array([1.0, 2.0]))
    assert np.all(g["low"] == 0) and np.all(g["value"] == 0)
    draws = improper.sample({"low": np.array([-1.0, 3.0])}, (100,), np.random.default_rng(1))
    assert np.all(improper.in_support({"low": np.array([-1.0, 3.0])}, draws))


def test_every_family_of_this_part_is_registered_and_checked() -> None:
    wanted = {
        "HurdlePoisson", "HurdleGamma", "HurdleLogNormal", "ZeroInflatedBinomial",
        "LeftCensoredDistribution", "RightCensoredDistribution", "IntervalCensoredDistribution",
        "FoldedDistribution", "ExpandedDistribution", "MaskedDistribution", "MixtureGeneral",
        "Delta", "ImproperUniform",
    }  # fmt: skip
    assert wanted <= set(reference.family_names())
    #: Families whose parametrizations have tests of their own (a value that is not a scalar).
    elsewhere = {
        "IntervalCensoredDistribution": {"normal"},
        "MixtureGeneral": {"logits", "probs"},
        "Delta": {"v_log_density"},
        "ImproperUniform": {"greater_than"},
    }
    for name in wanted:
        checked = {s.parametrization for s in SPECS if s.family == name}
        checked |= elsewhere.get(name, set())
        assert checked == set(reference.get_family(name).parametrizations), name
