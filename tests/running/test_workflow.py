"""The reusable GitHub Actions workflow: callable, with the inputs the README's caller uses,
sharding by a matrix and merging with `conformance report`. (No runner here: structure only.)"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]


def workflow() -> dict:
    return yaml.safe_load((REPO / ".github" / "workflows" / "conformance.yml").read_text())


def test_is_a_reusable_workflow_with_documented_inputs() -> None:
    wf = workflow()
    call = wf[True]["workflow_call"]  # YAML 1.1 reads the key `on` as True
    inputs = call["inputs"]
    for name in ("framework", "requirements", "cases", "known-failures", "shards", "strict"):
        assert name in inputs, name
    readme = (REPO / "README.md").read_text()
    caller = re.search(r"uses: .*conformance\.yml@main\n    with:\n((?:      .+\n)+)", readme)
    assert caller, "README shows a caller"
    used = [line.split(":")[0].strip() for line in caller.group(1).splitlines()]
    assert set(used) <= set(inputs), set(used) - set(inputs)


def test_shards_run_in_a_matrix_and_a_report_job_merges_them() -> None:
    jobs = workflow()["jobs"]
    run_steps = "\n".join(str(s.get("run", "")) for s in jobs["run"]["steps"])
    assert '--shard="$SHARD/$SHARDS"' in run_steps
    shard_env = next(
        s["env"] for s in jobs["run"]["steps"] if "conformance run" in s.get("run", "")
    )
    assert (
        shard_env["SHARD"] == "${{ matrix.shard }}"
        and shard_env["SHARDS"] == "${{ inputs.shards }}"
    )
    assert "conformance run" in run_steps and "--known-failures" in run_steps
    assert (
        jobs["run"]["strategy"]["matrix"]["shard"] == "${{ fromJSON(needs.plan.outputs.shards) }}"
    )
    report_steps = "\n".join(str(s.get("run", "")) for s in jobs["report"]["steps"])
    assert "conformance report shards/*/results.json" in report_steps
    assert jobs["report"]["if"] == "always()"


def _steps() -> list[dict]:
    return [step for job in workflow()["jobs"].values() for step in job["steps"]]


def test_no_input_is_written_into_a_script_and_actions_are_pinned() -> None:
    # Inputs reach shell scripts through env: only (a value written into `run:` is code).
    for step in _steps():
        assert "${{" not in step.get("run", "").replace("${{ matrix.shard }} of", ""), step
        uses = step.get("uses")
        if uses:
            assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", uses), uses
        if str(uses).startswith("actions/checkout@"):
            assert step["with"]["persist-credentials"] is False
    assert workflow()["permissions"] == {"contents": "read"}


def test_the_jax_cache_is_kept_per_shard_and_framework_versions() -> None:
    cache = next(s for s in _steps() if str(s.get("uses", "")).startswith("actions/cache@"))
    assert cache["with"]["path"] == "~/.cache/conformance/jax"
    key = cache["with"]["key"]
    assert "steps.versions.outputs.key" in key and "matrix.shard" in key
    assert key.rsplit("-", 1)[0] + "-" in cache["with"]["restore-keys"]
