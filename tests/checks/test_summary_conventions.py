"""The declared summary conventions (conformance/registry/summary_conventions.yaml): where the
oracle says a summary is undefined (NaN) or infinite (±inf), a framework's declared answer
passes, the item's metrics say which elements it judged, and nothing else is excused — not a
wrong finite value, not another answer than the declared one. Reproducer scripts apply the
same rule."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from helpers import make_case, run_check, subject_for

from conformance import reference
from conformance.adapters import all_adapters
from conformance.adapters.torch.adapter import TorchAdapter
from conformance.checks import CHECKS
from conformance.compare import by_convention
from conformance.registry import summary_conventions as conventions
from conformance.reproducers import render as reproducer

# ξ = 0.2 (every moment finite), 0.7 (variance +inf), 1.5 (mean and variance +inf).
PARETO = """
- id: c
  family: GeneralizedPareto
  params: {loc: 0.5, scale: 2.0, concentration: [0.2, 0.7, 1.5]}
  value: 1.0
"""
CAUCHY = """
- id: c
  family: Cauchy
  params: {loc: [0.0, 1.0], scale: 2.0}
  value: 0.5
"""


def run_script(source: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """The script run isolated (-I), as tests/records/test_reproducer.py runs them."""
    path = tmp_path / "repro.py"
    path.write_text(source)
    code = "import runpy, sys; runpy.run_path(sys.argv[1], run_name='__main__')"
    return subprocess.run(
        [sys.executable, "-I", "-c", code, str(path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
        timeout=300,
    )


class Faulty(TorchAdapter):
    """torch, with ``summary`` changed by ``fault`` wherever ``where`` holds."""

    name = "fake.conventions"

    def __init__(self, summary: str, fault: Any, where: Any) -> None:
        self.summary, self.fault, self.where = summary, fault, where

    def summaries(self, binding, params, names) -> dict[str, Any]:
        found = super().summaries(binding, params, names)
        if isinstance(found.get(self.summary), torch.Tensor):
            value = found[self.summary]
            found[self.summary] = torch.where(self.where(value), self.fault(value), value)
        return found


def test_the_registry_names_families_and_summaries_the_oracle_has() -> None:
    declared = conventions.summary_conventions()
    assert declared
    for (framework, family, summary), found in declared.items():
        assert framework in {"torch", "numpyro", "gpytorch"}
        assert reference.get_family(family).has_summary(summary), (family, summary)
        assert set(found) <= {"undefined", "infinite"}


def test_a_repeated_declaration_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    entry = "  - {family: Cauchy, summary: [variance], where: undefined, returns: inf, reason: r}\n"
    path.write_text("conventions:\n  torch:\n" + entry + entry)
    with pytest.raises(ValueError, match="twice"):
        conventions.load(path)


def test_the_rule_takes_only_the_oracles_nan_and_inf() -> None:
    expected = np.array([np.nan, np.inf, 1.0, np.nan, -np.inf])
    actual = np.array([np.inf, np.nan, np.nan, np.nan, 3.0])
    found = by_convention(expected, actual, {"undefined": "inf", "infinite": "nan"})
    # the oracle's own NaN (index 3) needs no convention; a finite oracle value never gets one
    assert found.tolist() == [True, True, False, False, False]
    finite = by_convention(expected, actual, {"infinite": "finite"})
    assert finite.tolist() == [False, False, False, False, True]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_declared_conventions_pass_and_are_recorded(dtype: str) -> None:
    result = run_check(make_case(PARETO), "torch", dtype, "moments")
    assert result.passed, result.message
    # torch's mean is NaN at ξ = 1.5, its variance and stddev at ξ = 0.7 and 1.5: +inf there
    assert result.metrics["mean"]["convention"] == {
        "infinite": {"returns": "nan", "count": 1, "elements": [[2]]}
    }
    assert result.metrics["variance"]["convention"]["infinite"]["elements"] == [[1], [2]]
    assert "convention" not in result.metrics["mode"]
    cauchy = run_check(make_case(CAUCHY), "torch", dtype, "moments")
    assert cauchy.passed, cauchy.message
    assert cauchy.metrics["stddev"]["convention"]["undefined"]["count"] == 2


def _finite(value: torch.Tensor) -> torch.Tensor:
    return torch.isfinite(value)


@pytest.mark.parametrize(
    ("fault", "where", "fragment"),
    [
        # a wrong number where the oracle has one: the convention for ξ ≥ 1 does not excuse it
        (lambda v: v * 1.001, _finite, "mean: 2 of 3 elements outside tolerance"),
        # NaN where the oracle has a number: NaN is declared only where the mean is +inf
        (lambda v: torch.full_like(v, float("nan")), _finite, "mean: 2 of 3 elements"),
        # another answer than the declared one where the mean is +inf
        (lambda v: torch.full_like(v, -float("inf")), torch.isnan, "mean: 1 of 3 elements"),
    ],
)
def test_a_convention_excuses_nothing_else(fault, where, fragment) -> None:
    adapter = Faulty("mean", fault, where)
    result = run_check(make_case(PARETO), adapter.name, "float64", "moments", adapter=adapter)
    assert not result.passed
    assert fragment in result.message, result.message


def test_an_undeclared_framework_keeps_the_oracles_answer() -> None:
    # the same faults as torch's own, from a framework that declares nothing
    assert conventions.declared("numpyro", "GeneralizedPareto", "mean") == {}
    expected = np.array([1.0, np.inf])
    assert not by_convention(expected, np.array([1.0, np.nan]), {}).any()


def test_the_reproducer_applies_the_declared_convention(tmp_path: Path) -> None:
    subject = subject_for(make_case(PARETO), "torch", "float64")
    source = reproducer.render(subject, CHECKS["moments"], "x")
    assert source is not None
    assert "CONVENTION_MEAN = {'infinite': 'nan'}" in source
    proc = run_script(source, tmp_path)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "mean: judged by the declared convention {'infinite': 'nan'} at [[2]]" in out


def test_the_reproducer_fails_a_wrong_finite_value_under_a_convention(tmp_path: Path) -> None:
    subject = subject_for(make_case(PARETO), "torch", "float64")
    source = reproducer.render(subject, CHECKS["moments"], "x")
    assert source is not None
    # the oracle's finite mean moved: the script's rule must not excuse it
    source = source.replace("EXPECTED_MEAN = np.array([", "EXPECTED_MEAN = 1.001 * np.array([", 1)
    proc = run_script(source, tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "MISMATCH: mean: 2 of 3 elements outside tolerance" in proc.stdout


def test_every_adapter_package_is_a_registry_key() -> None:
    packages = {adapter.package for adapter in all_adapters().values()}
    assert {framework for framework, _, _ in conventions.summary_conventions()} <= packages
