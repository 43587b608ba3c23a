"""A failing sampling item carries a script that draws with the framework from the item's own
seed, as the adapter drew, and tests the draws with the check's own statistics (scipy's special
functions): it exits 1 with MISMATCH where the item failed, 0 where it passed, and no script is
written where a script could not see the failure (a projection's law, a vector draw inside the
reals but outside the support)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import make_case, subject_for
from test_reproducer import ruff_check, run_script

from conformance.checks import CHECKS
from conformance.mutants import activate
from conformance.reproducers import render as reproducer

# Real failures on the pinned releases, each a known-failure entry (docs/findings/sampling.md).
GAMMA_TINY = """
- id: tiny-concentrations
  family: Gamma
  params: {concentration: [1.0e-3, 1.0e-10, 1.0e-3], rate: [1.0, 1.0e-3, 1.0e+3]}
  value: [1.0e-3, 2.0, 1.0e-20]
"""
KUMARASWAMY_EXTREMES = """
- id: concentration-extremes
  family: Kumaraswamy
  params: {concentration1: [1.0e-3, 100.0, 0.5], concentration0: [2.0, 0.5, 1.0e-3]}
  value: [0.3, 0.97, 0.4]
"""
INVERSE_WISHART_NEAR_LIMIT = """
- id: scale-concentration-near-lower-limit
  family: InverseWishart
  parametrization: scale_matrix
  params: {concentration: 1.01, scale_matrix: [[2.0, 0.3], [0.3, 1.0]]}
  value: [[1.5, -0.2], [-0.2, 0.7]]
"""
DELTA_CROSS = """
- id: params-cross-broadcast
  family: Delta
  params:
    v: [[0.5, 1.0, 1.5, 2.0]]
    log_density: [[0.1], [-0.2], [3.0]]
  value: [[0.5, 1.0, 1.5, 2.0]]
"""
MIXTURE_CROSS = """
- id: probs-cross-broadcast
  family: MixtureSameFamily
  parametrization: normal_probs
  params:
    probs: {generator: simplex, shape: [3, 1, 2], seed: 21, concentration: 3.0}
    loc: {generator: normal, shape: [1, 2, 2], seed: 22}
    scale: {generator: positive, shape: [1, 2, 2], seed: 23}
  value: {generator: normal, shape: [3, 2], seed: 24}
"""
SINE_BIVARIATE_BIMODAL = """
- id: bimodal
  family: SineBivariateVonMises
  params: {phi_loc: 0.0, psi_loc: 0.0, phi_concentration: [1.0, 2.0], psi_concentration: [1.0, 2.0], correlation: [3.0, -10.0]}
  value: [1.2, -0.8]
"""
ZERO_SUM_BATCHED_SCALE = """
- id: extreme-scales
  family: ZeroSumNormal
  param_dtypes: {event_size: int64}
  params: {scale: [1.0e-4, 1.0e+4], event_size: 3}
  value: [2.0e-4, -1.0e-4, -1.0e-4]
"""
# Healthy draws, continuous and discrete.
NORMAL = """
- id: normal
  family: Normal
  params: {loc: {generator: normal, shape: [3], seed: 1}, scale: 2.0}
  value: {generator: normal, shape: [3], seed: 2}
"""
POISSON = """
- id: poisson
  family: Poisson
  params: {rate: [0.5, 3.0, 40.0]}
  value: [1.0, 2.0, 3.0]
