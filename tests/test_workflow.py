"""The reusable GitHub Actions workflow: callable, with the inputs the README's caller uses,
sharding by a matrix and merging with `conformance report`. (No runner here: structure only.)"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent


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
    assert "--shard=${{ matrix.shard }}/${{ inputs.shards }}" in run_steps
    assert "conformance run" in run_steps and "--known-failures" in run_steps
    assert (
        jobs["run"]["strategy"]["matrix"]["shard"] == "${{ fromJSON(needs.plan.outputs.shards) }}"
    )
    report_steps = "\n".join(str(s.get("run", "")) for s in jobs["report"]["steps"])
    assert "conformance report shards/*/results.json" in report_steps
    assert jobs["report"]["if"] == "always()"
