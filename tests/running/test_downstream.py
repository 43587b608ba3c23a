"""A downstream project, end to end: an adapter installed by pip and found by entry point, the
project's own case dir and known-failures file, a sharded run merged into one report, and strict
mode failing on a known failure that now passes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "scipy_adapter"


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("downstream")
    site = root / "site"
    # A real pip install of the example package: its dist-info carries the entry point.
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(site),
            str(EXAMPLE),
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert (
        next(site.glob("conformance_scipy-*.dist-info")) / "entry_points.txt"
    ).read_text().count("conformance_scipy:ScipyAdapter") == 1
    shutil.copytree(EXAMPLE / "cases", root / "cases")
    shutil.copy(EXAMPLE / "known_failures.yaml", root / "known_failures.yaml")
    env = {**os.environ, "PYTHONPATH": str(site)}
    return {"root": root, "env": env}


def conformance(project: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "conformance.cli", *args],
        cwd=project["root"],
        env=project["env"],
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )


def base_args(*extra: str) -> list[str]:
    return [
        "run",
        "--framework=scipy",
        "--cases=cases",
        "--known-failures=known_failures.yaml",
        "-q",
        *extra,
    ]


def full_run(project: dict) -> dict:
    """Runs the unsharded job once per module; xdist may schedule any test first."""
    if "full" not in project:
        proc = conformance(project, *base_args("--results=full/results.json"))
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
        project["full"] = json.loads((project["root"] / "full" / "results.json").read_text())
    return project["full"]


def test_entry_point_adapter_runs_green_with_its_known_failures(project) -> None:
    data = full_run(project)
    outcomes = data["run"]["counts"]
    assert outcomes["failed"] == 0 and outcomes["xfailed"] > 0 and outcomes["passed"] > 0
    assert {r["framework"] for r in data["records"]} == {"scipy"}
    xfailed = [r for r in data["records"] if r["outcome"] == "xfailed"]
    assert all(r["known_failures"] for r in xfailed)
    assert any(
        k["id"] == "scipy-mvn-no-batched-covariance" for r in xfailed for k in r["known_failures"]
    )


def test_sharded_run_merges_into_the_same_report(project) -> None:
    full = full_run(project)
    shards = []
    for k in (1, 2, 3):
        proc = conformance(
            project, *base_args(f"--shard={k}/3", f"--results=shard{k}/results.json")
        )
        assert proc.returncode == 0, proc.stdout[-2000:]
        shards.append(json.loads((project["root"] / f"shard{k}" / "results.json").read_text()))
    ids = [r["nodeid"] for s in shards for r in s["records"]]
    assert len(ids) == len(set(ids)) == len(full["records"])
    assert set(ids) == {r["nodeid"] for r in full["records"]}
    merged = conformance(
        project, "report", *(f"shard{k}/results.json" for k in (1, 2, 3)), "-o", "merged/index.html"
    )
    assert merged.returncode == 0, merged.stdout + merged.stderr
    html = (project["root"] / "merged" / "index.html").read_text()
    assert str(len(full["records"])) in html


def test_strict_mode_fails_on_a_known_failure_that_now_passes(project) -> None:
    stale = project["root"] / "stale.yaml"
    stale.write_text(
        "known_failures:\n"
        "  - id: normal-was-broken\n"
        "    framework: scipy\n"
        "    case: normal-batched\n"
        "    dtype: float64\n"
        "    check: log_prob\n"
        "    kind: value\n"
        "    reason: fixed upstream since\n"
        "  - id: matches-nothing\n"
        "    framework: scipy\n"
        "    family: Normal\n"
        "    case: no-such-case\n"
        "    kind: value\n"
        "    reason: stale\n"
    )
    strict = conformance(
        project, *base_args("--known-failures=stale.yaml", "--results=strict/results.json")
    )
    assert strict.returncode == 1, strict.stdout[-2000:]
    assert "XPASS(strict)" in strict.stdout and "normal-was-broken" in strict.stdout
    assert "known failure 'matches-nothing'" in strict.stdout and "matched no item" in strict.stdout
    data = json.loads((project["root"] / "strict" / "results.json").read_text())
    assert [s["id"] for s in data["run"]["stale_known_failures"]] == ["matches-nothing"]
    assert data["run"]["stale_known_failures_judged"] is True
    # A run that samples items (here --quick) cannot tell what the entry names: no warning.
    sampled = conformance(
        project,
        *base_args(
            "--known-failures=stale.yaml",
            "--no-strict-known-failures",
            "--quick",
            "--results=sampled/results.json",
        ),
    )
    assert "matched no item" not in sampled.stdout, sampled.stdout[-2000:]
    data = json.loads((project["root"] / "sampled" / "results.json").read_text())
    assert data["run"]["stale_known_failures"] == []
    assert data["run"]["stale_known_failures_judged"] is False
    relaxed = conformance(
        project,
        *base_args(
            "--known-failures=stale.yaml",
            "--no-strict-known-failures",
            "--results=relaxed/results.json",
        ),
    )
    assert relaxed.returncode == 0, relaxed.stdout[-2000:]
    records = json.loads((project["root"] / "relaxed" / "results.json").read_text())["records"]
    xpassed = [r for r in records if r["outcome"] == "xpassed"]
    assert [r["case"] for r in xpassed] == ["normal-batched"]


def test_a_failure_of_another_kind_still_fails(project) -> None:
    wrong_kind = project["root"] / "wrong_kind.yaml"
    wrong_kind.write_text(
        "known_failures:\n"
        "  - id: says-value\n"
        "    framework: scipy\n"
        "    case: mvn-batched-cov\n"
        "    kind: value\n"
        "    reason: recorded as a wrong value, but it raises\n"
    )
    proc = conformance(
        project,
        "run",
        "--framework=scipy",
        "--cases=cases",
        "--known-failures=wrong_kind.yaml",
        "--no-builtin-known-failures",
        "-k",
        "mvn-batched-cov and float64 and log_prob",
        "--variants=off",
        "--results=kind/results.json",
    )
    assert proc.returncode == 1
    assert (
        "known failure says-value expects kind ['value'], but this failure is of kind 'raises'"
        in proc.stdout
    )


def test_list_shows_the_adapter_and_the_project_cases(project) -> None:
    proc = conformance(project, "list", "--framework=scipy", "--cases=cases")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "scipy" in proc.stdout and "MultivariateNormal" in proc.stdout


@pytest.mark.parametrize(
    "selection",
    [["--dtype=float64"], ["-k", "normal-batched"], ["--shard=1/2"]],
    ids=["dtype-filter", "keyword", "shard"],
)
def test_stale_warnings_account_for_the_runs_filters(project, selection: list[str]) -> None:
    """The project's own entries (float32-only ones, one for the MVN cases) matched no item in
    these runs only because the run left their items out: no stale warning. Once a run that
    selected everything warned that every float32-only entry was stale under --dtype=float64."""
    name = "-".join(selection).strip("-").replace("=", "-").replace("/", "-")
    proc = conformance(project, *base_args(*selection, f"--results={name}/results.json"))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "matched no item" not in proc.stdout
    data = json.loads((project["root"] / name / "results.json").read_text())
    assert data["run"]["stale_known_failures"] == []
    assert data["records"]  # the run ran something: the check compared a real selection