"""


def _item_and_script(text: str, adapter: str, check: str, dtype: str = "float64"):
    subject = subject_for(make_case(text), adapter, dtype)
    with subject.adapter.precision(dtype):
        result = CHECKS[check].run(subject)
    return result, reproducer.render(subject, CHECKS[check], result.message or "x")


@pytest.mark.parametrize(
    ("text", "adapter", "check", "kind", "shown"),
    [
        (GAMMA_TINY, "torch", "sample_fit", "fit", "normal scores"),
        (KUMARASWAMY_EXTREMES, "numpyro", "sample_fit", "fit", "Kolmogorov–Smirnov distance"),
        (INVERSE_WISHART_NEAR_LIMIT, "numpyro", "sample_fit", "sample_support", "not numbers"),
        (DELTA_CROSS, "numpyro", "sample_shapes", "shape", "shape (1, 4), expected (3, 4)"),
        (DELTA_CROSS, "numpyro", "sample_fit", "shape", "expected (2048, 3, 4)"),
        (MIXTURE_CROSS, "torch", "sample_shapes", "raises", "raised RuntimeError"),
        (ZERO_SUM_BATCHED_SCALE, "numpyro", "sample_fit", "shape", "expected (4096, 2, 3)"),
    ],
    ids=[
        "gamma-fit",
        "kumaraswamy-fit",
        "inversewishart-support",
        "delta-shapes",
        "delta-fit-shape",
        "mixture-raises",
        "zerosumnormal-shape",
    ],
)
def test_a_failing_sampling_item_reproduces_standalone(
    tmp_path, text, adapter, check, kind, shown
) -> None:
    result, source = _item_and_script(text, adapter, check)
    assert not result.passed and result.kind == kind, result.message
    assert source is not None
    proc = run_script(source, tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    mismatch = proc.stdout.strip().splitlines()[-1]
    assert mismatch.startswith("MISMATCH") and shown in mismatch, proc.stdout


def test_the_script_reaches_the_items_statistic(tmp_path) -> None:
    """The script draws the item's own draws and runs the check's own statistics on the worst
    element: the statistic it prints is the item's, up to the law's tabulation."""
    result, source = _item_and_script(KUMARASWAMY_EXTREMES, "numpyro", "sample_fit")
    proc = run_script(source, tmp_path)
    printed = float(re.search(r"= (\S+) exceeds", proc.stdout).group(1))
    assert result.metrics["statistic"] in proc.stdout
    assert printed == pytest.approx(result.metrics["value"], rel=1e-3)


@pytest.mark.parametrize("adapter", ["torch", "numpyro"])
@pytest.mark.parametrize("check", ["sample_shapes", "sample_fit"])
@pytest.mark.parametrize("text", [NORMAL, POISSON], ids=["normal", "poisson"])
def test_a_passing_sampling_item_s_script_passes(tmp_path, adapter, check, text) -> None:
    result, source = _item_and_script(text, adapter, check)
    assert result.passed, result.message
    proc = run_script(source, tmp_path)
    assert proc.returncode == 0 and "OK: no mismatch reproduced" in proc.stdout, (
        proc.stdout + proc.stderr
    )
    if check == "sample_fit":  # the fit was tested, not only shapes and support
        assert "Kolmogorov" in proc.stdout or "normal scores" in proc.stdout, proc.stdout


def test_no_script_where_it_could_not_see_the_failure() -> None:
    """NumPyro's SineBivariateVonMises fails on its marginals' laws (projections the oracle
    states): a script without the oracle would print OK, so none is written."""
    result, source = _item_and_script(SINE_BIVARIATE_BIMODAL, "numpyro", "sample_fit")
    assert not result.passed and result.kind == "fit", result.message
    assert source is None


GAMMA_SCALAR = """
- id: scalar
  family: Gamma
  params: {concentration: 2.5, rate: 1.5}
  value: 0.8
"""
INVERSE_GAMMA_EXTREMES = """
- id: parameter-extremes
  family: InverseGamma
  params: {concentration: [1.0e-3, 1000.0, 2.0], rate: [1.0, 1000.0, 1.0e-10]}
  value: [5.0, 1.0, 1.0e-10]
