"""Property mode: hypothesis draws jointly broadcastable batch shapes and shrinks failures to a
minimal case that the failure message gives as paste-ready YAML."""

from __future__ import annotations

import textwrap

import fake_adapters
import yaml
from helpers import make_case, run_check

from conformance.cases.loader import load_case_text

CASE = """
- id: p
  family: Normal
  params:
    loc: {generator: normal, shape: [3], seed: 1}
    scale: {generator: positive, shape: [3], seed: 2}
  value: {sample: {seed: 3}}
"""


def test_healthy_framework_passes_all_examples() -> None:
    result = run_check(make_case(CASE), "torch", "float64", "property", property_examples=15)
    assert result.passed, result.message
    assert result.metrics["examples_tried"] == 15


def test_shape_dependent_bug_is_shrunk_to_a_minimal_case_that_reproduces() -> None:
    adapter = fake_adapters.RankTwoAdapter()
    base = make_case(CASE)
    assert run_check(
        base, adapter.name, "float64", "log_prob", adapter=adapter
    ).passed  # rank 1: fine
    result = run_check(
        base, adapter.name, "float64", "property", adapter=adapter, property_examples=30
    )
    assert not result.passed and result.kind == "raises"
    shapes = result.metrics["minimal_shapes"]
    # Minimal: log_prob rank exactly 2, every dim of size 1 (hypothesis shrinks sizes too).
    assert max(len(s) for s in shapes) == 2
    assert all(d == 1 for s in shapes for d in s)
    snippet = result.metrics["minimal_case_yaml"]
    assert "ready to paste into cases/" in result.message
    assert all(line.strip() in result.message for line in snippet.splitlines())
    loaded = load_case_text("cases:\n" + textwrap.indent(snippet, "  "), "cases/pasted.yaml")
    assert not loaded.errors, loaded.errors
    pasted = loaded.cases[0]
    assert pasted.spec.frameworks == [adapter.name] and pasted.spec.dtypes == ["float64"]
    assert len(pasted.log_prob_shape) == 2
    again = run_check(pasted, adapter.name, "float64", "log_prob", adapter=adapter)
    assert not again.passed and "is invalid for input of size" in again.message
    assert yaml.safe_load(snippet)[0]["family"] == "Normal"


def test_property_check_is_opt_in() -> None:
    from conformance.run.config.settings import Settings

    assert "property" not in Settings().selection.selected_checks(None)
    assert "property" in Settings(property_examples=5).selection.selected_checks(None)


WISHART_NEAR_LIMIT = """
- id: cov-df-near-lower-limit
  family: Wishart
  parametrization: covariance_matrix
  params: {df: 1.01, covariance_matrix: [[2.0, 0.3], [0.3, 1.0]]}
  value: [[1.5, -0.2], [-0.2, 0.7]]
"""


def test_drawn_values_stay_off_the_support_boundary_in_both_dtypes() -> None:
    """A raw Wishart draw at df = d − 1 + 0.01 is singular within rounding most of the time
    (torch rejects it, NumPyro scores −inf): property mode keeps its values well-conditioned
    as the broadcast variants do, so a healthy framework passes (issue 36, item 7)."""
    import numpy as np

    from conformance import reference
    from conformance.dtypes import round_to
    from conformance.expect.expectations import derive_batch_shapes
    from conformance.expect.materialize import float64_inputs

    case = make_case(WISHART_NEAR_LIMIT)
    family = reference.get_family("Wishart")
    for shapes in [((), ()), ((), (3,)), ((2,), (2,)), ((3, 1), (1, 3))]:
        derived = derive_batch_shapes(case, family, ["covariance_matrix"], shapes)
        params, value = float64_inputs(derived)
        for candidate in (value, round_to(value, "float32")):
            ev = family.evaluate(params, candidate, "covariance_matrix")
            assert np.all(ev.in_support), shapes
    result = run_check(case, "torch", "float64", "property", property_examples=20)
    assert result.passed, result.message
