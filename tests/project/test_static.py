"""Static checks of the package, run with the suite's own tests so CI fails on them: mypy
(pyproject.toml's ``[tool.mypy]``) and dead code (tests/project/dead_code.py). ``nox -s lint``
runs the same two. Neither is skipped: both tools are in the ``test`` extra, and a missing one
fails here rather than passing unseen."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=600
    )


def test_mypy_finds_no_type_error() -> None:
    """The package type-checks (about 20 s cold, a few with mypy's cache)."""
    proc = _run("-m", "mypy")
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-2000:]


def test_no_dead_code() -> None:
    """vulture finds nothing the allowlist does not explain (each entry says who uses it)."""
    proc = _run(str(ROOT / "tests" / "project" / "dead_code.py"))
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-2000:]
