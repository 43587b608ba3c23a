"""`conformance bench` in its tiny mode, so the benchmark cannot rot: it runs the suite and the
bare loop for real and its figures hang together."""

from __future__ import annotations

import json
import subprocess
import sys


def test_tiny_bench_measures_suite_baseline_and_phases(tmp_path) -> None:
    out = tmp_path / "bench.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "conformance.cli",
            "bench",
            "--tiny",
            "--workers=0",
            f"--output={out}",
            "--check=log_prob",
        ],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    data = json.loads(out.read_text())
    run = data["runs"][0]
    assert run["workers"] == 0 and run["exit_code"] == 0
    assert run["items"] > 0 and run["counts"]["passed"] == run["items"]
    # Both frameworks ran, so both spent time; the oracle and comparison were timed.
    assert run["phases_s"]["framework"] > 0 and run["phases_s"]["oracle"] > 0
    assert run["phases_s"]["comparison"] > 0
    # JAX compiled, or loaded what an earlier run compiled (the executable store).
    jax_work = run["included_s"].get("jax_compile", 0) + run["events"].get(
        "executable_store_hits", 0
    )
    assert jax_work > 0
    assert run["peak_rss_mb"] > 50
    baseline = data["baselines"][0]
    assert baseline["items"] == run["items"] and baseline["raised"] == 0
    assert 0 < baseline["evaluations_s"] < baseline["bare_s"]
    targets = data["summary"]["targets"]
    assert targets["overhead_ratio"]["measured"] == round(run["wall_s"] / baseline["bare_s"], 3)
    assert {"collection_s_per_5000", "oracle_share", "peak_rss_mb"} <= set(targets)
    inside = run["phases_s"]["framework"] + run["phases_s"]["imports"]
    assert targets["harness_ratio"]["measured"] == round(run["wall_s"] / inside, 3)
    assert 1 < targets["harness_ratio"]["measured"] < targets["overhead_ratio"]["measured"] * 3
    # Collection is measured on the whole suite, not on the tiny selection.
    collection = data["collections"][0]
    assert collection["items"] > 10 * run["items"] and collection["collection_s"] > 0
    assert targets["collection_s_per_5000"]["measured"] == round(
        collection["collection_s"] * 5000 / collection["items"], 3
    )
    assert "bare loop" in proc.stdout and "target" in proc.stdout
