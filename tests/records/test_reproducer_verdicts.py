"""A reproducer reaches its item's verdict with the item's own numbers: the same numerical path
(GPyTorch's iterative settings), the same declared tolerance, the same expected arrays.

GPyTorch's iterative path estimates the log-determinant: on this case it is 0.023 nats off,
inside the binding's declared 10% and far outside the float64 tolerance. A script that took the
Cholesky path would print an error near 1e-15; one that ignored the declared tolerance would
call a passing item a mismatch.
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
from helpers import make_case, subject_for
from test_reproducer import run_script

from conformance.adapters import all_adapters
from conformance.checks import CHECKS
from conformance.operations import GRADIENTS
from conformance.reproducers import render as reproducer

ITERATIVE = """
- id: iterative
  family: MultivariateNormal
  parametrization: covariance_matrix
  params:
    loc: {generator: normal, shape: [6], seed: 111}
    covariance_matrix: {generator: spd, shape: [2, 6, 6], seed: 112}
  value: {sample: {seed: 113, sample_shape: [3]}}
"""


def _verdicts(subject, check: str, tmp_path):
    with subject.adapter.precision(subject.dtype):
        result = CHECKS[check].run(subject)
    proc = run_script(reproducer.render(subject, CHECKS[check], result.message or "x"), tmp_path)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    return result, proc


def _tightened(subject, rtol: float):
    """The same item with a binding that declares a much tighter tolerance."""
    binding = subject.binding.model_copy(update={"tolerance": {"rtol": rtol}})
    return dataclasses.replace(subject, binding=binding)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_iterative_log_prob_reproducer_takes_the_items_path_and_tolerance(tmp_path, dtype) -> None:
    subject = subject_for(make_case(ITERATIVE), "gpytorch.iterative", dtype)
    result, proc = _verdicts(subject, "log_prob", tmp_path)
    assert result.passed and result.metrics["max_abs_err"] > 1e-3  # the iterative path ran
    assert proc.returncode == 0 and "OK: no mismatch reproduced" in proc.stdout, proc.stdout
    assert "max_cholesky_size(0)" in reproducer.render(subject, CHECKS["log_prob"], "x")
    printed = float(re.search(r"max abs err (\S+)", proc.stdout).group(1))
    assert printed == pytest.approx(result.metrics["max_abs_err"], rel=1e-6)


def test_declared_tolerance_decides_both_verdicts(tmp_path) -> None:
    subject = subject_for(make_case(ITERATIVE), "gpytorch.iterative", "float64")
    strict = _tightened(subject, 1e-4)
    result, proc = _verdicts(strict, "log_prob", tmp_path)
    assert not result.passed and result.kind == "value", result.message
    assert proc.returncode == 1 and "MISMATCH" in proc.stdout, proc.stdout


@pytest.mark.parametrize(
    "method", sorted(set(all_adapters()["gpytorch.iterative"].operations) & GRADIENTS)
)
def test_iterative_gradient_reproducer_matches_the_item(tmp_path, method) -> None:
    subject = subject_for(make_case(ITERATIVE), "gpytorch.iterative", "float64")
    result, proc = _verdicts(subject, method, tmp_path)
    assert result.passed, result.message
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # The covariance's gradient is declared not comparable; the script skips it as the check does.
    assert "'covariance_matrix': 'none'" in reproducer.render(subject, CHECKS[method], "x")


def test_iterative_path_does_not_depend_on_what_ran_before() -> None:
    """Its probes come from a seeded RNG, not from the process's history (which made the
    same item pass on one run and fail on the next)."""
    import torch

    subject = subject_for(make_case(ITERATIVE), "gpytorch.iterative", "float64")
    seen = []
    for seed in (1, 2):
        torch.manual_seed(seed)
        torch.randn(1000)  # whatever an earlier item drew
        with subject.adapter.precision("float64"):
            seen.append(CHECKS["log_prob"].run(subject).metrics["max_abs_err"])
    assert seen[0] == seen[1]
    assert torch.initial_seed() == 2  # the caller's RNG state is left alone


# p = 1 with k = 0 is impossible: the oracle's log_prob is -inf and its ∂/∂probs is infinite
# (with an infinite tolerance), while torch clamps the probability and answers finite numbers.
IMPOSSIBLE_BINOMIAL = """
- id: impossible
  family: Binomial
  params: {total_count: [5, 5], probs: [1.0, 0.3]}
  value: [0, 2]
"""


@pytest.mark.parametrize("check", ["log_prob", "grad"])
def test_a_missed_infinity_fails_the_item_and_its_script_alike(tmp_path, check) -> None:
    """A finite answer where the oracle's is infinite is infinitely wrong, whatever the
    tolerance; the script judged inf/inf = NaN as "not over 1" and printed OK before."""
    subject = subject_for(make_case(IMPOSSIBLE_BINOMIAL), "torch", "float32")
    result, proc = _verdicts(subject, check, tmp_path)
    assert not result.passed and "1 of 2 elements outside tolerance" in result.message
    assert result.metrics.get("max_err_over_tol", np.inf) == np.inf
    assert proc.returncode == 1 and "MISMATCH" in proc.stdout, proc.stdout
