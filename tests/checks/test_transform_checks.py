"""The transform checks pass on today's frameworks and flag each deliberately broken adapter."""

from __future__ import annotations

import fake_adapters
import pytest
from helpers import make_case, run_check

from conformance.operations import Operation

SEED_1971 = """
- id: seed-1971
  family: MultivariateNormal
  parametrization: scale_tril
  params:
    loc: {generator: normal, shape: [5, 2], seed: 1}
    scale_tril: [[1.0, 0.0], [0.0, 1.0]]
  value: {sample: {seed: 2}}
"""
NORMAL = """
- id: n
  family: Normal
  params:
    loc: {generator: normal, shape: [3, 1], seed: 1}
    scale: {generator: positive, shape: [4], seed: 2}
  value: {sample: {seed: 3, sample_shape: [2]}}
"""


@pytest.mark.parametrize("adapter", ["torch", "numpyro", "gpytorch.root"])
def test_vmap_passes_and_maps_params_value_and_both(adapter) -> None:
    result = run_check(make_case(SEED_1971), adapter, "float64", "vmap")
    assert result.passed, result.message
    leading = result.metrics["modes"]["leading"]
    assert leading["in_axes"] == {"loc": 0, "scale_tril": None} and leading["value_axis"] == 0
    normal = run_check(
        make_case(NORMAL), "numpyro" if adapter == "numpyro" else "torch", "float32", "vmap"
    )
    assert normal.passed, normal.message
    modes = normal.metrics["modes"]
    # log_prob (2, 3, 4): axis 0 only the value has; axis 2 the value and scale.
    assert (
        modes["leading"]["in_axes"] == {"loc": None, "scale": None}
        and modes["leading"]["value_axis"] == 0
    )
    assert (
        modes["trailing"]["in_axes"] == {"loc": None, "scale": 0}
        and modes["trailing"]["value_axis"] == 2
    )
    assert modes["grad"]["max_err_over_tol"] < 1


def test_in_place_write_under_vmap_fails_with_the_framework_message() -> None:
    adapter = fake_adapters.InPlaceVmapAdapter()
    case = make_case(NORMAL)
    assert run_check(
        case, adapter.name, "float32", "log_prob", adapter=adapter
    ).passed  # eager is fine
    result = run_check(case, adapter.name, "float32", "vmap", adapter=adapter)
    assert not result.passed and result.kind == "raises"
    assert "vmap log_prob" in result.message and "RuntimeError" in result.message
    assert "inplace" in result.message or "in-place" in result.message


def test_numpyro_items_run_compiled_and_the_eager_check_names_an_eager_only_failure() -> None:
    case = make_case(NORMAL)
    assert run_check(case, "numpyro", "float64", "eager").passed
    # Wrong only under jax.jit: the default (compiled) items see it, the eager item does not.
    jit_only = fake_adapters.JitOnlyAdapter()
    result = run_check(case, jit_only.name, "float64", "log_prob", adapter=jit_only)
    assert not result.passed and result.kind == "value"
    assert run_check(case, jit_only.name, "float64", "eager", adapter=jit_only).passed
    # Wrong only op by op: the eager item names it, the compiled items pass.
    eager_only = fake_adapters.EagerOnlyAdapter()
    for check in ("shapes", "log_prob", "grad", "vmap", "plate"):
        assert run_check(case, eager_only.name, "float64", check, adapter=eager_only).passed, check
    result = run_check(case, eager_only.name, "float64", "eager", adapter=eager_only)
    assert not result.passed and result.kind == "eager_only"
    assert "compiled (the other items' evaluation) matches the oracle: eager-only" in result.message
    # A failure, not a skip: the eager result's arrays once landed in skip_reason, and an item
    # with arrays to show crashed pytest.skip instead of failing as eager_only.
    assert result.skip_reason is None and isinstance(result.arrays, dict)


def test_inputs_outside_the_domain_are_evaluated_eagerly_where_validation_sees_them() -> None:
    case = make_case(
        """
        - id: negative-scale
          family: Normal
          params: {loc: 0.0, scale: -1.0}
          value: 0.5
        """
    )
    result = run_check(case, "numpyro", "float64", "log_prob")
    assert result.passed and "validation_error" in result.metrics, result