"""


def test_a_pathwise_failure_reproduces_with_the_items_numbers(tmp_path) -> None:
    """torch's Gamma.rsample gradient is approximate (torch-gamma-rsample-grad-approximate):
    the script makes the item's draws and derivatives and finds the item's worst error."""
    result, source = _item_and_script(GAMMA_SCALAR, "torch", "rsample_grad", "float32")
    assert not result.passed and result.kind == "grad", result.message
    proc = run_script(source, tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    printed = float(
        re.search(
            r"MISMATCH: per-draw d draw/d concentration at draw \(\d+,\): err/tol ([0-9.e+-]+)",
            proc.stdout,
        ).group(1)
    )
    assert printed == pytest.approx(result.metrics["max_err_over_tol"], rel=1e-2)


def test_an_overflowing_pathwise_gradient_reproduces(tmp_path) -> None:
    result, source = _item_and_script(INVERSE_GAMMA_EXTREMES, "numpyro", "rsample_grad", "float32")
    assert not result.passed, result.message
    proc = run_script(source, tmp_path)
    assert proc.returncode == 1 and "err/tol inf" in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.parametrize("adapter", ["torch", "numpyro"])
def test_a_passing_pathwise_item_s_script_passes(tmp_path, adapter) -> None:
    result, source = _item_and_script(NORMAL, adapter, "rsample_grad", "float32")
    assert result.passed, result.message
    proc = run_script(source, tmp_path)
    assert proc.returncode == 0 and "OK: no mismatch reproduced" in proc.stdout, (
        proc.stdout + proc.stderr
    )
    assert "per-draw d draw/d loc at draw" in proc.stdout  # compared, not skipped


def test_other_draws_compare_nothing_and_say_so(tmp_path) -> None:
    """The embedded derivatives are the identity's at the item's draws: a script whose draws
    differ (another seed here; another platform in practice) exits 2, neither OK nor MISMATCH."""
    _, source = _item_and_script(GAMMA_SCALAR, "torch", "rsample_grad", "float32")
    seed = re.search(r"^SEED = (\d+)$", source, re.M).group(1)
    proc = run_script(source.replace(f"SEED = {seed}", f"SEED = {int(seed) + 1}"), tmp_path)
    assert proc.returncode == 2 and "DRAWS DIFFER" in proc.stdout, proc.stdout + proc.stderr


RELAXED_TEMPERATURE_BATCH = """
- id: temperature-batch-against-scalar-logits
  family: RelaxedBernoulli
  params: {temperature: [0.5, 1.0, 2.0], logits: 0.3}
  value: 0.4
"""


def test_pathwise_draws_that_raise_reproduce(tmp_path) -> None:
    """torch's RelaxedBernoulli.rsample with a batched temperature raises
    (torch-relaxed-sample-ignores-temperature-batch): the script makes the same call and
    reports the raise, with no expected numbers to embed."""
    result, source = _item_and_script(RELAXED_TEMPERATURE_BATCH, "torch", "rsample_grad", "float32")
    assert not result.passed and result.kind == "raises", result.message
    proc = run_script(source, tmp_path)
    assert proc.returncode == 1 and "MISMATCH: raised RuntimeError" in proc.stdout, (
        proc.stdout + proc.stderr
    )


WISHART = """
- id: cov-literal
  family: Wishart
  parametrization: covariance_matrix
  params: {df: 3.5, covariance_matrix: [[2.0, 0.3], [0.3, 1.0]]}
  value: [[1.5, -0.2], [-0.2, 0.7]]
"""
ZERO_SUM = """
- id: scalar-scale
  family: ZeroSumNormal
  param_dtypes: {event_size: int64}
  params: {scale: 2.0, event_size: 4}
  value: [0.5, -1.0, 0.25, 0.25]
