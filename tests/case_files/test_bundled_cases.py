"""The shipped cases load cleanly and cover what the suite promises."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from conformance.cases.loader import find_case_files, load_case_file
from conformance.expect.materialize import expected_for, float64_inputs

CASES = Path(__file__).resolve().parents[2] / "cases"


def all_cases():
    out = []
    for path in find_case_files(CASES):
        loaded = load_case_file(path)
        assert not loaded.errors, loaded.errors
        out.extend(loaded.cases)
    return out


def test_at_least_30_cases_over_three_families() -> None:
    cases = all_cases()
    assert len(cases) >= 30
    assert {c.family for c in cases} >= {"Normal", "MultivariateNormal", "Bernoulli"}


def test_every_case_builds_and_the_oracle_evaluates_it() -> None:
    """NaN exactly where a parameter is invalid; -inf at least where the value is outside."""
    for case in all_cases():
        for dtype in case.spec.dtypes:
            exp = expected_for(case, dtype)
            lp = exp.log_prob
            assert np.array_equal(np.isnan(lp), ~exp.params_valid), case.id
            outside = exp.params_valid & ~exp.in_support
            assert np.all(lp[outside] == -np.inf), case.id


def test_torchsharp_shape_is_present() -> None:
    found = False
    for case in all_cases():
        params, value = float64_inputs(case)
        if (
            case.family == "MultivariateNormal"
            and params["loc"].shape == (3,)
            and value.shape == (1, 3)
        ):
            mat = params.get("covariance_matrix")
            found |= mat is not None and mat.shape == (1, 3, 3)
    assert found


def test_every_mvn_parametrization_has_non_diagonal_batched_cases() -> None:
    seen = set()
    for case in all_cases():
        if case.family != "MultivariateNormal":
            continue
        params, _ = float64_inputs(case)
        mat = params[case.parametrization]
        off = mat - np.diagonal(mat, axis1=-2, axis2=-1)[..., None] * np.eye(mat.shape[-1])
        if np.any(off) and (mat.ndim > 2 or params["loc"].ndim > 1):
            seen.add(case.parametrization)
    assert seen == {"covariance_matrix", "scale_tril", "precision_matrix"}


def test_broadcast_patterns_are_covered() -> None:
    """size-1 dims on either side, extra leading value dims, value batch smaller and larger."""
    patterns = set()
    for case in all_cases():
        exp = expected_for(case, "float64")
        _params, value = float64_inputs(case)
        batch, lp = exp.batch_shape, exp.log_prob_shape
        vrank = 1 if case.family == "MultivariateNormal" else 0
        vbatch = value.shape[: value.ndim - vrank]
        if len(vbatch) > len(batch):
            patterns.add("value-extra-leading")
        if len(vbatch) < len(batch) or any(
            v == 1 < b for v, b in zip(vbatch[::-1], batch[::-1], strict=False)
        ):
            patterns.add("value-smaller")
        if any(b == 1 < lpd for b, lpd in zip(batch[::-1], lp[::-1], strict=False)):
            patterns.add("param-size1-against-value")
        if lp != batch and len(lp) == len(batch):
            patterns.add("value-larger-same-rank")
    assert patterns == {
        "value-extra-leading",
        "value-smaller",
        "param-size1-against-value",
        "value-larger-same-rank",
    }