@pytest.mark.parametrize("kind", ["plate", "scan", "plate_in_scan"])
def test_effect_handlers_pass_with_expected_site_shapes(kind) -> None:
    result = run_check(make_case(SEED_1971), "numpyro", "float32", kind)
    assert result.passed, result.message
    expected = {"plate": [3, 5], "scan": [4, 5], "plate_in_scan": [4, 5]}[kind]
    assert result.metrics["site_batch_shape"] == expected
    if kind == "plate_in_scan":  # the report's model: plate of 5 over loc (5, 2), scan of 4
        assert result.metrics["plate"] == [5, -1] and result.metrics["steps"] == 4


def test_wrong_batch_promotion_is_flagged_with_the_report_shapes() -> None:
    adapter = fake_adapters.WrongPromotionAdapter()
    case = make_case(SEED_1971)
    assert run_check(
        case, adapter.name, "float32", "plate", adapter=adapter
    ).passed  # no scan: fine
    result = run_check(case, adapter.name, "float32", "plate_in_scan", adapter=adapter)
    assert not result.passed and result.kind == "shape"
    assert "expected (4, 5) (plate (5, -1), scan steps 4)" in result.message
    assert result.metrics["site_batch_shape"] != [4, 5]


def test_transform_checks_are_only_made_where_offered() -> None:
    from conformance.adapters import all_adapters
    from conformance.checks import CHECKS

    adapters = all_adapters()
    assert CHECKS["plate_in_scan"].unsupported_by(adapters["torch"])
    assert CHECKS["jit"].unsupported_by(adapters["torch"])  # torch.compile is opt-in
    assert CHECKS["vmap"].unsupported_by(adapters["torch"]) is None
    assert CHECKS["jit"].unsupported_by(adapters["torch"], frozenset({Operation.JIT})) is None
    assert CHECKS["vmap"].unsupported_by(adapters["gpytorch.iterative"])  # its path is not vmapped
    scalar = make_case("""
- id: s
  family: Normal
  params: {loc: 0.0, scale: 1.0}
  value: 0.5
""")
    assert CHECKS["vmap"].not_applicable(scalar)


BETA_BOUNDARY = """
- id: boundary-zero
  family: Beta
  params: {concentration1: [0.5, 1.0, 2.0], concentration0: [2.0, 2.0, 2.0]}
  value: 0.0
  checks: [shapes, log_prob]
"""


def test_broadcast_variants_compare_only_the_parts_their_case_asks_for() -> None:
    # At x = 0 log_prob is +inf, finite and -inf: the case leaves out gradients, and so must
    # its variants (numpyro's gradient there is 0 where the oracle's is undefined or inf).
    from conformance.expect.materialize import float64_inputs
    from conformance.plan.derived.variants import derive_variants

    case = make_case(BETA_BOUNDARY)
    params, value = float64_inputs(case)
    variants, problems = derive_variants(case, params, value)
    assert not problems
    size1 = next(v for v in variants if v.variant == "size1-concentration1")
    result = run_check(size1, "numpyro", "float64", "broadcast")
    assert result.passed, result.message
    assert set(result.metrics["parts"]) == {"shapes", "log_prob"}
    assert result.metrics["not_compared"] == ["grad: not among the case's checks"]


def test_opting_in_is_a_setting_and_a_typo_is_a_usage_problem() -> None:
    from conformance.run.config.settings import Settings, parse_options

    def settings(argv: list[str], env: dict[str, str]) -> Settings:
        return Settings.from_sources(parse_options(argv)[0], env)

    assert settings([], {}).opted_in == frozenset()
    assert settings(["--opt-in=jit"], {}).opted_in == {Operation.JIT}
    assert settings([], {"CONFORMANCE_TORCH_COMPILE": "1"}).opted_in == {Operation.JIT}
    assert any("'jot'" in p for p in settings(["--opt-in=jot"], {}).problems())


def test_every_check_names_its_operation_and_every_adapter_declares_typed_ones() -> None:
    from conformance.adapters import all_adapters
    from conformance.checks import CHECKS

    needed = {c.operation for c in CHECKS.values() if c.operation is not None}
    assert needed == set(Operation)  # each operation is some check's, and no check is keyed by name
    for adapter in all_adapters().values():
        assert all(isinstance(op, Operation) for op in adapter.operations), adapter.name
        assert adapter.opt_in <= set(adapter.operations), adapter.name
