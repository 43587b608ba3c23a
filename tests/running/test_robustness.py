"""A framework that aborts, hangs or leaks costs one item; results.json always stays whole.

The end-to-end tests run ``conformance run`` in a subprocess with the fault adapters of
tests/support/fake_adapters.py, on three cases of which only ``faulty`` (its value holds
``FAULT_VALUE``) triggers the fault: the two others must keep their results.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import tracemalloc
from pathlib import Path

import pytest
from fake_adapters import FAULT_VALUE

from conformance.cases.loader import load_case_text
from conformance.cli.command import EXIT_INTERRUPTED
from conformance.cli.run import MAX_WORKER_RESTARTS, with_worker
from conformance.records import results as results_module
from conformance.records.results import load_results, write_atomic
from conformance.run.config.arguments import in_pytest_spelling
from conformance.run.worker import robustness
from conformance.sizes import parse_size

REPO = Path(__file__).resolve().parents[2]
SUPPORT = REPO / "tests" / "support"

CASES = f"""\
cases:
  - id: healthy
    family: Normal
    params: {{loc: 0.0, scale: 2.0}}
    value: [0.5, 1.0]
  - id: faulty
    family: Normal
    params: {{loc: 0.0, scale: 2.0}}
    value: [0.5, {FAULT_VALUE}]
  - id: after
    family: Normal
    params: {{loc: 1.0, scale: 2.0}}
    value: [0.5, 3.0]
"""


def start(
    tmp_path: Path, adapter: str, *args: str, env: dict | None = None, cases: str = CASES
) -> subprocess.Popen:
    root = tmp_path / "cases"
    root.mkdir(exist_ok=True)
    (root / "c.yaml").write_text(cases)
    name = f"fake.{adapter.removesuffix('Adapter').lower()}"
    argv = [
        *("run", f"--cases={root}", f"--adapter=fake_adapters:{adapter}", f"--framework={name}"),
        *("--check=log_prob", "--variants=off", "--dtype=float64", "-p", "no:cacheprovider"),
        *args,
    ]
    full_env = {**os.environ, "PYTHONPATH": str(SUPPORT), **(env or {})}
    return subprocess.Popen(
        [sys.executable, "-m", "conformance.cli", *argv],
        cwd=tmp_path,
        env=full_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=_interruptible,
    )


def _interruptible() -> None:
    """Give the child the default SIGINT disposition: a test run started in the background
    (``bash .ci/run &``) inherits SIGINT ignored, and Python then never sees the Ctrl-C these
    tests send (seen: two ctrl-c tests timed out in a backgrounded clean-clone run)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run(tmp_path: Path, adapter: str, *args: str, cases: str = CASES) -> tuple[int, str, dict]:
    proc = start(tmp_path, adapter, *args, cases=cases)
    out, _ = proc.communicate(timeout=300)
    return proc.returncode, out, load_results(tmp_path / "reports" / "results.json")


def by_case(data: dict) -> dict[str, dict]:
    """One record per collected item, keyed by case id (one framework, dtype and check)."""
    records = data["records"]
    nodeids = [r["nodeid"] for r in records]
    assert len(nodeids) == len(set(nodeids)) == data["run"]["collected"] == 3, nodeids
    assert sum(data["run"]["counts"].values()) == 3
    return {r["case"]: r for r in records}


def assert_others_kept(records: dict[str, dict]) -> None:
    for case in ("healthy", "after"):
        assert records[case]["outcome"] == "passed", records[case]
        assert records[case]["metrics"]["compared"] == 2


def test_an_abort_costs_its_item_and_the_run_goes_on(tmp_path: Path) -> None:
    code, out, data = run(tmp_path, "AbortAdapter")  # conformance run's default: one worker
    assert code == 1, out
    records = by_case(data)
    assert_others_kept(records)
    crashed = records["faulty"]
    assert crashed["outcome"] == "failed" and crashed["kind"] == "crash", crashed
    assert (
        "crashed while running 'cases/c.yaml::faulty[fake.abort-float64-log_prob]'"
        in (crashed["message"])
    )
    # The worker's faulthandler dump says what happened and where.
    assert "Fatal Python error: Aborted" in crashed["message"]
    assert "fake_adapters.py" in crashed["message"] and "in fault" in crashed["message"]
    assert crashed["framework"] == "fake.abort" and crashed["case"] == "faulty"
    assert data["run"]["workers"] == 1 and not data["run"]["interrupted"]


