"""Each check flags the fault it exists for — against a real framework with one fault injected."""

from __future__ import annotations

import fake_adapters
import pytest
from helpers import make_case, run_check

CASE = """
- id: c
  family: MultivariateNormal
  parametrization: covariance_matrix
  params:
    loc: {generator: normal, shape: [2, 3], seed: 1}
    covariance_matrix: {generator: spd, shape: [3, 3], seed: 2}
  value: {sample: {seed: 3, sample_shape: [4]}}
"""


@pytest.mark.parametrize(
    ("adapter", "check", "kind", "fragments"),
    [
        (
            fake_adapters.RaisingAdapter(),
            "log_prob",
            "raises",
            ["log_prob raised RuntimeError: boom"],
        ),
        (fake_adapters.RaisingAdapter(), "shapes", "raises", ["boom: simulated framework failure"]),
        (fake_adapters.NanAdapter(), "log_prob", "nan", ["returned NaN", "actual nan"]),
        (
            fake_adapters.ShiftedAdapter(),
            "log_prob",
            "value",
            ["8 of 8 elements outside tolerance", "max abs err 0.001"],
        ),
        (
            fake_adapters.WrongBatchAdapter(),
            "shapes",
            "shape",
            ["batch_shape (1, 2), expected (2,)"],
        ),
        (
            fake_adapters.Float64Adapter(),
            "shapes",
            "dtype",
            ["log_prob dtype float64, expected float32"],
        ),
    ],
    ids=["raise-log_prob", "raise-shapes", "nan", "shifted", "wrong-batch", "dtype"],
)
def test_fault_is_flagged(adapter, check, kind, fragments) -> None:
    result = run_check(make_case(CASE), adapter.name, "float32", check, adapter=adapter)
    assert not result.passed
    assert result.kind == kind
    for fragment in fragments:
        assert fragment in result.message, result.message
    # Every mismatch message carries the case, framework + version, dtype, device and shapes.
    assert "cases/t.yaml::c" in result.message
    assert f"framework: {adapter.name} {adapter.version()}, float32, cpu" in result.message
    assert "covariance_matrix (3, 3), value (4, 2, 3) → log_prob (4, 2)" in result.message


def test_value_mismatch_message_names_worst_element_and_tolerance() -> None:
    adapter = fake_adapters.ShiftedAdapter()
    result = run_check(make_case(CASE), adapter.name, "float64", "log_prob", adapter=adapter)
    m = result.metrics
    assert m["max_abs_err"] == pytest.approx(1e-3, rel=1e-6)
    assert m["max_err_over_tol"] > 1
    assert len(m["worst_index"]) == 2
    assert (
        f"expected {m['expected_at_worst']:.10g}, actual {m['actual_at_worst']:.10g}"
        in result.message
    )
    assert "tolerance" in result.message


def test_healthy_adapter_passes_the_same_case() -> None:
    for check in ("shapes", "log_prob"):
        assert run_check(make_case(CASE), "torch", "float32", check).passed


def test_a_value_dtype_the_binding_refuses_but_the_framework_accepts_is_a_verdict() -> None:
    """A binding that declares it accepts only integer values must raise TypeError on a float
    one; a framework that returns a log_prob instead fails with kind ``no_type_error`` (the kind
    was not declared, so the check raised and the item became a harness error)."""
    import dataclasses

    from helpers import subject_for

    from conformance.checks import CHECKS
    from conformance.kinds import KINDS

    subject = subject_for(make_case(CASE), "torch", "float32")
    refusing = subject.binding.model_copy(update={"value_dtypes": ("int64",)})
    subject = dataclasses.replace(subject, binding=refusing)
    assert subject.expects_type_error
    with subject.adapter.precision("float32"):
        result = CHECKS["log_prob"].run(subject)
    assert (result.passed, result.kind) == (False, "no_type_error")
    assert "must raise TypeError, but it returned" in result.message
    assert "no_type_error" in KINDS


def test_kinds_and_check_names_are_declared_only() -> None:
    """A kind or a check name nobody declared cannot be made (the enum refuses it), so a
    misspelt one fails where it is written, not as an item no known-failure entry can name;
    both read as their plain strings wherever a record, id or message shows them."""
    import json

    from conformance.check_names import CheckName
    from conformance.checks import CHECKS, _registry
    from conformance.checks.base import CheckResult
    from conformance.checks.shapes import ShapesCheck
    from conformance.kinds import Kind

    with pytest.raises(ValueError, match="'valu' is not a valid Kind"):
        CheckResult(False, "valu")  # type: ignore[arg-type]  # the point: a str is refused
    assert CheckResult(False, "value").kind is Kind.VALUE  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        CheckName("finit")

    class Unnamed(ShapesCheck):
        name = "finite"  # type: ignore[assignment]  # the point: a plain str is refused

    with pytest.raises(TypeError, match=r"declare it in conformance/check_names\.py"):
        _registry(Unnamed())
    assert all(isinstance(name, CheckName) for name in CHECKS)
    assert json.dumps({CheckName.LOG_PROB: Kind.NAN}) == '{"log_prob": "nan"}'
    assert (
        f"[{Kind.NO_TYPE_ERROR}] {CheckName.GRAD_FUNCTIONAL}" == "[no_type_error] grad_functional"
    )
