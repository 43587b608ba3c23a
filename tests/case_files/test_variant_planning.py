"""Planning a broadcast variant draws nothing; the item that runs it draws its value, whose
shapes are the ones the plan gave the variant."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from conformance.cases.loader import load_case_file
from conformance.expect.materialize import CaseInputError, float64_inputs, variant_params
from conformance.plan.derived import variants as variants_module
from conformance.plan.derived.variants import derive_variants
from conformance.plan.planner import _all_valid

CASES = Path(__file__).resolve().parents[2] / "cases"
#: Scalar, vector-event, matrix-event, simplex and integer-valued families.
FILES = ("normal", "multivariate_normal", "wishart", "dirichlet", "multinomial", "poisson")


def _variants(name: str) -> list:
    """The variants the plan derives from a shipped file: of its cases whose inputs are valid."""
    out = []
    for case in load_case_file(CASES / f"{name}.yaml").cases:
        params, value = float64_inputs(case)
        if not _all_valid(case, params, value):
            continue
        found, problems = derive_variants(case, params, value)
        assert not problems, problems
        out.extend(found)
    return out


@pytest.mark.parametrize("name", FILES)
def test_planning_a_file_s_variants_draws_no_value(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_draws(*args: object, **kwargs: object) -> None:
        raise AssertionError("planning drew a fresh value")

    monkeypatch.setattr(variants_module, "well_conditioned_draw", no_draws)
    found = _variants(name)
    assert {v.variant for v in found} >= {"value-lead"}, "the file's cases draw values"
    for variant in found:
        variant_params(variant)  # what the plan reads of a variant: no draw either


@pytest.mark.parametrize("name", FILES)
def test_a_drawn_variant_value_has_the_planned_shapes(name: str) -> None:
    drawn = 0
    for variant in _variants(name):
        params, value = float64_inputs(variant)
        _, stand_in = variant.derive(
            dict(float64_inputs(variant.base)[0]), float64_inputs(variant.base)[1], False
        )
        assert value.shape == np.shape(stand_in), variant.id
        assert all(np.array_equal(params[k], p) for k, p in variant_params(variant).items())
        drawn += variant.variant in ("value-lead", "value-batch")
    assert drawn, "no variant of the file draws a value"


def test_a_variant_whose_drawn_value_contradicts_the_plan_is_a_case_input_error() -> None:
    variant = next(v for v in _variants("normal") if v.variant == "value-lead")
    wrong = dataclasses.replace(variant, log_prob_shape=(*variant.log_prob_shape, 7))
    with pytest.raises(CaseInputError, match=r"value-lead.*the plan expected"):
        float64_inputs(wrong)