def test_more_crashes_than_xdist_would_restart_for_still_keep_every_result(tmp_path) -> None:
    faulty = "".join(
        f"  - id: faulty{i}\n    family: Normal\n    params: {{loc: 0.{i}, scale: 2.0}}\n"
        f"    value: [0.5, {FAULT_VALUE}]\n"
        for i in range(5)
    )
    cases = CASES.replace("  - id: after\n", faulty + "  - id: after\n")
    code, out, data = run(tmp_path, "AbortAdapter", cases=cases)
    assert code == 1, out
    outcomes = {r["case"]: (r["outcome"], r["kind"]) for r in data["records"]}
    assert len(data["records"]) == data["run"]["collected"] == 8
    assert outcomes == {
        "healthy": ("passed", None),
        "faulty": ("failed", "crash"),
        **{f"faulty{i}": ("failed", "crash") for i in range(5)},  # 6 > xdist's default 4
        "after": ("passed", None),
    }


def test_a_crash_that_does_not_recur_passes_on_retry_and_keeps_its_crash(tmp_path) -> None:
    flag = tmp_path / "crashed-once"
    proc = start(
        tmp_path,
        "AbortOnceAdapter",
        "--crash-retries=1",
        env={"CONFORMANCE_TEST_CRASH_FLAG": str(flag)},
    )
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 0, out
    assert flag.exists(), "the faulty item must have crashed its first run"
    records = by_case(load_results(tmp_path / "reports" / "results.json"))
    assert_others_kept(records)
    retried = records["faulty"]
    assert retried["outcome"] == "passed", retried
    [crash] = retried["crashes"]
    assert "Fatal Python error: Aborted" in crash and "crashed while running" in crash
    assert "3 passed, 1 crash-retried" in out
    assert "crashes" not in records["healthy"]


def test_a_crash_that_recurs_fails_after_its_retries(tmp_path: Path) -> None:
    code, out, data = run(tmp_path, "AbortAdapter", "--crash-retries=2")
    assert code == 1, out
    records = by_case(data)
    assert_others_kept(records)
    crashed = records["faulty"]
    assert (crashed["outcome"], crashed["kind"]) == ("failed", "crash")
    assert "Fatal Python error: Aborted" in crashed["message"]
    assert len(crashed["crashes"]) == 2  # the two retried runs; the third is the message


def test_a_hang_times_out_even_in_process(tmp_path: Path) -> None:
    started = time.monotonic()
    code, out, data = run(tmp_path, "HangAdapter", "-n", "0", "--item-timeout=5")
    assert code == 1, out
    assert time.monotonic() - started < 120
    records = by_case(data)
    assert_others_kept(records)
    hung = records["faulty"]
    assert hung["outcome"] == "failed" and hung["kind"] == "timeout", hung
    assert "timed out after 5 s (--item-timeout)" in hung["message"]
    assert "in fault" in hung["message"]  # where it was interrupted
    assert data["run"]["workers"] == 0


def test_a_call_stuck_outside_python_is_ended_by_the_hard_timeout(tmp_path: Path) -> None:
    code, out, data = run(tmp_path, "StuckAdapter", "--item-timeout=3")
    assert code == 1, out
    records = by_case(data)
    assert_others_kept(records)
    stuck = records["faulty"]
    assert stuck["outcome"] == "failed" and stuck["kind"] == "timeout", stuck
    assert (
        "did not return to Python (--item-timeout 3 s, ended after 8.75 to 13.75 s)"
        in stuck["message"]
    )
    assert "in fault" in stuck["message"]


def test_the_watchdog_is_armed_once_per_lease_and_released_when_no_case_item_follows(
    monkeypatch,
) -> None:
    """Arming faulthandler's watchdog starts a thread and cancelling joins it (about 1.3 ms):
    consecutive case items share one arming; every item still gets at least the hard timeout."""
    calls: list[tuple] = []
    now = [100.0]
    monkeypatch.setattr(
        robustness.faulthandler,
        "dump_traceback_later",
        lambda seconds, exit, file: calls.append(("arm", now[0], seconds)),
    )
    monkeypatch.setattr(
        robustness.faulthandler, "cancel_dump_traceback_later", lambda: calls.append(("cancel",))
    )
    monkeypatch.setattr(robustness.time, "monotonic", lambda: now[0])
    watchdog = robustness._Watchdog()
    lease = robustness.WATCHDOG_LEASE
    for step in (0.0, 1.0, 1.0, lease - 2.5):  # items starting within the lease
        now[0] += step
        watchdog.arm(10.0, object())
    assert calls == [("arm", 100.0, 10.0 + lease)]
    now[0] += 1.0  # past the lease: armed again, from now
    watchdog.arm(10.0, object())
    assert calls[-1] == ("arm", now[0], 10.0 + lease)
    for armed_at, started in [(100.0, 100.0), (100.0, 100.0 + lease)]:
        assert armed_at + 10.0 + lease >= started + 10.0, "an item gets the whole hard timeout"
    watchdog.arm(20.0, object())  # another timeout: armed at once
    assert calls[-1] == ("arm", now[0], 20.0 + lease)
    watchdog.release()
    watchdog.release()
    assert calls[-1] == ("cancel",) and calls.count(("cancel",)) == 1


