"""The ``kl`` check: kl_divergence(p, q) held to the oracle in value, broadcast shape and
dtype, each fault flagged; +inf and 0 judged as values; reproducers that rebuild both sides."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
import torch
from helpers import make_case, run_check, subject_for

from conformance.adapters.numpyro.adapter import NumpyroAdapter
from conformance.adapters.torch.adapter import TorchAdapter
from conformance.checks import CHECKS
from conformance.reproducers.render import render

CROSS = """
- id: k
  family: Normal
  params:
    loc: [[0.5], [-1.0], [2.0]]
    scale: [[1.5], [0.25], [1.0]]
  kl:
    family: Normal
    params: {loc: [0.0, 0.3, -0.2, 1.0], scale: [1.0, 2.0, 0.5, 1.5]}
"""
NOT_COVERED = """
- id: k
  family: Uniform
  params: {low: [-1.0, 0.2], high: [0.5, 0.8]}
  kl:
    family: Uniform
    params: {low: 0.0, high: 1.0}
"""
EQUAL = """
- id: k
  family: Gamma
  params: {concentration: [2.5, 0.7], rate: [1.5, 3.0]}
  kl:
    family: Gamma
    params: {concentration: [2.5, 0.7], rate: [1.5, 3.0]}
"""


class FaultyKL(TorchAdapter):
    """torch, with its kl_divergence changed by ``fault``."""

    name = "fake.kl"

    def __init__(self, fault: str) -> None:
        self.fault = fault

    def kl_divergence(self, p_binding, p_params, q_binding, q_params) -> Any:
        found = super().kl_divergence(p_binding, p_params, q_binding, q_params)
        if self.fault == "raises":
            raise RuntimeError("boom")
        if self.fault == "shape":
            return found[:, :1]  # p's batch shape, as torch's "always infinite" rules give
        if self.fault == "dtype":
            return found.double()
        if self.fault == "reversed":
            return super().kl_divergence(q_binding, q_params, p_binding, p_params)
        return found * (1 + 1e-4)


@pytest.mark.parametrize(
    ("fault", "kind", "fragment"),
    [
        ("raises", "raises", "kl_divergence raised RuntimeError: boom"),
        ("shape", "shape", "kl shape (3, 1), expected (3, 4)"),
        ("dtype", "dtype", "kl dtype float64, expected float32"),
        ("reversed", "value", "elements outside tolerance"),
        ("relative", "value", "elements outside tolerance"),
    ],
)
def test_a_faulty_kl_fails(fault: str, kind: str, fragment: str) -> None:
    adapter = FaultyKL(fault)
    result = run_check(make_case(CROSS), adapter.name, "float32", "kl", adapter=adapter)
    assert not result.passed
    assert result.kind == kind
    assert fragment in result.message, result.message


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    ("text", "adapter"),
    [
        (CROSS, "torch"),
        (CROSS, "numpyro"),
        (NOT_COVERED, "torch"),  # NumPyro registers no Uniform‖Uniform rule
        (EQUAL, "torch"),
        (EQUAL, "numpyro"),
    ],
    ids=["cross-torch", "cross-numpyro", "inf-torch", "equal-torch", "equal-numpyro"],
)
def test_the_frameworks_pass_broadcast_infinite_and_equal_pairs(
    adapter: str, dtype: str, text: str
) -> None:
    result = run_check(make_case(text), adapter, dtype, "kl")
    assert result.passed, result.message


class Zero(TorchAdapter):
    """torch, answering 0 where KL is +inf (q not covering p)."""

    name = "fake.zero"

    def kl_divergence(self, p_binding, p_params, q_binding, q_params) -> Any:
        found = super().kl_divergence(p_binding, p_params, q_binding, q_params)
        return torch.where(torch.isinf(found), torch.zeros_like(found), found)


def test_a_finite_answer_where_q_does_not_cover_p_fails() -> None:
    adapter = Zero()
    result = run_check(make_case(NOT_COVERED), adapter.name, "float64", "kl", adapter=adapter)
    assert not result.passed and result.kind == "value", result.message


def test_only_kl_cases_get_the_check() -> None:
    plain = make_case("- {id: n, family: Normal, params: {loc: 0.0, scale: 1.0}, value: 0.5}")
    assert CHECKS["kl"].not_applicable(plain) == "not a KL case"
    assert CHECKS["kl"].not_applicable(make_case(CROSS)) is None


def test_a_framework_without_the_rule_has_no_item() -> None:
    case = make_case(EQUAL)
    numpyro, torch_ = NumpyroAdapter(), TorchAdapter()
    # NumPyro registers Gamma‖Gamma; neither registers Normal‖Poisson, which the oracle lacks.
    assert (
        CHECKS["kl"].offered(case, numpyro, numpyro.binding("Gamma", "concentration_rate")) is None
    )
    cross = make_case(CROSS)
    assert CHECKS["kl"].offered(cross, torch_, torch_.binding("Normal", "loc_scale")) is None
    beta = make_case(
        "- {id: b, family: Beta, params: {concentration1: 2.0, concentration0: 3.0}, "
        "kl: {family: Uniform, params: {low: 0.0, high: 1.0}}}"
    )
    assert "registers no KL rule" in CHECKS["kl"].offered(
        beta, numpyro, numpyro.binding("Beta", "concentrations")
    )


@pytest.mark.parametrize(("adapter", "fault"), [("torch", "shape"), ("numpyro", None)])
def test_the_reproducer_rebuilds_both_sides(adapter: str, fault: str | None, tmp_path) -> None:
    """A failing item's script builds p and q as the item did: it reproduces the fault (exit 1)
    and, for a framework that is right, finds nothing (exit 0)."""
    case = make_case(CROSS)
    chosen = FaultyKL(fault) if fault else None
    subject = subject_for(case, adapter if chosen is None else chosen.name, "float32", chosen)
    with subject.adapter.precision("float32"):
        message = CHECKS["kl"].run(subject).message or "kl"
    if fault:  # the fault lives in the adapter: the script meets torch's right answer
        text = render(subject, CHECKS["kl"], message)
        assert text is not None and "kl_divergence(dist, torch.distributions.Normal(" in text
        return
    text = render(subject, CHECKS["kl"], message)
    assert text is not None and "def compiled_kl(loc, scale, q_loc, q_scale)" in text
    script = tmp_path / "repro.py"
    script.write_text(text)
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "OK: no mismatch reproduced" in done.stdout
