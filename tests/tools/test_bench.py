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


def test_targets_follow_the_selection_they_are_set_for() -> None:
    """The full default run is held to 400 s and 150 items/s, --quick to 60 s warm and 150 s
    cold; other selections to neither (a 60 s bound on a shard or one framework means nothing)."""
    from conformance.bench.runner import run_targets, summarise

    full = run_targets([], cold=False)
    assert {k: v[1:] for k, v in full.items()} == {
        "wall_s_n2": (400.0, False),
        "items_per_s_n2": (150.0, True),
    }
    assert run_targets(["--quick"], cold=False)["wall_s_n2"][1] == 60.0
    assert run_targets(["--quick"], cold=True)["wall_s_n2"][1] == 150.0
    assert run_targets(["--framework=torch"], cold=False) == {}
    assert run_targets([], cold=True) == {}

    def run(wall: float, items: int) -> dict:
        return {
            "workers": 2, "wall_s": wall, "items": items, "items_per_s": round(items / wall, 1),
            "collection_s": 1.0, "phases_s": {"oracle": 1.0, "framework": 10.0},
            "included_s": {}, "oracle_share": 0.05, "memory_releases": 0,
            "peak_rss_mb": 2000.0, "report_s": 1.0,
        }  # fmt: skip

    fast = summarise([run(180.0, 28_800)], [], [1.0], [], full)["targets"]
    assert fast["wall_s_n2"]["met"] and fast["items_per_s_n2"]["met"]
    slow = summarise([run(230.0, 28_800)], [], [1.0], [], full)["targets"]
    assert slow["wall_s_n2"]["met"] and not slow["items_per_s_n2"]["met"]
    assert slow["items_per_s_n2"]["measured"] == 125.2