def test_a_projects_own_test_after_case_items_is_never_ended_by_their_watchdog(
    tmp_path: Path,
) -> None:
    """A slow test of the project's own, run in the same worker right after case items, runs
    longer than their hard timeout and lease: the watchdog was released before it."""
    own = tmp_path / "test_own.py"
    own.write_text("import time\n\ndef test_slow():\n    time.sleep(12)\n")
    hard = robustness.hard_timeout(1.0) + robustness.WATCHDOG_LEASE
    assert hard < 12
    healthy = CASES.split("  - id: faulty")[0]
    proc = start(
        tmp_path,
        "HangAdapter",
        "--item-timeout=1",
        "-rA",
        str(tmp_path / "cases" / "c.yaml"),
        str(own),
        cases=healthy,
    )
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 0, out
    assert "PASSED test_own.py::test_slow" in out, out
    assert out.index("c.yaml::healthy") < out.index("test_own.py::test_slow"), "case items first"


def test_a_leak_fails_at_the_worker_memory_limit(tmp_path: Path) -> None:
    code, out, data = run(tmp_path, "LeakAdapter", "--worker-memory=2G")
    assert code == 1, out
    records = by_case(data)
    assert_others_kept(records)  # the leaked memory went with the failed call
    leaked = records["faulty"]
    assert leaked["outcome"] == "failed" and leaked["kind"] == "memory", leaked
    assert "log_prob raised MemoryError" in leaked["message"]


@pytest.mark.parametrize(
    ("workers", "signum"),
    [("0", signal.SIGINT), ("1", signal.SIGINT), ("1", signal.SIGTERM)],
    ids=["ctrl-c-in-process", "ctrl-c-xdist", "sigterm-xdist"],
)
def test_ctrl_c_leaves_a_complete_file_marked_interrupted(
    tmp_path: Path, workers: str, signum: int
) -> None:
    results = tmp_path / "reports" / "results.json"
    write_atomic(results, {"run": {"previous": True}, "records": []})
    flag = tmp_path / "in-the-hang"
    proc = start(
        tmp_path,
        "HangAdapter",
        "-n",
        workers,
        "--item-timeout=0",
        env={"CONFORMANCE_TEST_HANG_FLAG": str(flag)},
    )
    deadline = time.monotonic() + 240
    while not flag.exists():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[0]
        time.sleep(0.2)
    proc.send_signal(signum)  # SIGTERM: a cancelled CI job; it must end like Ctrl-C
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == EXIT_INTERRUPTED, out
    data = load_results(results)  # parses: complete, never truncated
    assert data["run"]["interrupted"] is True and "previous" not in data["run"]
    records = by_case(data)
    assert records["healthy"]["outcome"] == "passed"
    for case in ("faulty", "after"):
        assert records[case]["outcome"] == "error" and records[case]["kind"] == "no_result"
    assert records["after"]["message"] == "interrupted before this item ran"
    if workers == "0":  # in-process, the item saw the interrupt itself
        assert records["faulty"]["message"] == "interrupted while this item ran"
    assert not list(results.parent.glob(".results.json.*.tmp"))


def test_an_interrupted_write_keeps_the_previous_file(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "results.json"
    write_atomic(path, {"run": {"n": 1}, "records": [{"nodeid": "a"}]})
    before = path.read_bytes()

    def interrupted(record) -> str:  # the header is written; the records are not
        raise KeyboardInterrupt

    monkeypatch.setattr(results_module, "_encoded", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(path, {"run": {"n": 2}, "records": [{"nodeid": "b"}]})
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]


# ----- the pieces -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "worker"),
    [
        (["--family=Normal"], True),
        (["-n", "0"], False),
        (["-n0"], False),
        (["-nauto"], False),
        (["--numprocesses=2"], False),
        (["--dist", "loadfile"], False),
        (["--pdb"], False),
        (["--collect-only"], False),
        (["--color=yes", "--dtype=float32", "--durations=5"], True),
    ],
)
def test_conformance_run_uses_one_worker_unless_told_otherwise(args, worker, monkeypatch) -> None:
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    restarts = f"--max-worker-restart={MAX_WORKER_RESTARTS}"
    assert with_worker(args) == [*args, restarts, *(["-n", "1"] if worker else [])]


