"""Batch semantics of the oracle: batch shape = broadcast of parameter batch shapes;
log_prob shape = broadcast(value batch, batch shape); values equal an explicit loop."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from conformance import reference
from conformance.reference import OracleError, unbroadcast

NORMAL = reference.get_family("Normal")
MVN = reference.get_family("MultivariateNormal")
BERNOULLI = reference.get_family("Bernoulli")


@settings(max_examples=60, deadline=None)
@given(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=3))
def test_normal_broadcast_matches_loop(shapes) -> None:
    loc_shape, scale_shape, value_shape = shapes.input_shapes
    rng = np.random.default_rng(0)
    loc = rng.standard_normal(loc_shape)
    scale = rng.uniform(0.5, 2.0, scale_shape)
    value = rng.standard_normal(value_shape)
    params = {"loc": loc, "scale": scale}
    assert NORMAL.batch_shape(params) == np.broadcast_shapes(loc_shape, scale_shape)
    got = NORMAL.log_prob(params, value)
    assert got.shape == shapes.result_shape
    bl, bs, bv = np.broadcast_arrays(loc, scale, value)
    for idx in np.ndindex(*shapes.result_shape):
        z = (bv[idx] - bl[idx]) / bs[idx]
        assert got[idx] == pytest.approx(
            -0.5 * z * z - np.log(bs[idx]) - 0.5 * np.log(2 * np.pi), rel=1e-14
        )


@settings(max_examples=40, deadline=None)
@given(
    hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=3),
    st.integers(1, 3),
    st.sampled_from(["covariance_matrix", "scale_tril", "precision_matrix"]),
)
def test_mvn_broadcast_matches_loop(shapes, n, parametrization) -> None:
    loc_b, mat_b, value_b = shapes.input_shapes
    rng = np.random.default_rng(1)
    loc = rng.standard_normal((*loc_b, n))
    a = rng.standard_normal((*mat_b, n, n))
    cov = a @ np.swapaxes(a, -1, -2) + n * np.eye(n)
    mat = {
        "covariance_matrix": cov,
        "scale_tril": np.linalg.cholesky(cov),
        "precision_matrix": np.linalg.inv(cov),
    }[parametrization]
    value = rng.standard_normal((*value_b, n))
    params = {"loc": loc, parametrization: mat}
    assert MVN.batch_shape(params, parametrization) == np.broadcast_shapes(loc_b, mat_b)
    assert MVN.event_shape(params, parametrization) == (n,)
    got = MVN.log_prob(params, value, parametrization)
    assert got.shape == shapes.result_shape
    for idx in np.ndindex(*shapes.result_shape):
        single = {
            "loc": np.broadcast_to(loc, (*shapes.result_shape, n))[idx],
            parametrization: np.broadcast_to(mat, (*shapes.result_shape, n, n))[idx],
        }
        x = np.broadcast_to(value, (*shapes.result_shape, n))[idx]
        assert got[idx] == pytest.approx(float(MVN.log_prob(single, x, parametrization)), rel=1e-13)


def test_torchsharp_shapes() -> None:
    params = {"loc": np.zeros(3), "covariance_matrix": np.eye(3)[None]}
    assert MVN.batch_shape(params, "covariance_matrix") == (1,)
    assert MVN.log_prob_shape(params, np.zeros((1, 3)), "covariance_matrix") == (1,)


def test_shapes_that_do_not_broadcast_are_refused() -> None:
    with pytest.raises(OracleError, match="do not broadcast"):
        NORMAL.batch_shape({"loc": np.zeros(3), "scale": np.ones(4)})
    with pytest.raises(OracleError, match="does not broadcast"):
        NORMAL.log_prob_shape({"loc": np.zeros(3), "scale": np.ones(3)}, np.zeros(4))
    with pytest.raises(OracleError, match="does not end in the event shape"):
        MVN.log_prob_shape(
            {"loc": np.zeros(3), "covariance_matrix": np.eye(3)}, np.zeros(2), "covariance_matrix"
        )


def test_sample_shape_and_moments() -> None:
    rng = np.random.default_rng(0)
    loc = np.array([1.0, -2.0])
    cov = np.array([[2.0, 0.6], [0.6, 1.0]])
    draws = MVN.sample({"loc": loc, "covariance_matrix": cov}, (20000,), rng, "covariance_matrix")
    assert draws.shape == (20000, 2)
    np.testing.assert_allclose(draws.mean(0), loc, atol=0.05)
    np.testing.assert_allclose(np.cov(draws.T), cov, atol=0.08)
    bern = BERNOULLI.sample({"probs": np.array([0.2, 0.9])}, (5000,), rng, "probs")
    assert set(np.unique(bern)) <= {0.0, 1.0}
    np.testing.assert_allclose(bern.mean(0), [0.2, 0.9], atol=0.03)


def test_unbroadcast_sums_over_broadcast_dims() -> None:
    g = np.ones((4, 3, 5))
    assert unbroadcast(g, (3, 1)).tolist() == [[20.0]] * 3
    assert unbroadcast(g, ()).item() == 60.0
    assert unbroadcast(g, (1, 3, 5)).shape == (1, 3, 5)


def test_per_distinct_evaluates_each_distinct_tuple_once() -> None:
    """A normaliser of per-draw copies costs one evaluation per batch element, with the same
    bits as evaluating every copy; signed zeros and NaNs keep their own rows."""
    from conformance.reference.core import per_distinct

    seen: list[int] = []

    def traced(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        seen.append(a.size)
        return np.log1p(a) * b + np.copysign(1.0, a)

    a = np.broadcast_to(np.array([0.5, -0.0, 0.0, np.nan]), (512, 4))
    b = np.array([2.0, 3.0, 3.0, 1.0])
    got = per_distinct(traced, a, b)
    assert seen == [4] and got.shape == (512, 4)
    np.testing.assert_array_equal(got, np.broadcast_to(traced(a[0], b), (512, 4)))
    assert got[0, 1] == -1.0 and got[0, 2] == 1.0  # −0.0 and 0.0 are not merged
