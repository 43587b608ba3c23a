"""Installing the suite leaves other projects' pytest runs as they were: the entry point is
dormant without case files (no header lines, no hooks, no framework or oracle imports)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CONFTEST = """
import sys

def pytest_unconfigure(config):
    loaded = sorted(
        m for m in sys.modules
        if m.split(".")[0] in ("conformance", "numpy", "scipy", "torch", "jax")
    )
    with open("loaded.txt", "w") as f:
        f.write("\\n".join(loaded))
"""


def _pytest(project: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CONFORMANCE_", "PYTEST_"))}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _project(tmp_path: Path) -> Path:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_other.py").write_text("def test_other():\n    assert True\n")
    (tmp_path / "config.yaml").write_text("not: a case file\n")
    return tmp_path


def test_another_projects_run_sees_nothing_of_the_suite(tmp_path: Path) -> None:
    project = _project(tmp_path)
    proc = _pytest(project)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # No header lines, no report lines (pytest's own "plugins:" line lists every plugin).
    ours = [ln for ln in proc.stdout.splitlines() if "conformance" in ln]
    assert [ln for ln in ours if not ln.startswith("plugins:")] == [], proc.stdout
    loaded = (project / "loaded.txt").read_text().split()
    assert "conformance.run.plugin" in loaded  # the entry point itself was loaded ...
    light = {
        "conformance",
        "conformance.cases",  # the package's face: what a case file is called, no imports
        "conformance.run",
        "conformance.run.plugin",
        "conformance.run.config",
        "conformance.run.config.options",
        "conformance.run.worker",
        "conformance.run.worker.robustness",
        "conformance.kinds",  # the failure kinds robustness reports: a str enum, no imports
    }
    assert set(loaded) <= light, loaded  # ... and nothing heavy: no oracle, no framework, no numpy


def test_the_same_run_with_a_case_root_is_a_suite_run(tmp_path: Path) -> None:
    project = _project(tmp_path)
    cases = project / "cases"
    cases.mkdir()
    (cases / "normal.yaml").write_text(
        "cases:\n  - id: n\n    family: Normal\n    params: {loc: 0.0, scale: 1.0}\n"
        "    value: 0.5\n"
    )
    proc = _pytest(
        project,
        "--conformance-cases=cases",
        "--conformance-framework=torch",
        "--conformance-check=log_prob",
        "-q",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "conformance results:" in proc.stdout
    assert "conformance.reference" in (project / "loaded.txt").read_text().split()
