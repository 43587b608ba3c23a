"""The ``icdf`` check: F⁻¹ held to the oracle at the probabilities of the case's values (the
far tails and q = 0, 1 included), icdf(cdf(value)) = value, a validation error accepted only
at an invalid parameter, and each fault flagged; its reproducer reproduces."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import numpy as np
import pytest
import torch
from helpers import make_case, run_check, subject_for

from conformance.adapters.torch.adapter import TorchAdapter
from conformance.checks import CHECKS
from conformance.reproducers import render as reproducer

INSIDE = """
- id: c
  family: Normal
  params:
    loc: [0.5, -1.0, 2.0]
    scale: [[1.5], [0.25]]
  value: [0.0, -1.2, 5.0]
"""
#: Exponential with a value below the support (not judged) and one at the lower end (q = 0).
ENDS = """
- id: c
  family: Exponential
  params:
    rate: [0.5, 2.0, 3.0]
  value: [-1.0, 0.0, 3.0]
"""
INVALID = """
- id: c
  family: Exponential
  params:
    rate: [0.5, -2.0]
  value: [1.0, 3.0]
"""
#: Normal's far left tail: torch's erfinv(2q − 1) rounds 2q − 1 to −1 below q ≈ 1e-8 (float32).
LEFT_TAIL = """
- id: c
  family: Normal
  params: {loc: 0.0, scale: 1.0}
  value: [-1.0, -7.0]
"""


class FaultyIcdf(TorchAdapter):
    """torch, with its icdf changed by ``fault``."""

    name = "fake.icdf"

    def __init__(self, fault: str) -> None:
        self.fault = fault

    def icdf(self, binding, params, q) -> Any:
        if self.fault == "raises":
            raise RuntimeError("boom")
        if self.fault == "mirrored":
            return super().icdf(binding, params, 1.0 - q)  # the upper quantile
        found = super().icdf(binding, params, q)
        if self.fault == "shape":
            return found[0]
        if self.fault == "dtype":
            return found.double()
        if self.fault == "one-ulp-of-q":  # q moved by one float32 ulp: still within tolerance
            return super().icdf(binding, params, torch.nextafter(q, torch.ones_like(q)))
        return found


@pytest.mark.parametrize(
    ("fault", "kind", "fragment"),
    [
        ("raises", "raises", "icdf raised RuntimeError: boom"),
        ("shape", "shape", "icdf shape (3,), expected (2, 3)"),
        ("dtype", "dtype", "icdf dtype float64, expected float32"),
        ("mirrored", "value", "elements outside tolerance"),
    ],
)
def test_a_faulty_icdf_fails(fault: str, kind: str, fragment: str) -> None:
    adapter = FaultyIcdf(fault)
    result = run_check(make_case(INSIDE), adapter.name, "float32", "icdf", adapter=adapter)
    assert not result.passed
    assert result.kind == kind
    assert fragment in result.message, result.message


def test_one_ulp_of_q_is_within_tolerance() -> None:
    adapter = FaultyIcdf("one-ulp-of-q")
    assert run_check(make_case(INSIDE), adapter.name, "float32", "icdf", adapter=adapter).passed


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_torch_passes_in_the_bulk_and_at_the_ends(dtype: str) -> None:
    result = run_check(make_case(INSIDE), "torch", dtype, "icdf")
    assert result.passed, result.message
    # value 5 at loc 2, scale 0.25 is 12 scales up: its cdf is 1, which makes no round trip.
    assert result.metrics["compared"] == 6 and result.metrics["round_trip_compared"] == 5
    ends = run_check(make_case(ENDS), "torch", dtype, "icdf")
    assert ends.passed, ends.message
    assert ends.metrics["compared"] == 2  # the value below the support is not judged


def test_q_comes_from_the_case_and_the_ends_are_exact() -> None:
    subject = subject_for(make_case(ENDS), "torch", "float32")
    answer = subject.expectations.icdf
    np.testing.assert_array_equal(answer.judged, [False, True, True])
    assert (
        answer.q[1] == 0.0
        and answer.value[1] == 0.0
        and answer.tolerance[1] <= np.finfo(np.float32).tiny
    )
    assert answer.q[2] == np.float32(-np.expm1(-9.0))  # F(3) at rate 3, rounded to float32
    assert answer.value[2] == pytest.approx(-np.log1p(-answer.q[2]) / 3.0, rel=1e-14)


def test_an_invalid_parameter_may_raise() -> None:
    result = run_check(make_case(INVALID), "torch", "float64", "icdf")
    assert result.passed and "validation_error" in result.metrics


def test_torch_normal_loses_its_far_left_tail() -> None:
    """What the check finds on the pinned torch: −inf for q = Φ(−7) ≈ 1.3e-12 in float32."""
    result = run_check(make_case(LEFT_TAIL), "torch", "float32", "icdf")
    assert not result.passed and result.kind == "inf", result.message
    assert "expected -7" in result.message, result.message


class WrongRoundTrip(TorchAdapter):
    """torch, whose icdf is right at the oracle's probabilities but not at its own cdf's."""

    name = "fake.roundtrip"

    def __init__(self) -> None:
        self.calls = 0

    def icdf(self, binding, params, q) -> Any:
        self.calls += 1
        found = super().icdf(binding, params, q)
        return found if self.calls == 1 else found + 1.0


def test_a_wrong_round_trip_fails() -> None:
    adapter = WrongRoundTrip()
    result = run_check(make_case(INSIDE), adapter.name, "float64", "icdf", adapter=adapter)
    assert not result.passed and result.kind == "value"
    assert "icdf(cdf(value)) is not value" in result.message, result.message


@pytest.mark.parametrize(("case", "code"), [(INSIDE, 0), (LEFT_TAIL, 1)])
def test_the_reproducer_reproduces(case: str, code: int, tmp_path) -> None:
    subject = subject_for(make_case(case), "torch", "float32")
    script = tmp_path / "repro.py"
    source = reproducer.render(subject, CHECKS["icdf"], "x")
    assert source is not None
    script.write_text(source, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert done.returncode == code, done.stdout + done.stderr
    if code:
        assert "MISMATCH: icdf" in done.stdout, done.stdout
