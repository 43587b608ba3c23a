"""The comparison: tolerance scaling, non-finite handling, failure kinds."""

from __future__ import annotations

import numpy as np
import pytest

from conformance.compare import ULPS, compare_arrays, tolerance
from conformance.dtypes import eps


def test_tolerance_scales_with_dtype_magnitude_and_sensitivity() -> None:
    t32 = tolerance("float32", np.array([0.0, -1e4]), np.array([0.0, 0.0]))
    t64 = tolerance("float64", np.array([0.0, -1e4]), np.array([0.0, 0.0]))
    assert t32[0] == ULPS["float32"] * eps("float32")
    assert t32[1] == ULPS["float32"] * eps("float32") * (1 + 1e4)
    assert t64[1] < t32[1] / 1e5
    with_sens = tolerance("float32", np.array([-1.0]), np.array([50.0]))
    assert with_sens[0] == ULPS["float32"] * eps("float32") * 52.0


def test_within_tolerance_passes_and_reports_metrics() -> None:
    exp = np.array([-1.0, -2.0, -3.0])
    res = compare_arrays(exp, exp + np.array([0.0, 1e-9, 0.0]), np.full(3, 1e-8))
    assert res.ok and res.metrics["worst_index"] == [1]
    assert res.metrics["max_err_over_tol"] == pytest.approx(0.1, rel=1e-5)


def test_nan_and_inf_where_finite_expected_are_failures_of_their_kind() -> None:
    tol = np.full(2, 1e-6)
    assert compare_arrays(np.array([-1.0, -2.0]), np.array([-1.0, np.nan]), tol).kind == "nan"
    assert compare_arrays(np.array([-1.0, -2.0]), np.array([-np.inf, -2.0]), tol).kind == "inf"


def test_matching_non_finite_values_pass() -> None:
    exp = np.array([-np.inf, np.nan, -1.0])
    assert compare_arrays(exp, exp.copy(), np.full(3, 1e-6)).ok


def test_minus_inf_expected_but_finite_actual_fails() -> None:
    res = compare_arrays(np.array([-np.inf]), np.array([-50.0]), np.array([1e-6]))
    assert not res.ok and res.kind == "value"


def test_shape_disagreement_is_not_compared() -> None:
    res = compare_arrays(np.zeros(3), np.zeros((1, 3)), np.ones(3))
    assert not res.ok and res.kind == "shape"


def test_empty_arrays_compare_nothing_but_say_so() -> None:
    res = compare_arrays(np.zeros((0, 3)), np.zeros((0, 3)), np.ones((0, 3)))
    assert res.ok and res.metrics == {"compared": 0}


def test_float32_overflow_of_a_finite_answer_is_the_same_signed_infinity() -> None:
    # log_prob -1e60 is finite mathematically but beyond float32: float32's rounding is -inf.
    exp = np.array([-1e60, -3.0])
    tol = np.array([1e55, 1e-6])
    assert compare_arrays(exp, np.array([-np.inf, -3.0], dtype=np.float32), tol).ok
    assert not compare_arrays(exp, np.array([np.inf, -3.0], dtype=np.float32), tol).ok
    # Within float32's range, or in float64, an infinity is still wrong.
    assert not compare_arrays(np.array([-1e30]), np.array([-np.inf], np.float32), tol[:1]).ok
    assert not compare_arrays(exp, np.array([-np.inf, -3.0]), tol).ok


def test_overflow_is_judged_in_the_dtype_the_framework_computed_in() -> None:
    # Gradients are read back widened to float64; the float32 computation's -inf for a true
    # -1.5e90 is still its correct rounding, and float64's own -inf still is not.
    exp = np.array([-1.5e90, 2.0])
    widened = np.array([-np.inf, 2.0])
    tol = np.array([1e80, 1e-6])
    assert compare_arrays(exp, widened, tol, "float32").ok
    assert not compare_arrays(exp, widened, tol, "float64").ok
    assert not compare_arrays(exp, np.array([np.nan, 2.0]), tol, "float32").ok


def test_indeterminate_elements_accept_a_non_finite_answer_and_count_it() -> None:
    exp = np.array([1.3e75, 2.0])
    tol = np.array([1e70, 1e-6])
    unsure = np.array([True, False])
    res = compare_arrays(exp, np.array([np.nan, 2.0]), tol, "float32", unsure)
    assert res.ok and res.metrics["indeterminate_accepted"] == 1
    # A finite wrong answer there, or a NaN elsewhere, still fails.
    assert not compare_arrays(exp, np.array([1.0, 2.0]), tol, "float32", unsure).ok
    assert not compare_arrays(exp, np.array([np.nan, np.nan]), tol, "float32", unsure).ok
