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


def _alone_and_together(function, *columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    together = function(*columns)
    alone = np.array(
        [function(*(np.asarray(c[i]) for c in columns)) for i in range(len(columns[0]))]
    )
    return together, alone


def test_gamma_kernels_give_each_element_its_own_number_in_any_company() -> None:
    """The Gamma's kernels take each form (Stirling's series or lgamma, the deviance's sum or
    its logs, Loader's kernel or the textbook density) only where some element needs it: an
    element's bits must not depend on which forms its neighbours take."""
    from conformance.reference.families.gamma import bd0, gamma_log_density, stirlerr

    a = np.array([0.3, 2.0, 8.5, 12.0, 500.0, 2.0e6])
    rate = np.array([1.0, 2.0, 0.5, 1.0, 1.0, 1.0])
    x = np.array([1e-3, 0.9, 15.0, 11.5, 499.0, 2.0e6 + 3.0])
    for together, alone in (
        _alone_and_together(stirlerr, a),
        _alone_and_together(bd0, x, a),
        _alone_and_together(gamma_log_density, a, rate, x),
    ):
        assert np.all(np.isfinite(together))
        np.testing.assert_array_equal(together, alone)


def test_truncated_gamma_normaliser_takes_each_regime_per_element() -> None:
    """log Z of the truncated Gamma in one call mixing every regime (the series, the continued
    fraction, the narrow quadrature, the general way) equals each element's own call, bit for
    bit: a regime is evaluated only where some element is in it, never read elsewhere."""
    from conformance.reference.families.truncated_gamma_mass import log_normalizer

    # The series, the fraction, the narrow quadrature (a fraction's interval too), the series,
    # the general way (z_b beyond the series, z_a below the fraction).
    low = np.array([0.5, 30.0, 3.0, 0.1, 0.5])
    high = np.array([3.0, 40.0, 3.000001, 0.2, 300.0])

    def two_sided(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        params = {"concentration": 2.0, "rate": 1.0, "low": lo, "high": hi}
        return log_normalizer(params, "two_sided")

    def left(lo: np.ndarray) -> np.ndarray:
        return log_normalizer({"concentration": 2.0, "rate": 1.0, "low": lo}, "left_truncated")

    together, alone = _alone_and_together(two_sided, low, high)
    assert np.all(np.isfinite(together))
    np.testing.assert_array_equal(together, alone)
    together, alone = _alone_and_together(left, np.array([0.5, 30.0, 1e6]))
    assert np.all(np.isfinite(together))
    np.testing.assert_array_equal(together, alone)


def test_continued_fraction_depth_is_each_elements_own() -> None:
    """The upper incomplete gamma's fraction is summed from a depth set by each element's own
    concentration, so a small concentration beside a large one keeps the bits it has alone."""
    from conformance.reference.families.incomplete_gamma import upper_fraction

    # (0.5, 1.5) alone is summed from depth 62: from 2,906 (9e5's) it ends an ulp away.
    a = np.array([0.5, 2.0, 400.0, 9.0e5, np.nan])
    z = np.array([1.5, 40.0, 500.0, 9.1e5, 1.0])
    together = upper_fraction(a, z)
    for i in range(a.size):
        alone = upper_fraction(a[i : i + 1], z[i : i + 1])
        for t, s in zip(together, alone, strict=True):
            np.testing.assert_array_equal(t[i : i + 1], s)