"""


@pytest.mark.parametrize(
    ("text", "adapter", "raised"),
    [(WISHART, "torch", "RuntimeError"), (ZERO_SUM, "numpyro", "ValueError")],
    ids=["torch-wishart", "numpyro-zerosumnormal"],
)
def test_vector_draws_that_raise_reproduce(tmp_path, text, adapter, raised) -> None:
    """A vector draw's per-draw copies carry the parameters' event dimensions and its
    derivatives weight the coordinates: the script makes that call as the adapter made it
    and raises as the item did (torch-wishart-rsample-backward-in-place: rsample((n,))'s
    backward; numpyro-zerosumnormal-batched-scale@rsample-grad: a scale copied per draw)."""
    result, source = _item_and_script(text, adapter, "rsample_grad", "float32")
    assert not result.passed and result.kind == "raises", result.message
    assert "COPIES = {" in source and "WEIGHTS = " in source
    proc = run_script(source, tmp_path)
    assert proc.returncode == 1 and f"MISMATCH: raised {raised}" in proc.stdout, (
        proc.stdout + proc.stderr
    )
    lint = ruff_check(tmp_path / "repro.py")  # run_script wrote it there
    assert lint.returncode == 0, lint.stdout + lint.stderr


def test_a_raise_in_the_expectation_call_gets_that_calls_script() -> None:
    """Where the draws judged draw by draw pass and the in-expectation call (2¹³ draws per
    element) raises, the script makes the call that raised, not the by-draw comparison (which
    would pass and print OK for a failing item)."""
    from conformance.adapters.torch.adapter import TorchAdapter
    from conformance.checks import pathwise_moments

    made = TorchAdapter.pathwise_draws

    def raising(self, binding, params, names, n, seed, **extra):
        if n == pathwise_moments.MOMENT_DRAWS:
            raise RuntimeError("raised by the test in the in-expectation call")
        return made(self, binding, params, names, n, seed, **extra)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(TorchAdapter, "pathwise_draws", raising)
        result, source = _item_and_script(STUDENT_T_SCALAR, "torch", "rsample_grad", "float32")
    assert not result.passed and result.kind == "raises", result.message
    assert f"N = {pathwise_moments.MOMENT_DRAWS}" in source and "NAMES = ['df']" in source
    assert "EXPECTED_AT" not in source  # not the by-draw comparison


@pytest.mark.parametrize(
    ("text", "adapter", "check", "dtype"),
    [
        (GAMMA_SCALAR, "torch", "rsample_grad", "float32"),
        (KUMARASWAMY_EXTREMES, "numpyro", "sample_fit", "float64"),
        (POISSON, "torch", "sample_fit", "float64"),
        (RELAXED_TEMPERATURE_BATCH, "torch", "rsample_grad", "float32"),
        (WISHART, "torch", "rsample_grad", "float32"),
    ],
    ids=["rsample-grad", "fit-cdf", "fit-pmf", "rsample-raises", "rsample-raises-vector"],
)
def test_the_script_is_the_same_whether_the_evaluation_is_reused_or_made_again(
    text, adapter, check, dtype
) -> None:
    """A run writes an item's script right after its evaluation and reuses what it kept; a
    script asked for on its own evaluates the item again: both give the same text."""
    result, reused = _item_and_script(text, adapter, check, dtype)
    fresh = subject_for(make_case(text), adapter, dtype)
    unrelated = subject_for(make_case(NORMAL), "torch", "float64")
    with unrelated.adapter.precision("float64"):
        CHECKS[check].run(unrelated)  # the check's last evaluation is another item's
    assert reproducer.render(fresh, CHECKS[check], result.message or "x") == reused


def test_a_dialect_that_writes_no_draws_compares_nothing_and_says_so(tmp_path) -> None:
    """An adapter whose dialect does not write draws (a third party's) gets a script that
    exits 2, neither OK nor a MISMATCH it did not see."""
    subject = subject_for(make_case(NORMAL), "torch", "float64")
    dialect = subject.adapter.reproducer()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(type(dialect), "draw", lambda self, ctx: None)
        patch.setattr(type(subject.adapter), "reproducer", lambda self: dialect)
        with subject.adapter.precision("float64"):
            CHECKS["sample_fit"].run(subject)
        source = reproducer.render(subject, CHECKS["sample_fit"], "x")
    proc = run_script(source, tmp_path)
    assert proc.returncode == 2 and "NOT COMPARED: no draws written" in proc.stdout, (
        proc.stdout + proc.stderr
    )


REPO = Path(__file__).resolve().parents[2]
STUDENT_T_TINY_DF = """
- id: tiny-df
  family: StudentT
  params: {df: [1.0e-3, 1.0e-3, 0.05], loc: 0.0, scale: 1.0}
  value: [0.0, 100.0, 3.0]
"""
STUDENT_T_SCALAR = """
- id: scalar
  family: StudentT
  params: {df: 3.0, loc: 0.5, scale: 2.0}
  value: -1.2
"""


def test_a_failure_in_expectation_reproduces(tmp_path) -> None:
    """StudentT's df is judged in expectation (bounded test functions): torch's NaN
    derivatives at df = 0.05 (torch-studentt-rsample-grad-nan-small-df) reproduce from the
    item's seed, with the item's count. (NumPyro's infinite ones there show under some seeds
    only: a flaky entry.)"""
    result, source = _item_and_script(STUDENT_T_TINY_DF, "torch", "rsample_grad", "float32")
    assert not result.passed and result.kind == "nan", result.message
    proc = run_script(source, tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    mismatch = proc.stdout.strip().splitlines()[-1]
    assert mismatch.startswith("MISMATCH") and "NaN at finite draws" in mismatch, proc.stdout
    lint = ruff_check(tmp_path / "repro.py")  # the project's rules, as every reproducer
    assert lint.returncode == 0, lint.stdout + lint.stderr
    count = re.search(r"(\d+) of \d+ derivatives", result.message).group(1)
    assert f": {count} derivatives" in mismatch


def _run_under_mutant(path, mutant: str | None) -> subprocess.CompletedProcess:
    """The script with mutant ``mutant`` applied to torch first (the suite imported only for
    that), as a user's patched torch would run it."""
    code = "import runpy, sys\n"
    if mutant:
        code += f"from conformance.mutants import activate\nactivate({mutant!r})\n"
    code += "runpy.run_path(sys.argv[1], run_name='__main__')\n"
    return subprocess.run(
        [sys.executable, "-c", code, str(path)],
        capture_output=True,
        text=True,
        cwd=path.parent,
        check=False,
        timeout=300,
    )


def _failing_item_script(tmp_path: Path, mutant: str, *selection: str) -> tuple[dict, str]:
    """One item run by ``conformance run`` under ``mutant`` in its own process, with NumPyro's
    executable store off: a mutant applied in this test process would be compiled under the
    fingerprint taken before it (the store's documented blind spot) and poison the store the
    other tests share. The item's record and its script."""
    out = tmp_path / "run"
    env = {**os.environ, "CONFORMANCE_MUTANT": mutant, "CONFORMANCE_JAX_CACHE": "off"}
    results = f"--results={out / 'results.json'}"
    proc = subprocess.run(
        [sys.executable, "-m", "conformance", "run", "-n", "0", *selection, results],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        check=False,
        timeout=600,
    )
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    records = json.loads((out / "results.json").read_text())["records"]
    (record,) = [r for r in records if r["outcome"] != "skipped"]
    (script,) = (out / "reproducers").glob("*.py")
    return record, script.read_text()


def _item_under_mutant_in_process(tmp_path: Path, mutant: str, text: str) -> tuple[dict, str]:
    """A torch item under ``mutant`` in this process (torch keeps no executable store)."""
    patch = activate(mutant)
    try:
        result, source = _item_and_script(text, "torch", "rsample_grad", "float32")
    finally:
        patch.undo()
    record = {"outcome": "passed" if result.passed else "failed", "kind": result.kind}
    return {**record, "metrics": result.metrics}, source


@pytest.mark.parametrize(
    ("mutant", "statistic"),
    [
        ("studentt-rsample-grad-df-half", "g1'(s)*ds/ddf"),
        ("numpyro-beta-sample-grad-half", "ds/dconcentration1"),
    ],
    ids=["bounded-torch", "moments-numpyro"],
)
def test_a_t_statistic_failure_in_expectation_reproduces_with_the_items_number(
    tmp_path, mutant, statistic
) -> None:
    """A sampler whose draws are right and whose derivatives are halved where only a mean can
    see it (mutants: torch StudentT's chi-square gradient, judged by bounded test functions;
    NumPyro's Beta, by its moments) fails in expectation; its script, run against the same
    patched framework, reaches the item's |t|, and against the real one passes having
    compared."""
    if mutant.startswith("numpyro"):
        record, source = _failing_item_script(
            tmp_path,
            mutant,
            "--framework=numpyro",
            "--family=Beta",
            "--check=rsample_grad",
            "-k",
            "scalar",  # beta.yaml::scalar, the one such item
        )
    else:
        record, source = _item_under_mutant_in_process(tmp_path, mutant, STUDENT_T_SCALAR)
    assert record["outcome"] == "failed" and record["kind"] == "grad", record
    path = tmp_path / "repro.py"
    path.write_text(source)
    proc = _run_under_mutant(path, mutant)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    printed = float(re.search(r"MISMATCH: .*: \|t\| ([0-9.e+-]+) >", proc.stdout).group(1))
    metrics = record["metrics"]
    if "rsample((n,))" in metrics["statistic"]:  # the item's worst: a test no script writes
        assert printed > metrics["threshold"]
    else:  # the item's own worst test, reached from its seed
        assert printed == pytest.approx(metrics["value"], rel=1e-5)  # printed to 6 digits
    healthy = _run_under_mutant(path, None)
    assert healthy.returncode == 0 and "OK: no mismatch reproduced" in healthy.stdout, (
        healthy.stdout + healthy.stderr
    )
    assert f"mean of {statistic}: worst |t|" in healthy.stdout  # compared, not skipped
