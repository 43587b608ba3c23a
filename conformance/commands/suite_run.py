"""One ``conformance run`` in a child process, into a directory of its own: what the commands
that run the suite several times share (``conformance mutants``: once per mutant, whose patches
must die with their process; ``conformance calibrate``: once per seed).

The child writes ``results.json`` there, and its command line and output go to ``run.log``
beside it, so a run that gave no results can be read afterwards.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from conformance.records.record import Record
from conformance.records.results import read_records


@dataclass
class RunResult:
    records: list[Record] | None
    returncode: int
    log: str

    def error(self) -> str | None:
        if self.records is not None:
            return None
        tail = "\n".join(self.log.strip().splitlines()[-15:])
        return f"no results (exit {self.returncode}):\n{tail}"


def run_suite(
    args: Sequence[str],
    directory: Path,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> RunResult:
    """``conformance run <args>`` into ``directory``: its records (None where it ended other
    than with exit 0 or 1, or wrote none), exit code and output."""
    directory.mkdir(parents=True, exist_ok=True)
    results = directory / "results.json"
    results.unlink(missing_ok=True)
    command = [sys.executable, "-m", "conformance.cli", "run", f"--results={results}", *args]
    try:
        proc = subprocess.run(
            command,
            env=None if env is None else dict(env),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        log, code = proc.stdout + proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as exc:
        log, code = f"timed out after {timeout} s: {exc}", 124
    (directory / "run.log").write_text(" ".join(command) + "\n\n" + log, encoding="utf-8")
    try:
        records = read_records(results) if code in (0, 1) else None
    except (OSError, ValueError, KeyError, TypeError):
        records = None
    return RunResult(records, code, log)
