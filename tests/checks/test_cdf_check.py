"""The ``cdf`` check: F held to the oracle wherever the parameters are valid (0 and 1 outside
the support included), a validation error accepted where an input is invalid, and each fault
flagged."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from helpers import make_case, run_check

from conformance.adapters.torch.adapter import TorchAdapter

INSIDE = """
- id: c
  family: Normal
  params:
    loc: [0.5, -1.0, 2.0]
    scale: [[1.5], [0.25]]
  value: [0.0, -1.2, 5.0]
"""
OUTSIDE = """
- id: c
  family: Exponential
  params:
    rate: [0.5, 2.0]
  value: [-1.0, 3.0]
"""


class FaultyCdf(TorchAdapter):
    """torch, with its cdf changed by ``fault``."""

    name = "fake.cdf"

    def __init__(self, fault: str) -> None:
        self.fault = fault

    def cdf(self, binding, params, value) -> Any:
        found = super().cdf(binding, params, value)
        if self.fault == "raises":
            raise RuntimeError("boom")
        if self.fault == "shape":
            return found[0]
        if self.fault == "dtype":
            return found.double()
        return 1.0 - found  # the survival function


@pytest.mark.parametrize(
    ("fault", "kind", "fragment"),
    [
        ("raises", "raises", "cdf raised RuntimeError: boom"),
        ("shape", "shape", "cdf shape (3,), expected (2, 3)"),
        ("dtype", "dtype", "cdf dtype float64, expected float32"),
        ("survival", "value", "elements outside tolerance"),
    ],
)
def test_a_faulty_cdf_fails(fault: str, kind: str, fragment: str) -> None:
    adapter = FaultyCdf(fault)
    result = run_check(make_case(INSIDE), adapter.name, "float32", "cdf", adapter=adapter)
    assert not result.passed
    assert result.kind == kind
    assert fragment in result.message, result.message


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_torch_passes_and_a_value_outside_the_support_may_raise(dtype: str) -> None:
    assert run_check(make_case(INSIDE), "torch", dtype, "cdf").passed
    outside = run_check(make_case(OUTSIDE), "torch", dtype, "cdf")  # torch validates: raises
    assert outside.passed and "validation_error" in outside.metrics


class Unvalidated(TorchAdapter):
    """torch's Exponential without validation, its cdf as torch gives it or clamped to [0, 1]."""

    name = "fake.unvalidated"

    def __init__(self, clamped: bool) -> None:
        self.clamped = clamped

    def construct(self, binding, params):
        return torch.distributions.Exponential(params["rate"], validate_args=False)

    def cdf(self, binding, params, value) -> Any:
        found = super().cdf(binding, params, value)
        return found.clamp(0.0, 1.0) if self.clamped else found


def test_below_the_support_the_cdf_is_zero() -> None:
    """Without validation torch's Exponential.cdf(-1) is 1 − e^{rate}, negative: a framework
    that does not raise is held to F = 0 below the support."""
    raw = run_check(make_case(OUTSIDE), "fake", "float64", "cdf", Unvalidated(clamped=False))
    assert not raw.passed and raw.kind == "value"
    assert "expected 0, actual -0.6487212707" in raw.message, raw.message
    assert run_check(make_case(OUTSIDE), "fake", "float64", "cdf", Unvalidated(clamped=True)).passed
