"""Oracle gradients: closed forms vs mpmath at 40 digits, vs the Richardson fallback that
families without closed forms use, and the VJP's batch semantics vs an explicit loop."""

from __future__ import annotations

import itertools

import mpmath
import numpy as np
import pytest

from conformance import reference
from conformance.cases.generators import cholesky, normal, positive, probability, spd

mpmath.mp.dps = 40
NORMAL = reference.get_family("Normal")
BERNOULLI = reference.get_family("Bernoulli")
MVN = reference.get_family("MultivariateNormal")


def rel_err(a, b) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300)))


def mp_normal(loc, scale, x):
    z = (x - loc) / scale
    return -z * z / 2 - mpmath.log(scale) - mpmath.log(2 * mpmath.pi) / 2


def test_normal_closed_form_vs_mpmath_and_richardson() -> None:
    loc, scale, x = normal((6,), 1), positive((6,), 2, low=0.01, high=50), normal((6,), 3, scale=5)
    closed = NORMAL.elementwise_grad({"loc": loc, "scale": scale}, x)
    b = NORMAL.broadcast({"loc": loc, "scale": scale}, x, "loc_scale")
    numeric = NORMAL._numeric_grad(b, "loc_scale", {})
    for i in range(6):
        m, s, v = (mpmath.mpf(float(t)) for t in (loc[i], scale[i], x[i]))
        exact = {
            "loc": mpmath.diff(lambda t, s=s, v=v: mp_normal(t, s, v), m),
            "scale": mpmath.diff(lambda t, m=m, v=v: mp_normal(m, t, v), s),
            "value": mpmath.diff(lambda t, m=m, s=s: mp_normal(m, s, t), v),
        }
        for k, e in exact.items():
            assert rel_err(closed[k][i], float(e)) < 1e-12, k
    for k in closed:
        assert rel_err(numeric[k], closed[k]) < 1e-8, k


@pytest.mark.parametrize("parametrization", ["probs", "logits"])
def test_bernoulli_closed_form_vs_mpmath_and_richardson(parametrization: str) -> None:
    x = np.array([0.0, 1.0, 1.0, 0.0, 1.0, 0.0])
    if parametrization == "probs":
        theta = np.array([0.001, 0.3, 0.999, 0.5, 0.02, 0.97])

        def mp_lp(t, v):
            return mpmath.log(t) if v == 1 else mpmath.log(1 - t)
    else:
        theta = np.array([-20.0, -1.5, 0.0, 2.5, 12.0, 30.0])

        def mp_lp(t, v):
            return -mpmath.log(1 + mpmath.exp(-t if v == 1 else t))

    params = {parametrization: theta}
    closed = BERNOULLI.elementwise_grad(params, x, parametrization)[parametrization]
    numeric = BERNOULLI._numeric_grad(
        BERNOULLI.broadcast(params, x, parametrization), parametrization, {}
    )
    for i in range(6):
        exact = mpmath.diff(lambda t, i=i: mp_lp(t, x[i]), mpmath.mpf(float(theta[i])))
        assert rel_err(closed[i], float(exact)) < 1e-12
    assert rel_err(numeric[parametrization], closed) < 1e-8


def mp_mvn(loc, mat, x, parametrization):
    n = len(loc)
    d = mpmath.matrix([x[i] - loc[i] for i in range(n)])
    if parametrization == "covariance_matrix":
        cov = mat
    elif parametrization == "scale_tril":
        cov = mat * mat.T
    else:
        cov = mat**-1
    maha = (d.T * cov**-1 * d)[0]
    return -(n * mpmath.log(2 * mpmath.pi) + mpmath.log(mpmath.det(cov)) + maha) / 2


