"""The ``moments`` and ``entropy`` checks flag each fault a summary can have (a raise, a
shape, a dtype, a value, a NaN where the oracle has a number) and pass a healthy framework."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from helpers import make_case, run_check

from conformance.adapters.torch.adapter import TorchAdapter

CASE = """
- id: c
  family: Normal
  params:
    loc: [0.5, -1.0, 2.0]
    scale: [[1.5], [0.25]]
  value: 0.0
"""


class FaultySummaries(TorchAdapter):
    """torch, with one summary changed by ``fault``."""

    name = "fake.summaries"

    def __init__(self, summary: str, fault: str) -> None:
        self.summary, self.fault = summary, fault

    def summaries(self, binding, params, names) -> dict[str, Any]:
        found = super().summaries(binding, params, names)
        if self.summary in found:
            found[self.summary] = _fault(found[self.summary], self.fault)
        return found


def _fault(value: torch.Tensor, fault: str) -> Any:
    if fault == "raises":
        return RuntimeError("boom")
    if fault == "shape":
        return value[0]
    if fault == "dtype":
        return value.double()
    if fault == "nan":
        return torch.full_like(value, float("nan"))
    return value * 1.001


@pytest.mark.parametrize(
    ("check", "summary", "fault", "kind", "fragment"),
    [
        ("moments", "variance", "raises", "raises", "variance raised RuntimeError: boom"),
        ("moments", "mean", "shape", "shape", "mean has shape (3,), expected (2, 3)"),
        ("moments", "stddev", "dtype", "dtype", "stddev has dtype float64, expected float32"),
        ("moments", "mode", "nan", "nan", "mode: 6 of 6 elements outside tolerance"),
        ("entropy", "entropy", "value", "value", "entropy: 6 of 6 elements outside tolerance"),
    ],
)
def test_a_faulty_summary_fails_its_item(check, summary, fault, kind, fragment) -> None:
    adapter = FaultySummaries(summary, fault)
    result = run_check(make_case(CASE), adapter.name, "float32", check, adapter=adapter)
    assert not result.passed
    assert result.kind == kind
    assert fragment in result.message, result.message


def test_one_faulty_summary_leaves_the_others_judged() -> None:
    adapter = FaultySummaries("variance", "raises")
    result = run_check(make_case(CASE), adapter.name, "float64", "moments", adapter=adapter)
    assert result.metrics["summaries"] == ["mean", "variance", "stddev", "mode"]
    assert result.metrics["failed"] == 1
    assert result.metrics["mean"]["compared"] == 6


@pytest.mark.parametrize("check", ["moments", "entropy"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_torch_passes(check: str, dtype: str) -> None:
    result = run_check(make_case(CASE), "torch", dtype, check)
    assert result.passed, result.message
