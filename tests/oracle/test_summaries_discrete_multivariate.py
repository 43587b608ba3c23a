"""The summaries (mean, variance, stddev, mode, entropy) of the discrete and multivariate oracles
against independent references, family by family:

* scipy.stats to 1e-12 relative where scipy has the family (binom, poisson, nbinom, geom,
  betabinom, betanbinom, randint, bernoulli, multinomial, dirichlet, dirichlet_multinomial,
  multivariate_normal, wishart, invwishart; a multivariate Student t's coordinates by ``t``),
  at several parameter points at once (batched parameters), every parametrisation;
* elsewhere exact sums of the oracle's own pmf over the support (the zero-inflated and hurdle
  families, modes as argmaxes), and a discrete entropy as an explicit −Σ p·log p over a support
  truncated where the tail is below 1e-17;
* the conventions chosen where mathematics has two answers or none (a tied mode, a Categorical's
  mean) are pinned here, each with the framework that sets it.

Summaries are named by strings, as ``Family.summary`` takes them.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import mpmath
import numpy as np
import pytest
from scipy import integrate, linalg, special, stats

from conformance import reference

RTOL = 1e-12
MOMENTS = ("mean", "variance", "stddev")


def oracle(name: str, summary: str, params: dict[str, Any], par: str | None = None, **opts):
    return reference.get_family(name).summary(summary, params, par, opts or None)


def close(got: np.ndarray, want: Any, rtol: float = RTOL, atol: float = 0.0) -> None:
    want = np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


def logit(p: np.ndarray) -> np.ndarray:
    return np.log(p) - np.log1p(-p)


# ----- univariate discrete families against scipy -----------------------------------------------
P = np.array([0.02, 0.3, 0.5, 0.77, 0.999])
N = np.array([1.0, 7.0, 40.0, 3.0, 250.0])

#: Family → [(parametrization, params, scipy's frozen law)], each with several points at once.
SCIPY_DISCRETE: dict[str, list[tuple[str | None, dict[str, np.ndarray], Any]]] = {
    "Bernoulli": [
        ("probs", {"probs": P}, stats.bernoulli(P)),
        ("logits", {"logits": logit(P)}, stats.bernoulli(P)),
    ],
    "Binomial": [
        ("probs", {"total_count": N, "probs": P}, stats.binom(N, P)),
        ("logits", {"total_count": N, "logits": logit(P)}, stats.binom(N, P)),
        # batched: (2, 1) counts against (5,) probabilities
        ("probs", {"total_count": N[:2, None], "probs": P}, stats.binom(N[:2, None], P)),
    ],
    "Poisson": [(None, {"rate": np.array([0.0, 1e-3, 0.7, 12.5, 400.0])},
                 stats.poisson(np.array([0.0, 1e-3, 0.7, 12.5, 400.0])))],
    "Geometric": [
        ("probs", {"probs": P}, stats.geom(P, loc=-1)),
        ("logits", {"logits": logit(P)}, stats.geom(P, loc=-1)),
    ],
    # scipy's nbinom counts failures before n successes of probability 1 − probs.
    "NegativeBinomial": [
        ("probs", {"total_count": N + 0.5, "probs": P}, stats.nbinom(N + 0.5, 1 - P)),
        ("logits", {"total_count": N, "logits": logit(P)}, stats.nbinom(N, 1 - P)),
        ("concentration_rate", {"concentration": N, "rate": (1 - P) / P},
         stats.nbinom(N, 1 - P)),
        ("mean_concentration", {"mean": N * P / (1 - P), "concentration": N},
         stats.nbinom(N, 1 - P)),
    ],
    "BetaBinomial": [(None, {"concentration1": np.array([0.3, 2.0, 30.0, 1.0]),
                             "concentration0": np.array([4.0, 0.7, 10.0, 1.0]),
                             "total_count": np.array([5.0, 17.0, 100.0, 0.0])},
                      stats.betabinom(np.array([5, 17, 100, 0]), np.array([0.3, 2.0, 30.0, 1.0]),
                                      np.array([4.0, 0.7, 10.0, 1.0])))],
    # scipy's betanbinom(n, a, b) puts a on the failures' side: a = concentration0.
    "BetaNegativeBinomial": [(None, {"concentration1": np.array([0.5, 2.0, 30.0]),
                                     "concentration0": np.array([3.5, 2.7, 10.0]),
                                     "n": np.array([5.0, 2.0, 100.0])},
                              stats.betanbinom(np.array([5, 2, 100]), np.array([3.5, 2.7, 10.0]),
                                               np.array([0.5, 2.0, 30.0])))],
    "DiscreteUniform": [(None, {"low": np.array([-3.0, 0.0, 5.0]), "high": np.array([4.0, 0.0, 100.0])},
                         stats.randint(np.array([-3, 0, 5]), np.array([5, 1, 101])))],
}  # fmt: skip

SCIPY_DISCRETE_ITEMS = [
    (name, i, item) for name, items in SCIPY_DISCRETE.items() for i, item in enumerate(items)
]


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")  # scipy's own kurtosis
@pytest.mark.parametrize(
    ("family", "i", "item"),
    SCIPY_DISCRETE_ITEMS,
    ids=[f"{n}-{i}" for n, i, _ in SCIPY_DISCRETE_ITEMS],
)
def test_discrete_moments_match_scipy(family: str, i: int, item: tuple) -> None:
    par, params, frozen = item
    fam = reference.get_family(family)
    want = {"mean": frozen.mean(), "variance": frozen.var(), "stddev": frozen.std()}
    for summary in MOMENTS:
        if fam.has_summary(summary):
            close(oracle(family, summary, params, par), want[summary], atol=1e-300)


WITH_ENTROPY = [
    item for item in SCIPY_DISCRETE_ITEMS if reference.get_family(item[0]).has_summary("entropy")
]


@pytest.mark.parametrize(
    ("family", "i", "item"), WITH_ENTROPY, ids=[f"{n}-{i}" for n, i, _ in WITH_ENTROPY]
)
def test_discrete_entropy_matches_scipy(family: str, i: int, item: tuple) -> None:
    par, params, frozen = item
    close(oracle(family, "entropy", params, par), frozen.entropy(), rtol=1e-11, atol=1e-15)


def explicit_entropy(log_pmf: Callable[[np.ndarray], np.ndarray], support: np.ndarray) -> Any:
    """−Σ p·log p over ``support`` (axis 0), 0·log 0 = 0."""
    lp = log_pmf(support)
    with np.errstate(invalid="ignore"):
        return -np.where(np.isfinite(lp), np.exp(lp) * lp, 0.0).sum(0)


def test_binomial_entropy_is_the_explicit_sum() -> None:
    """Over the whole support {0..n} of the oracle's pmf (the entropy sums only a window about
    the mean); n up to 2000 and probabilities near the ends, where scipy's logpmf is 1.5e-12 off
    at p = 1e-6 (the oracle's sum agrees with mpmath to 1e-16 there)."""
    n = np.array([0.0, 1.0, 13.0, 600.0, 2000.0, 2000.0])
    p = np.array([0.4, 0.5, 1e-4, 0.5, 0.999, 1e-6])
    k = np.arange(2001.0)[:, None]
    binomial = reference.get_family("Binomial")
    for par, params in [
        ("probs", {"total_count": n, "probs": p}),
        ("logits", {"total_count": n, "logits": logit(p)}),
    ]:
        want = explicit_entropy(lambda k, ps=params, par=par: binomial.log_prob(ps, k, par), k)
        close(oracle("Binomial", "entropy", params, par), want, rtol=1e-13, atol=1e-300)
    at_mp = 0.01443060141492025  # mpmath, 40 digits
    close(oracle("Binomial", "entropy", {"total_count": n[-1], "probs": p[-1]}), at_mp)


def test_geometric_entropy_is_the_explicit_sum() -> None:
    """Summed until (1 − p)^k < 1e-17; from probs and from logits (exp(−l) far past overflow)."""
    p = np.array([0.003, 0.2, 0.5, 0.9, 1.0])
    k = np.arange(14000.0)[:, None]
    assert np.all((1 - p[:-1]) ** k[-1] < 1e-17)
    want = explicit_entropy(lambda k: stats.geom.logpmf(k + 1, p), k)
    close(oracle("Geometric", "entropy", {"probs": p}), want, rtol=1e-12)
    close(oracle("Geometric", "entropy", {"logits": logit(p[:-1])}, "logits"), want[:-1], 1e-12)
    # Far out: H → 1 + |l| − … as l → −∞ (mean e^(−l) failures), 0 as l → +∞.
    far = oracle("Geometric", "entropy", {"logits": np.array([-800.0, 800.0])}, "logits")
    close(far, [801.0, 0.0], atol=1e-300)


def test_bernoulli_entropy_is_the_two_term_sum() -> None:
    """−p·log p − q·log q at 40 digits, q = 1 − p from the probability or σ(−l) from the logit
    (p = σ(l), q = σ(−l) and their logs −log1p(e^∓l) each exact)."""
    p = np.array([0.0, 1e-12, 0.3, 0.5, 1.0 - 1e-9, 1.0])
    logits = np.array([-700.0, -30.0, 0.0, 2.0, 40.0])
    with mpmath.workdps(40):
        by_probs = [
            float(-sum(x * mpmath.log(x) for x in (mpmath.mpf(v), 1 - mpmath.mpf(v)) if x > 0))
            for v in p
        ]
        by_logits = [
            float(sum(mpmath.log1p(mpmath.exp(-t)) / (1 + mpmath.exp(-t)) for t in (x, -x)))
            for x in map(mpmath.mpf, logits)
        ]
    close(oracle("Bernoulli", "entropy", {"probs": p}), by_probs, atol=1e-300)
    close(oracle("Bernoulli", "entropy", {"logits": logits}, "logits"), by_logits, rtol=1e-14)


# ----- the families without scipy: exact sums of the oracle's pmf ---------------------------------
def counts_to(name: str, params: dict, par: str | None, top: int) -> np.ndarray:
    """{0..top} along a new first axis, before the batch's."""
    batch = reference.get_family(name).batch_shape(params, par)
    return np.arange(top + 1.0).reshape(-1, *([1] * len(batch)))


def pmf_moments(name: str, params: dict, par: str | None, top: int) -> tuple[np.ndarray, ...]:
    """Mean and variance from the oracle's pmf summed over {0..top} (axis 0 of the counts)."""
    k = counts_to(name, params, par, top)
    pmf = np.exp(reference.get_family(name).log_prob(params, k, par))
    assert np.allclose(pmf.sum(0), 1.0, rtol=0, atol=1e-13)
    mean = (pmf * k).sum(0)
    return mean, (pmf * (k - mean) ** 2).sum(0)


GATE = np.array([0.0, 0.2, 0.5, 0.97, 1e-9])
SUMMED: list[tuple[str, str, dict[str, np.ndarray], int]] = [
    ("ZeroInflatedPoisson", "gate", {"gate": GATE, "rate": np.array([0.3, 2.0, 1e-4, 30.0, 7.0])}, 200),
    ("ZeroInflatedPoisson", "gate_logits",
     {"gate_logits": np.array([-3.0, 0.0, 5.0]), "rate": np.array([[0.01], [4.0]])}, 60),
    ("ZeroInflatedBinomial", "gate",
     {"gate": GATE, "total_count": np.array([1.0, 10.0, 40.0, 3.0, 300.0]), "probs": P}, 300),
    ("ZeroInflatedBinomial", "gate_logits",
     {"gate_logits": np.array([-3.0, 0.0, 5.0]), "total_count": np.array(12.0), "probs": np.array(0.4)}, 12),
    ("HurdlePoisson", "gate", {"gate": GATE, "rate": np.array([1e-6, 0.3, 4.0, 50.0, 2.0])}, 200),
    ("HurdlePoisson", "gate_logits",
     {"gate_logits": np.array([-3.0, 0.0, 5.0]), "rate": np.array([[0.01], [9.0]])}, 80),
]  # fmt: skip


@pytest.mark.parametrize(
    ("family", "par", "params", "top"), SUMMED, ids=[f"{s[0]}-{s[1]}" for s in SUMMED]
)
def test_zero_inflated_and_hurdle_moments_are_the_pmf_sums(family, par, params, top) -> None:
    mean, var = pmf_moments(family, params, par, top)
    close(oracle(family, "mean", params, par), mean, rtol=1e-12)
    close(oracle(family, "variance", params, par), var, rtol=1e-11)


def test_beta_negative_binomial_moments_are_infinite_for_a_heavy_tail() -> None:
    """E[X] = +inf for β ≤ 1 and Var X = +inf for β ≤ 2 (NumPyro's +inf for β ≤ 1 too, where
    the mean is already infinite)."""
    params = {
        "concentration1": np.array([2.0, 2.0, 2.0, 2.0]),
        "concentration0": np.array([0.5, 1.0, 1.5, 2.0]),
        "n": np.array([3.0, 3.0, 3.0, 3.0]),
    }
    close(oracle("BetaNegativeBinomial", "mean", params)[:2], [np.inf, np.inf])
    close(oracle("BetaNegativeBinomial", "mean", params)[2:], [12.0, 6.0])
    close(oracle("BetaNegativeBinomial", "variance", params), np.full(4, np.inf))


def test_beta_negative_binomial_moments_at_a_real_n_are_the_pmf_sums() -> None:
    params = {"concentration1": np.array(1.5), "concentration0": np.array(9.0), "n": np.array(2.5)}
    mean, var = pmf_moments("BetaNegativeBinomial", params, None, 300_000)
    close(oracle("BetaNegativeBinomial", "mean", params), mean, rtol=1e-11)
    close(oracle("BetaNegativeBinomial", "variance", params), var, rtol=1e-9)


def test_delta_is_its_point_and_its_log_density() -> None:
    params = {"v": np.array([[1.5, -2.0, 0.0]]), "log_density": np.array([[0.0], [-1.5]])}
    close(oracle("Delta", "mean", params), np.broadcast_to(params["v"], (2, 3)))
    close(oracle("Delta", "variance", params), np.zeros((2, 3)))
    # −E[log p(X)] with log p(v) = log_density.
    close(oracle("Delta", "entropy", params), [[0.0] * 3, [1.5] * 3])


def test_labels_have_no_mean_categorical_and_ordered_logistic() -> None:
    """Torch and NumPyro return NaN for a Categorical's mean and variance (the categories are
    labels): categorical.py 122/135, discrete.py 744/753. NumPyro's OrderedLogistic inherits it."""
    probs = np.array([[0.2, 0.3, 0.5], [1.0, 0.0, 0.0]])
    for summary in MOMENTS:
        assert np.all(np.isnan(oracle("Categorical", summary, {"probs": probs})))
        got = oracle(
            "OrderedLogistic",
            summary,
            {"predictor": np.array([0.3, -1.0]), "cutpoints": np.array([-1.0, 0.0, 2.0])},
        )
        assert got.shape == (2,) and np.all(np.isnan(got))


# ----- modes --------------------------------------------------------------------------------------
def pmf_argmaxes(name: str, params: dict, par: str | None, top: int) -> list[set[int]]:
    """For every batch element, the counts in {0..top} of largest oracle pmf (within 1e-13)."""
    k = counts_to(name, params, par, top)
    lp = reference.get_family(name).log_prob(params, k, par).reshape(top + 1, -1)
    return [set(np.flatnonzero(col >= col.max() - 1e-13).tolist()) for col in lp.T]


MODES: list[tuple[str, str | None, dict[str, np.ndarray], int]] = [
    ("Binomial", "probs", {"total_count": np.array([0.0, 1.0, 3.0, 9.0, 10.0, 17.0, 5.0]),
                           "probs": np.array([0.5, 0.5, 0.5, 0.3, 1.0, 0.21, 0.0])}, 17),
    ("Binomial", "logits", {"total_count": np.array([3.0, 11.0, 40.0]),
                            "logits": np.array([0.0, -2.0, 1.3])}, 40),
    ("Poisson", None, {"rate": np.array([0.0, 0.4, 1.0, 3.0, 7.5, 20.0])}, 60),
    ("NegativeBinomial", "probs", {"total_count": np.array([0.0, 0.5, 1.0, 3.0, 3.0, 9.5]),
                                   "probs": np.array([0.4, 0.9, 0.9, 0.5, 0.8, 0.3])}, 200),
    ("NegativeBinomial", "logits", {"total_count": np.array([2.0, 5.0]),
                                    "logits": np.array([0.0, 1.0])}, 200),
    ("NegativeBinomial", "concentration_rate", {"concentration": np.array([3.0, 4.5]),
                                                "rate": np.array([1.0, 0.25])}, 200),
    ("NegativeBinomial", "mean_concentration", {"mean": np.array([0.0, 6.0, 7.0]),
                                                "concentration": np.array([2.0, 3.0, 2.0])}, 200),
    ("Geometric", "probs", {"probs": np.array([0.01, 0.5, 1.0])}, 50),
    ("Geometric", "logits", {"logits": np.array([-4.0, 0.0, 3.0])}, 50),
]  # fmt: skip


@pytest.mark.parametrize(
    ("family", "par", "params", "top"), MODES, ids=[f"{m[0]}-{m[1]}" for m in MODES]
)
def test_count_modes_are_the_pmf_argmax_the_larger_of_two(family, par, params, top) -> None:
    """Where two counts tie (Binomial's (n + 1)p, Poisson's λ, NegativeBinomial's (r − 1)p/(1 − p)
    a whole number) the larger: torch's ⌊·⌋ (binomial.py:115, poisson.py:44,
    negative_binomial.py:98), the only framework with these modes."""
    got = oracle(family, "mode", params, par).ravel()
    for mode, argmaxes in zip(got, pmf_argmaxes(family, params, par, top), strict=True):
        assert mode == max(argmaxes), (mode, argmaxes)


def test_count_modes_at_their_ties() -> None:
    # Binomial(3, ½): P(1) = P(2); Poisson(3): P(2) = P(3); NB(3, ½): P(1) = P(2).
    assert oracle("Binomial", "mode", {"total_count": np.array(3.0), "probs": np.array(0.5)}) == 2
    assert oracle("Poisson", "mode", {"rate": np.array(3.0)}) == 3
    nb = {"total_count": np.array(3.0), "probs": np.array(0.5)}
    assert oracle("NegativeBinomial", "mode", nb) == 2


def test_bernoulli_mode_is_undefined_at_one_half() -> None:
    """Torch's NaN at p = ½ (bernoulli.py:97), and from logits at 0."""
    got = oracle("Bernoulli", "mode", {"probs": np.array([0.0, 0.3, 0.5, 0.5000001, 1.0])})
    close(got, [0.0, 0.0, np.nan, 1.0, 1.0])
    got = oracle("Bernoulli", "mode", {"logits": np.array([-1e-300, 0.0, 1e-300])}, "logits")
    close(got, [0.0, np.nan, 1.0])


# ----- categories --------------------------------------------------------------------------------
WEIGHTS = np.array([[0.2, 0.3, 0.5, 0.0], [0.4, 0.1, 0.4, 0.1], [1.0, 0.0, 0.0, 0.0]])


@pytest.mark.parametrize(
    "family", ["Categorical", "OneHotCategorical", "OneHotCategoricalStraightThrough"]
)
def test_category_entropy_and_mode(family: str) -> None:
    """Entropy: the explicit sum, from probs (as given or normalised, the declared option) and
    from logits. Mode: the first of tied categories (torch's argmax, categorical.py:133)."""
    want = -special.xlogy(WEIGHTS, WEIGHTS).sum(-1)
    close(oracle(family, "entropy", {"probs": WEIGHTS}), want, atol=1e-300)
    off = (1.0 + 4e-7) * WEIGHTS  # off the simplex within its tolerance
    close(oracle(family, "entropy", {"probs": off}, normalize_probs=True), want, 1e-14)
    assert not np.allclose(oracle(family, "entropy", {"probs": off}), want, rtol=1e-9, atol=0)
    logits = np.log(WEIGHTS[:2, :3]) + 7.0
    q = WEIGHTS[:2, :3] / WEIGHTS[:2, :3].sum(-1, keepdims=True)
    close(oracle(family, "entropy", {"logits": logits}, "logits"), -(q * np.log(q)).sum(-1), 1e-14)
    mode = oracle(family, "mode", {"probs": WEIGHTS})
    index = np.array([2, 0, 0])
    if family == "Categorical":
        close(mode, index)
    else:
        close(mode, np.eye(4)[index])
        close(oracle(family, "mode", {"logits": logits}, "logits"), np.eye(3)[[2, 0]])


@pytest.mark.parametrize("family", ["OneHotCategorical", "OneHotCategoricalStraightThrough"])
def test_one_hot_moments_match_scipy(family: str) -> None:
    frozen = stats.multinomial(1, WEIGHTS)
    close(oracle(family, "mean", {"probs": WEIGHTS}), frozen.mean())
    close(oracle(family, "variance", {"probs": WEIGHTS}), np.diagonal(frozen.cov(), 0, -2, -1))
    # From logits: 1 − q of a dominant category is the others' sum, not a difference.
    logits = np.array([40.0, 0.0, -1.0])
    q = special.softmax(logits)
    got = oracle(family, "variance", {"logits": logits}, "logits")
    close(got, q * np.array([q[1] + q[2], 1 - q[1], 1 - q[2]]), rtol=1e-14)


def test_multinomial_matches_scipy() -> None:
    probs = np.array([[0.2, 0.3, 0.5], [0.9, 0.05, 0.05], [1.0, 0.0, 0.0]])
    for n in (0, 1, 6, 50):
        params = {"total_count": np.array(float(n)), "probs": probs}
        frozen = stats.multinomial(n, probs)
        close(oracle("Multinomial", "mean", params), frozen.mean())
        close(oracle("Multinomial", "variance", params), np.diagonal(frozen.cov(), 0, -2, -1))
        close(oracle("Multinomial", "entropy", params), frozen.entropy(), rtol=1e-12, atol=1e-14)
        by_logits = {"total_count": np.array(float(n)), "logits": np.log(probs[:2]) - 3.0}
        close(oracle("Multinomial", "entropy", by_logits, "logits"), frozen.entropy()[:2], 1e-11)


def test_multinomial_entropy_is_the_explicit_sum_over_every_count_vector() -> None:
    probs = np.array([0.15, 0.25, 0.6])
    n = 9
    counts = np.array([c for c in itertools.product(range(n + 1), repeat=3) if sum(c) == n], float)
    lp = stats.multinomial.logpmf(counts, n, probs)
    got = oracle("Multinomial", "entropy", {"total_count": np.array(float(n)), "probs": probs})
    close(got, -(np.exp(lp) * lp).sum(), rtol=1e-13)


# ----- Dirichlet and its compound ----------------------------------------------------------------
ALPHAS = np.array(
    [[0.5, 2.0, 3.0], [1.0, 1.0, 1.0], [1.0, 2.0, 5.0], [0.3, 0.2, 0.1], [1e3, 2e3, 5.0]]
)


def test_dirichlet_matches_scipy() -> None:
    for alpha in ALPHAS:
        frozen = stats.dirichlet(alpha)
        close(oracle("Dirichlet", "mean", {"concentration": alpha}), frozen.mean())
        close(oracle("Dirichlet", "variance", {"concentration": alpha}), frozen.var())
        close(oracle("Dirichlet", "entropy", {"concentration": alpha}), frozen.entropy(), 1e-12)
    batched = oracle("Dirichlet", "entropy", {"concentration": ALPHAS})
    close(batched, [stats.dirichlet(a).entropy() for a in ALPHAS], rtol=1e-12)


def test_dirichlet_mode_is_the_simplex_maximiser_or_undefined() -> None:
    """Unique where every α ≥ 1 and some α > 1; NaN where some α < 1 (unbounded towards a face;
    torch returns (α − 1)₊/Σ or a one-hot there, dirichlet.py:105-110) or all α = 1 (flat)."""
    modes = oracle("Dirichlet", "mode", {"concentration": ALPHAS})
    assert np.all(np.isnan(modes[[0, 1, 3]]))
    dirichlet = reference.get_family("Dirichlet")
    rng = np.random.default_rng(3)
    for alpha, mode in zip(ALPHAS[[2, 4]], modes[[2, 4]], strict=True):
        assert np.isclose(mode.sum(), 1.0, rtol=0, atol=1e-15)
        # Lagrange: (α_k − 1)/x_k is one constant over the coordinates with x_k > 0 …
        inside = mode > 0
        ratio = (alpha[inside] - 1) / mode[inside]
        np.testing.assert_allclose(ratio, ratio[0], rtol=1e-12)
        # … and every nearby point of the simplex is less likely.
        steps = rng.standard_normal((200, 3)) * 1e-4
        steps -= steps.mean(-1, keepdims=True)
        nearby = mode + steps
        nearby = nearby[np.all(nearby >= 0, axis=-1)]
        at_mode = dirichlet.log_prob({"concentration": alpha}, mode)
        assert np.all(dirichlet.log_prob({"concentration": alpha}, nearby) < at_mode)


def test_dirichlet_multinomial_matches_scipy() -> None:
    alpha = np.array([[0.5, 2.0, 3.0], [1.0, 2.0, 5.0], [40.0, 0.1, 7.0]])
    n = np.array([3.0, 10.0, 0.0])
    mean = oracle("DirichletMultinomial", "mean", {"concentration": alpha, "total_count": n})
    var = oracle("DirichletMultinomial", "variance", {"concentration": alpha, "total_count": n})
    for i in range(3):
        frozen = stats.dirichlet_multinomial(alpha[i], int(n[i]))
        close(mean[i], frozen.mean())
        close(var[i], np.diagonal(frozen.cov()), atol=1e-300)


# ----- Gaussians ---------------------------------------------------------------------------------
RNG = np.random.default_rng(20261129)
_A = RNG.standard_normal((3, 4, 4))
COV = _A @ np.swapaxes(_A, -1, -2) + 0.5 * np.eye(4)
TRIL = np.linalg.cholesky(COV)
PRECISION = np.linalg.inv(COV)
LOC = RNG.standard_normal((3, 4))


def mvn_reference(loc: np.ndarray, cov: np.ndarray) -> dict[str, np.ndarray]:
    """scipy's entropy and the covariance's diagonal, element by element of the batch."""
    flat_loc, flat_cov = loc.reshape(-1, loc.shape[-1]), cov.reshape(-1, *cov.shape[-2:])
    entropy = [
        stats.multivariate_normal(m, c).entropy() for m, c in zip(flat_loc, flat_cov, strict=True)
    ]
    return {
        "mean": loc,
        "mode": loc,
        "variance": np.diagonal(cov, 0, -2, -1),
        "stddev": np.sqrt(np.diagonal(cov, 0, -2, -1)),
        "entropy": np.reshape(entropy, loc.shape[:-1]),
    }


@pytest.mark.parametrize(
    ("par", "mat"),
    [("covariance_matrix", COV), ("scale_tril", TRIL), ("precision_matrix", PRECISION)],
)
def test_multivariate_normal_matches_scipy(par: str, mat: np.ndarray) -> None:
    want = mvn_reference(LOC, COV)
    for summary, value in want.items():
        close(oracle("MultivariateNormal", summary, {"loc": LOC, par: mat}, par), value, 1e-12)
    # batched: one matrix for two locations
    got = oracle("MultivariateNormal", "variance", {"loc": LOC[:2, None], par: mat[0]}, par)
    close(got, np.broadcast_to(np.diag(COV[0]), (2, 1, 4)), 1e-12)


def test_low_rank_multivariate_normal_matches_scipy() -> None:
    factor = RNG.standard_normal((3, 4, 2))
    diag = RNG.random((3, 4)) + 0.1
    cov = factor @ np.swapaxes(factor, -1, -2) + diag[..., None] * np.eye(4)
    params = {"loc": LOC, "cov_factor": factor, "cov_diag": diag}
    for summary, value in mvn_reference(LOC, cov).items():
        close(oracle("LowRankMultivariateNormal", summary, params), value, rtol=1e-12)


@pytest.mark.parametrize("par", ["interleaved", "non_interleaved"])
def test_multitask_multivariate_normal_matches_scipy(par: str) -> None:
    """The covariance's rows follow the layout: point-major (interleaved) or task-major."""
    a = RNG.standard_normal((2, 6, 6))
    cov = a @ np.swapaxes(a, -1, -2) + np.eye(6)
    mean = RNG.standard_normal((2, 3, 2))
    flat = mean.reshape(2, 6) if par == "interleaved" else np.swapaxes(mean, -1, -2).reshape(2, 6)
    want = mvn_reference(flat, cov)
    params = {"mean": mean, "covariance_matrix": cov}
    for summary, value in want.items():
        if summary != "entropy":
            value = (
                value.reshape(2, 3, 2)
                if par == "interleaved"
                else np.swapaxes(value.reshape(2, 2, 3), -1, -2)
            )
        close(oracle("MultitaskMultivariateNormal", summary, params, par), value, rtol=1e-12)


@pytest.mark.parametrize("par", ["covariance_row", "covariance_rfft"])
def test_circulant_normal_matches_scipy(par: str) -> None:
    row = np.array([[3.0, 1.0, 0.5, 0.2, 0.5, 1.0], [2.0, -0.4, 0.1, 0.3, 0.1, -0.4]])
    cov = np.stack([linalg.circulant(r) for r in row])
    loc = RNG.standard_normal((2, 6))
    mat = row if par == "covariance_row" else np.fft.rfft(row).real
    want = mvn_reference(loc, cov)
    for summary in ("mean", "variance", "stddev", "entropy"):
        got = oracle("CirculantNormal", summary, {"loc": loc, par: mat}, par)
        close(got, want[summary], rtol=1e-12)


def test_gaussian_random_walk_and_zero_sum_normal_are_their_gaussians() -> None:
    scale = np.array([0.5, 1.0, 3.0])
    t = np.arange(1, 6)
    walk = scale[:, None, None] ** 2 * np.minimum(t[:, None], t[None, :])
    params = {"scale": scale, "num_steps": np.array(5.0)}
    close(oracle("GaussianRandomWalk", "mean", params), np.zeros((3, 5)))
    close(oracle("GaussianRandomWalk", "variance", params), np.diagonal(walk, 0, -2, -1))
    zero_sum = scale[:, None, None] ** 2 * (np.eye(5) - 1.0 / 5)
    params = {"scale": scale, "event_size": np.array(5.0)}
    close(oracle("ZeroSumNormal", "mean", params), np.zeros((3, 5)))
    close(oracle("ZeroSumNormal", "variance", params), np.diagonal(zero_sum, 0, -2, -1))


def test_multivariate_student_t_coordinates_match_scipy_t() -> None:
    """Coordinate i is Student-t(ν, loc_i, √Σ_ii). ν ≤ 1: no mean (NaN; NumPyro returns +inf,
    continuous.py:3270-3276), and so no variance; 1 < ν ≤ 2: variance +inf."""
    df = np.array([0.5, 1.0, 1.5, 2.0, 2.5, 30.0])
    tril = np.broadcast_to(TRIL[0], (6, 4, 4))
    params = {"df": df, "loc": LOC[0], "scale_tril": tril}
    sd = np.sqrt(np.diag(COV[0]))
    marginal = stats.t(df[2:, None], LOC[0], sd)
    mean = oracle("MultivariateStudentT", "mean", params)
    var = oracle("MultivariateStudentT", "variance", params)
    assert np.all(np.isnan(mean[:2])) and np.all(np.isnan(var[:2]))
    close(mean[2:], marginal.mean())
    close(var[2:], marginal.var())
    # a scalar loc broadcast over the event
    got = oracle(
        "MultivariateStudentT", "mean", {"df": df[-1:], "loc": np.ones(1), "scale_tril": TRIL[:1]}
    )
    close(got, np.ones((1, 4)))


def test_independent_composes_the_normal() -> None:
    loc, scale = np.array([[-1.0, 0.0, 4.0]]), np.array([[1.0], [2.5]])
    frozen = stats.norm(loc, scale)
    params = {"loc": loc, "scale": scale}
    close(oracle("Independent", "mean", params), np.broadcast_to(loc, (2, 3)))
    close(oracle("Independent", "mode", params), np.broadcast_to(loc, (2, 3)))
    close(oracle("Independent", "variance", params), frozen.var())
    close(oracle("Independent", "stddev", params), frozen.std())
    close(oracle("Independent", "entropy", params), frozen.entropy().sum(-1))


@pytest.mark.parametrize("par", ["normal_logits", "normal_probs"])
def test_mixture_moments_are_the_integrals_of_its_density(par: str) -> None:
    """∫x·p and ∫(x − m)²·p of Σ_k w_k·N(loc_k, scale_k), by quadrature; probs given off the
    simplex are normalised only under the declared option (torch's Categorical)."""
    logits = np.array([[0.0, 1.0, 2.0], [3.0, 0.0, -1.0]])
    w = special.softmax(logits, axis=-1)
    loc, scale = np.array([-1.0, 0.0, 4.0]), np.array([[1.0, 2.0, 0.5]])
    weights = {"logits": logits} if par == "normal_logits" else {"probs": (1 + 4e-7) * w}
    params = {**weights, "loc": loc, "scale": scale}
    opts = {} if par == "normal_logits" else {"normalize_probs": True}
    for i in range(2):

        def density(x: float, i: int = i) -> float:
            return float((w[i] * stats.norm.pdf(x, loc, scale[0])).sum())

        m = integrate.quad(lambda x: x * density(x), -np.inf, np.inf, epsabs=1e-14)[0]
        v = integrate.quad(lambda x, m=m: (x - m) ** 2 * density(x), -np.inf, np.inf, epsabs=1e-14)[
            0
        ]
        close(oracle("MixtureSameFamily", "mean", params, par, **opts)[i], m, rtol=1e-10)
        close(oracle("MixtureSameFamily", "variance", params, par, **opts)[i], v, rtol=1e-10)
    if par == "normal_probs":  # as given, the weights' excess stays in the mean
        close(oracle("MixtureSameFamily", "mean", params, par), (1 + 4e-7) * (w * loc).sum(-1))


def test_location_only_families_give_their_location() -> None:
    """CAR and MatrixNormal (NumPyro has only their means), LKJ's identity (by symmetry)."""
    adj = np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    car = {"loc": np.array([[0.5], [1.0]]), "correlation": np.array([0.3, 0.9]),
           "conditional_precision": np.array(2.0), "adj_matrix": adj}  # fmt: skip
    close(oracle("CAR", "mean", car), np.broadcast_to([[0.5], [1.0]], (2, 3)))
    loc = RNG.standard_normal((2, 3, 2))
    mn = {"loc": loc, "scale_tril_row": TRIL[0, :3, :3], "scale_tril_column": np.eye(2)}
    close(oracle("MatrixNormal", "mean", mn), loc)
    lkj = {"dimension": np.array(3.0), "concentration": np.array([0.5, 1.0, 4.0])}
    close(oracle("LKJ", "mean", lkj), np.broadcast_to(np.eye(3), (3, 3, 3)))


def test_lkj_mean_off_the_diagonal_is_the_integral() -> None:
    """d = 2: C = [[1, r], [r, 1]], E[r] = ∫ r·p(r) dr over (−1, 1), p from the oracle."""
    lkj = reference.get_family("LKJ")
    eta = 2.5

    def density(r: float) -> float:
        c = np.array([[1.0, r], [r, 1.0]])
        return float(np.exp(lkj.log_prob({"dimension": 2.0, "concentration": eta}, c)))

    total = integrate.quad(density, -1, 1)[0]
    mean = integrate.quad(lambda r: r * density(r), -1, 1)[0] / total
    got = oracle("LKJ", "mean", {"dimension": np.array(2.0), "concentration": np.array(eta)})
    close(got, [[1.0, mean], [mean, 1.0]], atol=1e-13)


# ----- Wishart and its inverse -------------------------------------------------------------------
_W = RNG.standard_normal((3, 3, 3))
SCALE = _W @ np.swapaxes(_W, -1, -2) + np.eye(3)


def scipy_or_nan(value: Any, shape: tuple[int, ...]) -> np.ndarray:
    """scipy's answer, NaN where it returns None (no mode, no moment)."""
    return np.full(shape, np.nan) if value is None else np.broadcast_to(value, shape)


@pytest.mark.parametrize(
    ("par", "mat"),
    [("covariance_matrix", SCALE), ("scale_tril", np.linalg.cholesky(SCALE)),
     ("precision_matrix", np.linalg.inv(SCALE))],
)  # fmt: skip
def test_wishart_matches_scipy(par: str, mat: np.ndarray) -> None:
    """Mode (ν − p − 1)·Σ for ν > p + 1, else NaN (torch's NaN, wishart.py:223). At ν = p + 1
    the density is largest at X = 0, outside the support: scipy's mode is 0 there, the oracle's
    NaN."""
    df = np.array([2.5, 4.0, 4.5, 9.0])[:, None]  # batched against the three matrices
    params = {"df": df, par: mat}
    for summary, method, shape in [
        ("mean", "mean", (3, 3)),
        ("variance", "var", (3, 3)),
        ("mode", "mode", (3, 3)),
        ("entropy", "entropy", ()),
    ]:
        got = oracle("Wishart", summary, params, par)
        want = np.array(
            [
                [scipy_or_nan(getattr(stats.wishart(d, s), method)(), shape) for s in SCALE]
                for d in df[:, 0]
            ]
        )
        if summary == "mode":
            np.testing.assert_array_equal(want[1], 0.0)
            want[1] = np.nan
        close(got, want, rtol=1e-12)


@pytest.mark.parametrize(
    ("par", "mat"),
    [("scale_matrix", SCALE), ("scale_tril", np.linalg.cholesky(SCALE)),
     ("rate_matrix", np.linalg.inv(SCALE))],
)  # fmt: skip
def test_inverse_wishart_matches_scipy(par: str, mat: np.ndarray) -> None:
    """scipy's where it has a moment; where it has none, mathematics: for ν ≤ p + 1 the
    diagonal's mean is +inf and the rest's undefined (NaN), for p + 1 < ν ≤ p + 3 every
    variance +inf, below NaN. (NumPyro's NaN there is a declared convention,
    conformance/registry/summary_conventions.yaml.)"""
    df = np.array([2.5, 4.0, 5.5, 6.5, 11.0])[:, None]
    params = {"concentration": df, par: mat}
    p = 3
    for summary, method in [("mean", "mean"), ("variance", "var"), ("mode", "mode")]:
        got = oracle("InverseWishart", summary, params, par)
        want = np.array(
            [
                [scipy_or_nan(getattr(stats.invwishart(d, s), method)(), (3, 3)) for s in SCALE]
                for d in df[:, 0]
            ],
            dtype=float,
        )
        for row, d in enumerate(df[:, 0]):
            if summary == "mean" and d <= p + 1:
                want[row] = np.where(np.eye(p, dtype=bool), np.inf, np.nan)
            if summary == "variance" and p + 1 < d <= p + 3:
                want[row] = np.inf
        close(got, want, rtol=1e-12)


def test_cholesky_valued_families_do_not_inherit_the_matrix_summaries() -> None:
    """WishartCholesky and InverseWishartCholesky share their classes' formulas for log_prob, but
    their value is the factor L: X's summaries are not L's."""
    for name in ("WishartCholesky", "InverseWishartCholesky"):
        family = reference.get_family(name)
        assert not any(family.has_summary(s) for s in ("mean", "variance", "mode", "entropy"))


# ----- shapes and invalid parameters -------------------------------------------------------------
INVALID = [
    ("Binomial", None, {"total_count": np.array([3.0, 3.0]), "probs": np.array([0.5, 1.5])}),
    ("Dirichlet", None, {"concentration": np.array([[1.0, 2.0], [1.0, -1.0]])}),
    ("Multinomial", "logits", {"total_count": np.array(4.0), "logits": np.array([[0.0, 1.0], [0.0, np.inf]])}),
    ("Wishart", "covariance_matrix", {"df": np.array([4.5, 1.5]), "covariance_matrix": np.eye(3)}),
    ("InverseWishart", "scale_matrix", {"concentration": np.array([9.0, 1.0]), "scale_matrix": np.eye(3)}),
    ("MultivariateNormal", "covariance_matrix",
     {"loc": np.zeros(2), "covariance_matrix": np.array([np.eye(2), [[1.0, 2.0], [2.0, 1.0]]])}),
    ("LowRankMultivariateNormal", None,
     {"loc": np.zeros(2), "cov_factor": np.ones((2, 1)), "cov_diag": np.array([[1.0, 1.0], [1.0, -1.0]])}),
    ("HurdlePoisson", "gate", {"gate": np.array([0.5, 0.5]), "rate": np.array([1.0, -1.0])}),
]  # fmt: skip


@pytest.mark.parametrize(("family", "par", "params"), INVALID, ids=[i[0] for i in INVALID])
def test_an_invalid_element_is_nan_and_the_other_is_not(family, par, params) -> None:
    fam = reference.get_family(family)
    for summary in ("mean", "variance", "stddev", "mode", "entropy"):
        if fam.has_summary(summary):
            got = oracle(family, summary, params, par)
            assert got.shape[:1] == (2,)
            assert np.all(np.isfinite(got[0])) and np.all(np.isnan(got[1])), (summary, got)


def test_inverse_wishart_moments_are_scipys_then_infinite_then_undefined() -> None:
    """Ψ/(ν − p − 1) and its variance are scipy's where finite; below ν = p + 3 every entry's
    variance is +inf (the second moment diverges while the mean is finite), below ν = p + 1
    the diagonal's mean is +inf and the rest's undefined (NaN), and so is the variance."""
    family = reference.get_family("InverseWishart")
    psi = np.array([[2.0, 0.3], [0.3, 1.0]])

    def at(nu: float, summary: str) -> np.ndarray:
        params = {"concentration": np.array(nu), "scale_matrix": psi}
        return family.summary(summary, params, "scale_matrix")

    law = stats.invwishart(df=6.5, scale=psi)
    np.testing.assert_allclose(at(6.5, "mean"), law.mean(), rtol=1e-13)
    np.testing.assert_allclose(at(6.5, "variance"), law.var(), rtol=1e-13)
    # just above ν − p = 3 the finite formula is already huge in every entry: the limit is +inf
    assert np.all(at(5.0 + 1e-9, "variance") > 1e8)
    assert np.all(at(5.0, "variance") == np.inf)
    assert np.all(at(3.5, "variance") == np.inf)
    assert np.all(np.isfinite(at(3.5, "mean")))
    mean = at(2.5, "mean")
    assert np.all(np.diagonal(mean) == np.inf)
    assert np.isnan(mean[0, 1]) and np.isnan(mean[1, 0])
    assert np.all(np.isnan(at(2.5, "variance")))