@pytest.mark.parametrize("parametrization", ["covariance_matrix", "scale_tril", "precision_matrix"])
def test_mvn_closed_forms_vs_mpmath(parametrization: str) -> None:
    n = 3
    loc, x = normal((n,), 5), normal((n,), 6)
    mat = cholesky((n, n), 7) if parametrization == "scale_tril" else spd((n, n), 7, 0.3, 3.0)
    closed = MVN.elementwise_grad({"loc": loc, parametrization: mat}, x, parametrization)
    to_mp = lambda a: mpmath.matrix(a.tolist())  # noqa: E731
    base = (to_mp(loc), to_mp(mat), to_mp(x))

    def directional(which: int, direction: np.ndarray) -> float:
        def f(t):
            args = list(base)
            args[which] = args[which] + t * to_mp(direction)
            return mp_mvn(args[0], args[1], args[2], parametrization)

        return float(mpmath.diff(f, 0))

    for i in range(n):
        e = np.zeros(n)
        e[i] = 1
        assert rel_err(closed["loc"][i], directional(0, e)) < 1e-12
        assert rel_err(closed["value"][i], directional(2, e)) < 1e-12
    g = closed[parametrization]
    for i, j in itertools.product(range(n), range(n)):
        if parametrization == "scale_tril" and j > i:
            assert g[i, j] == 0.0  # lower-triangular parameter: no gradient above the diagonal
            continue
        if parametrization != "scale_tril" and j > i:
            continue
        e = np.zeros((n, n))
        e[i, j] = 1
        if parametrization != "scale_tril":
            e[j, i] = 1  # symmetric direction: sees G_ij + G_ji
        expected = g[i, j] + (g[j, i] if (parametrization != "scale_tril" and i != j) else 0.0)
        assert rel_err(expected, directional(1, e)) < 1e-11, (i, j)


def test_mvn_richardson_matches_closed_forms_where_comparable() -> None:
    n = 3
    for parametrization, mat in [
        ("covariance_matrix", spd((n, n), 8)),
        ("scale_tril", cholesky((n, n), 8)),
    ]:
        params = {"loc": normal((n,), 9), parametrization: mat}
        x = normal((n,), 10)
        closed = MVN.elementwise_grad(params, x, parametrization)
        numeric = MVN._numeric_grad(MVN.broadcast(params, x, parametrization), parametrization, {})
        assert rel_err(numeric["loc"], closed["loc"]) < 1e-8
        assert rel_err(numeric["value"], closed["value"]) < 1e-8
        g = closed[parametrization]
        # Cholesky reads the lower triangle: a perturbation of Σ_ij (i > j) moves Σ_ji too.
        folded = (
            np.tril(g + g.T - np.diag(np.diag(g)))
            if parametrization == "covariance_matrix"
            else np.tril(g)
        )
        assert rel_err(np.tril(numeric[parametrization]), folded) < 1e-8


@pytest.mark.parametrize("family_name", ["Normal", "Bernoulli", "MultivariateNormal"])
def test_vjp_equals_explicit_loop_over_the_batch(family_name: str) -> None:
    rng = np.random.default_rng(4)
    family = reference.get_family(family_name)
    if family_name == "Normal":
        params, x, par = (
            {"loc": normal((3, 1), 1), "scale": positive((1, 4), 2)},
            normal((2, 3, 4), 3),
            "loc_scale",
        )
    elif family_name == "Bernoulli":
        params, x, par = (
            {"probs": probability((1, 4), 1)},
            rng.integers(0, 2, (3, 4)).astype(float),
            "probs",
        )
    else:
        params = {"loc": normal((2, 1, 2), 1), "covariance_matrix": spd((1, 3, 2, 2), 2)}
        x, par = normal((2, 3, 2), 3), "covariance_matrix"
    lp = family.log_prob(params, x, par)
    ct = rng.standard_normal(lp.shape)
    vjp = family.grad(params, x, ct, par)
    b = family.broadcast(params, x, par)
    info = family.params(par)
    for name, got in vjp.items():
        expected = np.zeros_like(got)
        for idx in np.ndindex(*lp.shape):
            single = {k: b.params[k][idx] for k in info}
            g = family.elementwise_grad(single, b.value[idx], par)[name]
            # map the broadcast element back to the input element it came from
            src = params[name] if name != "value" else x
            rank = family.value.event_rank if name == "value" else info[name].event_rank
            lead = len(lp.shape) - (np.ndim(src) - rank)
            sidx = tuple(
                0 if s == 1 else i
                for i, s in zip(idx[lead:], np.shape(src)[: np.ndim(src) - rank], strict=True)
            )
            expected[sidx] += ct[idx] * g
        assert np.allclose(got, expected, rtol=1e-12, atol=1e-14), name
