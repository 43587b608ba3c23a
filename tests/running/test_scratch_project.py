"""The suite installed into another project: that project's own pytest options (``--device``,
``--dtype``, ``--shard``, which the plugin once declared too: "option dest 'device' already
used", exit 1) and tests keep working, and the suite runs there, from the wheel.

The scratch project gets a virtual environment of its own with the suite installed as a wheel
(not this checkout: the shipped cases, the oracle and the entry point as a user gets them); the
frameworks come from this environment (a path line, so this checkout's editable install is not
seen), not from the package index.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

CONFTEST = """
def pytest_addoption(parser):
    parser.addoption("--device", default="cpu", help="the project's own device option")
    parser.addoption("--dtype", default="float32")
    parser.addoption("--shard", type=int, default=0)
"""
TEST_MINE = """
def test_the_projects_options_are_its_own(request):
    assert request.config.getoption("--device") == "tpu0"
    assert request.config.getoption("--dtype") == "bfloat16"
    assert request.config.getoption("--shard") == 3
"""
CASE = """\
cases:
  - id: mine
    family: Normal
    params: {loc: 0.0, scale: 2.0}
    value: [0.5, -1.0]
"""


def _run(cmd: list[str], cwd: Path, **kw) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CONFORMANCE_", "PYTEST_"))}
    env.pop("PYTHONPATH", None)
    return subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=900, check=False, **kw
    )


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("scratch")
    venv = root / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = Path(
        _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
             cwd=root).stdout.strip()
    )  # fmt: skip
    (purelib / "frameworks.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    installed = _run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps",
         str(REPO)], cwd=root,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]
    (root / "pytest.ini").write_text("[pytest]\n")
    (root / "conftest.py").write_text(CONFTEST)
    (root / "test_mine.py").write_text(TEST_MINE)
    (root / "my_cases").mkdir()
    (root / "my_cases" / "normal.yaml").write_text(textwrap.dedent(CASE))
    return root


def _bin(root: Path, name: str) -> str:
    return str(root / ".venv" / "bin" / name)


def test_the_suite_comes_from_the_wheel(scratch: Path) -> None:
    proc = _run([_bin(scratch, "python"), "-c", "import conformance; print(conformance.__file__)"],
                cwd=scratch)  # fmt: skip
    assert proc.stdout.startswith(str(scratch / ".venv")), proc.stdout + proc.stderr


def test_the_projects_own_tests_keep_their_options(scratch: Path) -> None:
    proc = _run(
        [_bin(scratch, "python"), "-m", "pytest", "-p", "no:cacheprovider", "test_mine.py",
         "--device", "tpu0", "--dtype=bfloat16", "--shard", "3"], cwd=scratch,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "1 passed" in proc.stdout


def test_one_pytest_run_holds_the_projects_tests_and_the_suite(scratch: Path) -> None:
    """The project's options and the suite's side by side, each with its own value."""
    results = scratch / "both" / "results.json"
    proc = _run(
        [_bin(scratch, "python"), "-m", "pytest", "-p", "no:cacheprovider", "test_mine.py",
         "--device=tpu0", "--dtype=bfloat16", "--shard=3",
         "--conformance-cases=my_cases", "--conformance-device=cpu",
         "--conformance-framework=torch", "--conformance-dtype=float64",
         "--conformance-check=log_prob", "--conformance-edges=off",
         f"--conformance-results={results}"], cwd=scratch,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    records = json.loads(results.read_text())["records"]
    assert {(r["framework"], r["dtype"], r["device"], r["outcome"]) for r in records} == {
        ("torch", "float64", "cpu", "passed")
    }
    assert f"{len(records) + 1} passed" in proc.stdout  # the suite's items and the project's test


def test_the_conformance_command_runs_the_shipped_cases_there(scratch: Path) -> None:
    proc = _run(
        [_bin(scratch, "conformance"), "run", "-n", "0", "--quick", "--family", "Normal",
         "--framework", "torch", "--dtype", "float32", "--check", "log_prob", "-q"],
        cwd=scratch,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    data = json.loads((scratch / "reports" / "results.json").read_text())
    files = {r["file"] for r in data["records"]}
    assert "cases/normal.yaml" in files and data["run"]["counts"]["passed"] > 0
    assert all(r["family"] == "Normal" and r["framework"] == "torch" for r in data["records"])
