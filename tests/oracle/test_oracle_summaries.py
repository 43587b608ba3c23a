"""The oracle's summaries (mean, variance, stddev, mode, entropy) held to scipy, family by family,
and their shapes and invalid-parameter rule held once for every family that has them."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from conformance import reference
from conformance.reference.summaries import SUMMARIES
from conformance.summaries import Summary

#: Family → (parametrization or None, parameters, scipy's frozen distribution at them).
SCIPY = {
    "Normal": (
        None,
        {"loc": np.array([-1.5, 0.0, 3.0]), "scale": np.array([0.5, 1.0, 7.0])},
        lambda p: stats.norm(p["loc"], p["scale"]),
    ),
}


@pytest.mark.parametrize("family", sorted(SCIPY))
def test_summaries_match_scipy(family: str) -> None:
    parametrization, params, frozen = SCIPY[family]
    oracle = reference.get_family(family)
    expected = {
        Summary.MEAN: frozen(params).mean(),
        Summary.VARIANCE: frozen(params).var(),
        Summary.STDDEV: frozen(params).std(),
        Summary.ENTROPY: frozen(params).entropy(),
    }
    for summary, want in expected.items():
        if oracle.has_summary(summary):
            got = oracle.summary(summary, params, parametrization)
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=0, err_msg=str(summary))


def test_normal_mode_is_its_loc() -> None:
    normal = reference.get_family("Normal")
    params = {"loc": np.array([-1.5, 2.0]), "scale": np.array(3.0)}
    np.testing.assert_array_equal(normal.summary("mode", params), params["loc"])


def test_shapes_and_invalid_parameters() -> None:
    """``batch + event`` for the moments, ``batch`` for the entropy; NaN at an invalid element."""
    normal = reference.get_family("Normal")
    params = {"loc": np.zeros(3), "scale": np.array([[1.0], [-1.0]])}
    for summary in Summary:
        got = normal.summary(summary, params)
        assert got.shape == (2, 3)
        assert np.all(np.isfinite(got[0])) and np.all(np.isnan(got[1]))


def test_the_oracle_names_the_summaries_the_suite_does() -> None:
    assert tuple(Summary) == SUMMARIES


def test_a_summary_the_oracle_lacks_is_refused() -> None:
    family = next(f for f in reference.FAMILIES.values() if not f.has_summary("entropy"))
    with pytest.raises(reference.OracleError, match="no entropy"):
        family.summary("entropy", {})
