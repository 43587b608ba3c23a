"""Fresh values (value-lead/value-batch variants, plate/scan steps) stay off unplanned boundaries."""

from __future__ import annotations

import numpy as np

from conformance import reference
from conformance.dtypes import round_to
from conformance.expect.fresh_values import ATTEMPTS, well_conditioned_draw

GAMMA = reference.get_family("Gamma")
TINY = {"concentration": np.array([1e-3, 0.5, 2.0]), "rate": np.ones(3)}


def _draw(params, shape, seed=0):
    rng = np.random.default_rng(seed)
    return lambda: GAMMA.sample(params, shape, rng, None)


def test_boundary_draws_are_redrawn_and_good_draws_kept() -> None:
    raw = GAMMA.sample(TINY, (6,), np.random.default_rng(0), None)
    assert (round_to(raw, "float32") == 0).any(), "the raw draw must hit the boundary to test this"
    value = well_conditioned_draw(
        GAMMA, TINY, "concentration_rate", _draw(TINY, (6,)), np.full(3, 0.5), integer=False
    )
    for candidate in (value, round_to(value, "float32")):
        assert np.isfinite(GAMMA.log_prob(TINY, candidate)).all()
    # Columns whose first draw was fine keep it: only the bad positions are redrawn.
    np.testing.assert_array_equal(value[:, 1:], raw[:, 1:])


def test_positions_that_never_come_right_take_the_cases_own_value() -> None:
    calls = []

    def always_zero() -> np.ndarray:
        calls.append(1)
        return np.array([[0.0, 1.0, 0.0]])

    own = np.array([0.25, 0.5, 0.75])
    value = well_conditioned_draw(
        GAMMA, TINY, "concentration_rate", always_zero, own, integer=False
    )
    np.testing.assert_array_equal(value, [[0.25, 1.0, 0.75]])
    assert len(calls) == ATTEMPTS + 1


def test_a_value_smaller_than_the_batch_is_judged_on_every_row_it_meets() -> None:
    # value (1, 3) against parameters (2, 3): position (0, j) is bad if either row is.
    params = {"concentration": np.array([[2.0, 2.0, 2.0], [1e-3, 2.0, 2.0]]), "rate": np.ones(3)}
    value = well_conditioned_draw(
        GAMMA,
        params,
        "concentration_rate",
        lambda: np.array([[0.0, 1.0, 2.0]]),
        np.array([[0.5, 0.5, 0.5]]),
        integer=False,
    )
    np.testing.assert_array_equal(value, [[0.5, 1.0, 2.0]])


def test_integer_values_stay_integers() -> None:
    poisson = reference.get_family("Poisson")
    params = {"rate": np.array([0.5, 3.0, 40.0])}
    rng = np.random.default_rng(1)
    value = well_conditioned_draw(
        poisson,
        params,
        poisson.default_parametrization,
        lambda: poisson.sample(params, (5,), rng, None) + 0.3,
        np.array([0.0, 3.0, 40.0]),
        integer=True,
    )
    np.testing.assert_array_equal(value, np.round(value))
    assert np.isfinite(poisson.log_prob(params, value)).all()


def test_values_whose_float32_rounding_moves_log_prob_a_nat_are_redrawn() -> None:
    # df = d - 1 + 0.01: most draws are so nearly singular that rounding them to float32 changes
    # log_prob by more than a nat (NumPyro's Cholesky then gives NaN or -inf).
    wishart = reference.get_family("Wishart")
    params = {"df": np.array(1.01), "covariance_matrix": np.array([[2.0, 0.3], [0.3, 1.0]])}
    own = np.array([[1.5, -0.2], [-0.2, 0.7]])
    rng = np.random.default_rng(3)
    raw = wishart.sample(params, (6,), np.random.default_rng(3), "covariance_matrix")
    value = well_conditioned_draw(
        wishart,
        params,
        "covariance_matrix",
        lambda: wishart.sample(params, (6,), rng, "covariance_matrix"),
        own,
        integer=False,
    )

    def moved(v: np.ndarray) -> np.ndarray:
        g = wishart.elementwise_grad(params, v, "covariance_matrix")["value"]
        return (np.abs(g * v) * np.finfo(np.float32).eps / 2).sum(axis=(-2, -1))

    assert (moved(raw) >= 1).any(), "the raw draw must contain a nearly singular matrix"
    assert (moved(value) < 1).all()


def test_values_with_a_float32_subnormal_element_are_redrawn() -> None:
    """XLA on CPU reads a float32 subnormal as 0 (a Cholesky factor's diagonal of 4e-39 is a
    zero pivot there): a float32 edge the generated edges test on purpose, not a fresh value's
    job. The oracle itself is fine there, so only this rule catches it."""
    normal = reference.get_family("Normal")
    params = {"loc": np.zeros(3), "scale": np.ones(3)}
    draws = iter([np.array([[4e-39, 0.5, -1e-40]]), np.array([[0.25, 0.75, -0.125]])])
    value = well_conditioned_draw(
        normal, params, "loc_scale", lambda: next(draws), np.zeros(3), integer=False
    )
    np.testing.assert_array_equal(value, [[0.25, 0.5, -0.125]])