def test_xdist_switched_off_or_configured_is_left_alone(monkeypatch) -> None:
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    for args in (["-p", "no:xdist"], ["-pno:xdist"], ["-n", "2", "--max-worker-restart=3"]):
        assert with_worker(args) == args
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p no:xdist")
    assert with_worker(["--family=Normal"]) == ["--family=Normal"]


@pytest.mark.parametrize(
    ("text", "size"),
    [("8G", 8 << 30), ("512M", 512 << 20), ("1.5GiB", 3 << 29), ("1000", 1000), ("off", None)],
)
def test_parse_size(text: str, size: int | None) -> None:
    assert parse_size(text) == size


def test_parse_size_refuses_nonsense() -> None:
    with pytest.raises(ValueError, match="not a size"):
        parse_size("lots")


def test_a_dump_keeps_the_error_and_the_frameworks_frames() -> None:
    dump = textwrap.dedent(
        """\
        Fatal Python error: Aborted

        Thread 0x00007f01 (most recent call first):
          File "/venv/lib/python3.11/site-packages/execnet/gateway_base.py", line 534 in read

        Current thread 0x00007f02 (most recent call first):
          File "/venv/lib/python3.11/site-packages/torch/distributions/normal.py", line 9 in log_prob
          File "/venv/lib/python3.11/site-packages/_pytest/runner.py", line 178 in runtest
          File "/venv/lib/python3.11/site-packages/pluggy/_callers.py", line 103 in _multicall

        Extension modules: numpy._core._multiarray_umath, torch._C (total: 2)
        """
    )
    assert robustness.summarize_dump(dump) == (
        "Fatal Python error: Aborted\n\n"
        "Current thread 0x00007f02 (most recent call first):\n"
        '  File "/venv/lib/python3.11/site-packages/torch/distributions/normal.py", line 9 in log_prob'
    )
    crash = robustness.crash_result("worker 'gw0' crashed", dump, 120.0)
    timeout = robustness.crash_result("worker 'gw0' crashed", "Timeout (0:02:35)!\n", 120.0)
    assert crash["kind"] == "crash" and timeout["kind"] == "timeout"
    assert "ended after 155 to 160 s" in timeout["message"]


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("--item-timeout=soon", "--conformance-item-timeout 'soon': expected seconds"),
        ("--worker-memory=lots", "--conformance-worker-memory: not a size"),
        ("--max-elements=0", "--conformance-max-elements '0': expected a positive integer"),
    ],
)
def test_bad_robustness_options_are_usage_errors(pytester, option: str, message: str) -> None:
    # A run with a case root: without one the entry point stays dormant and reads no option.
    pytester.mkdir("cases")
    result = pytester.runpytest(
        *in_pytest_spelling(["--cases=cases", option]), "-p", "no:cacheprovider"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()


# ----- the element cap ---------------------------------------------------------------------------
HUGE = """\
cases:
  - id: huge
    family: Normal
    params:
      loc: {generator: normal, shape: [100000, 100000], seed: 1}
      scale: 1.0
    value: {sample: {seed: 2}}
"""


def test_a_huge_case_is_refused_before_anything_is_allocated() -> None:
    tracemalloc.start()
    try:
        loaded = load_case_text(HUGE, "cases/huge.yaml")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert loaded.cases == []
    (error,) = loaded.errors
    assert str(error).startswith("cases/huge.yaml:5: case 'huge': loc of shape (100000, 100000)")
    assert "10000000000 elements, over the cap of 1000000" in error.message
    assert peak < 5 << 20  # the array would be 80 GB


def test_the_cap_is_an_option(case_dir, run_suite) -> None:
    cases = case_dir({"small.yaml": HUGE.replace("[100000, 100000]", "[4, 4]")})
    _, data = run_suite(cases, "--framework=torch", "--max-elements=10", "--variants=off")
    (record,) = data["records"]
    assert record["outcome"] == "error" and record["kind"] == "case_error"
    assert "loc of shape (4, 4) has 16 elements, over the cap of 10" in record["message"]
    result, data = run_suite(cases, "--framework=torch", "--max-elements=16", "--variants=off")
    result.assert_outcomes(passed=4)
    assert {r["outcome"] for r in data["records"]} == {"passed"}
