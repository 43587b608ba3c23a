"""``conformance calibrate``: the sampling items under other seeds, tallied.

Real ``conformance run`` subprocesses on torch's Normal (a few seconds a seed): a correct
sampler has no failure under any seed and the stated probabilities expect almost none; a
sampler whose scale is 5 % too large (the catalogued mutant) fails sample_fit under the seeds,
each failure named, and the command exits 1.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conformance.commands.calibrate import SAMPLING_CHECKS, Tally, _with_sampling_checks
from conformance.records.record import Record

REPO = Path(__file__).resolve().parents[2]
SELECTION = ("--framework=torch", "--family=Normal", "--cases=cases/normal.yaml", "-n", "0")


def _calibrate(tmp_path: Path, *args: str, mutant: str | None = None):
    env = {k: v for k, v in os.environ.items() if k != "CONFORMANCE_MUTANT"}
    if mutant:
        env["CONFORMANCE_MUTANT"] = mutant
        args = (*args, "-p", "conformance.mutants.plugin")
    out = tmp_path / "runs"
    summary = tmp_path / "calibration.json"
    proc = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "calibrate", "--seeds=2",
         f"--out={out}", f"--json={summary}", *SELECTION, *args],
        cwd=REPO, env=env, capture_output=True, text=True, check=False, timeout=900,
    )  # fmt: skip
    return proc, json.loads(summary.read_text())


def test_a_correct_sampler_has_no_failure_under_other_seeds(tmp_path: Path) -> None:
    proc, summary = _calibrate(tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert summary["seeds"] == [1, 2] and summary["failures"] == []
    assert set(summary["item_runs_by_check"]) == set(SAMPLING_CHECKS)
    for seed in ("1", "2"):
        assert summary["per_seed"][seed]["passed"] > 0
        assert (tmp_path / "runs" / f"seed-{seed}" / "results.json").exists()
    # Each sample_fit run states 1e-6: a handful of runs expect far below one failure.
    assert 0 < summary["expected_failures"] < 1e-3
    assert 0 < summary["worst_passing"]["ratio"] < 1
    assert "failures outside the known-failure entries: 0" in proc.stdout


def test_a_sampler_off_by_5_percent_fails_and_each_failure_is_named(tmp_path: Path) -> None:
    proc, summary = _calibrate(tmp_path, "--check=sample_fit", mutant="draws-scale-5pc")
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert summary["failures"] and summary["observed_failure_rate"] > 0.1
    assert {f["seed"] for f in summary["failures"]} == {1, 2}
    first = summary["failures"][0]
    assert first["nodeid"].endswith("-sample_fit]") and "does not fit" in first["message"]
    assert f"seed {first['seed']}: {first['nodeid']}" in proc.stdout


def test_the_tally_counts_judged_runs_and_keeps_the_worst_pass() -> None:
    tally = Tally()
    records = [
        {"nodeid": "a", "check": "sample_fit", "outcome": "passed",
         "metrics": {"item_false_failure_probability": 1e-6, "max_err_over_tol": 0.4}},
        {"nodeid": "b", "check": "sample_fit", "outcome": "failed", "message": "no fit\nmore",
         "metrics": {"item_false_failure_probability": 1e-6, "max_err_over_tol": 3.0}},
        {"nodeid": "c", "check": "rsample_grad", "outcome": "xfailed", "metrics": {}},
        {"nodeid": "d", "check": "rsample_grad", "outcome": "skipped"},
    ]  # fmt: skip
    tally.add(4, [Record.from_json(r) for r in records])
    s = tally.summary()
    assert s["item_runs"] == 2 and s["item_runs_by_check"] == {"sample_fit": 2}
    assert s["failures"] == [{"seed": 4, "nodeid": "b", "message": "no fit"}]
    assert s["worst_passing"] == {"seed": 4, "nodeid": "a", "ratio": 0.4}
    assert s["per_seed"]["4"] == {
        "passed": 1,
        "skipped": 1,
        "xfailed": 1,
        "xpassed": 0,
        "failed": 1,
    }
    assert abs(s["expected_failures"] - 2e-6) < 1e-18


def test_the_sampling_checks_are_added_only_where_no_check_is_named() -> None:
    assert _with_sampling_checks(["-n", "0"])[-1] == f"--check={','.join(SAMPLING_CHECKS)}"
    assert _with_sampling_checks(["--check=sample_fit"]) == ["--check=sample_fit"]
    assert _with_sampling_checks(["--check", "rsample_grad"]) == ["--check", "rsample_grad"]


def test_the_tally_reads_an_items_judgement_in_expectation() -> None:
    """An rsample_grad item judged draw by draw and in expectation states its false-failure
    probability and statistic under ``in_expectation``: both count."""
    tally = Tally()
    record = {
        "nodeid": "cases/x.yaml::a[numpyro-float32-rsample_grad]",
        "check": "rsample_grad",
        "outcome": "passed",
        "metrics": {
            "max_err_over_tol": 0.1,
            "in_expectation": {"item_false_failure_probability": 1e-6, "max_err_over_tol": 0.6},
        },
    }
    tally.add(1, [Record.from_json(record)])
    summary = tally.summary()
    assert summary["expected_failures"] == 1e-6
    assert summary["worst_passing"]["ratio"] == 0.6
