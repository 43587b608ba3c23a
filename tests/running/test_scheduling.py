"""How xdist shares case items out (conformance.run.session.scheduling): contiguous shares by default,
so each worker meets fewer distinct compiled programs; a --dist the user gives is kept."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

CASES = "cases:\n" + "".join(
    f"  - id: c{i:02d}\n    family: Normal\n    params: {{loc: 0.{i}, scale: 2.0}}\n"
    f"    value: [0.5, 1.{i}]\n"
    for i in range(40)
)


def worker_changes(run_suite, tmp_path: Path, monkeypatch, *args: str) -> int:
    """The items in collection order, and how often the worker changes along that order."""
    pytest.importorskip("xdist")
    root = tmp_path / "cases"
    root.mkdir()
    (root / "n.yaml").write_text(CASES)
    log = tmp_path / "ran"
    monkeypatch.setenv("CONFORMANCE_TEST_WORKER_LOG", str(log))
    # Run by `pytest -n`, this test is in a worker itself: the run below must not think so.
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(name, raising=False)
    _, data = run_suite(
        root, "--framework=torch", "--variants=off", "-p", "worker_log", *args, subprocess=True
    )
    ran_by = {
        nodeid: path.name
        for path in tmp_path.glob("ran.gw*")
        for nodeid in path.read_text().split()
    }
    order = [r["nodeid"] for r in data["records"]]
    assert sorted(ran_by) == sorted(order) and len(order) == 160
    assert len(set(ran_by.values())) == 2, "both workers ran items"
    changes = sum(ran_by[a] != ran_by[b] for a, b in itertools.pairwise(order))
    return changes


def test_each_worker_runs_contiguous_shares_of_the_items(run_suite, tmp_path, monkeypatch) -> None:
    changes = worker_changes(run_suite, tmp_path, monkeypatch, "-n", "2")
    assert changes <= 6  # a share each, and what an idle worker took from the other's back


def test_a_dist_mode_the_user_gives_is_kept(run_suite, tmp_path, monkeypatch) -> None:
    changes = worker_changes(run_suite, tmp_path, monkeypatch, "-n", "2", "--dist=load")
    assert changes >= 10  # xdist's own load: items handed out in turn, a few at a time
