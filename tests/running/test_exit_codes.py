"""The README's exit-code table, row by row: each row is produced here by a run that does what
the row says, and every row has at least one such run."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from fake_adapters import FAULT_VALUE

REPO = Path(__file__).resolve().parents[2]
SUPPORT = REPO / "tests" / "support"

CASE = """\
cases:
  - id: one
    family: Normal
    params: {loc: 0.0, scale: 2.0}
    value: [0.5, -1.0]
"""
#: One framework, one check, one dtype: each run is a few items.
NARROW = ("--framework=torch", "--check=log_prob", "--dtype=float64", "--edges=off",
          "--variants=off", "-n", "0", "-p", "no:cacheprovider")  # fmt: skip
SHIFTED = ("--adapter=fake_adapters:ShiftedAdapter", "--framework=fake.shifted")
KNOWN_SHIFT = """\
known_failures:
  - id: shifted-by-design
    framework: fake.shifted
    case: one
    kind: value
    reason: the fake adapter adds 1e-3 to every log_prob
"""
KNOWN_TORCH = """\
known_failures:
  - id: torch-was-broken
    framework: torch
    case: one
    kind: value
    reason: a bug that has since been fixed
"""


def cases(tmp_path: Path, text: str = CASE) -> str:
    root = tmp_path / "mycases"
    root.mkdir(exist_ok=True)
    (root / "c.yaml").write_text(textwrap.dedent(text))
    return f"--cases={root}"


def popen(tmp_path: Path, *args: str, env: dict | None = None) -> subprocess.Popen:
    full_env = {**os.environ, "PYTHONPATH": str(SUPPORT), **(env or {})}
    return subprocess.Popen(
        [sys.executable, "-m", "conformance.cli", "run", *args],
        cwd=tmp_path,
        env=full_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def run(tmp_path: Path, *args: str) -> tuple[int, str]:
    proc = popen(tmp_path, *args)
    out, _ = proc.communicate(timeout=600)
    return proc.returncode, out


def write(tmp_path: Path, name: str, text: str) -> str:
    (tmp_path / name).write_text(textwrap.dedent(text))
    return name


# ----- one function per way of reaching a row: returns (exit code, output, what to find) ------


def all_passed(tmp_path: Path):
    return (*run(tmp_path, cases(tmp_path), *NARROW), "1 passed")


def known_failure_xfailed(tmp_path: Path):
    kf = write(tmp_path, "kf.yaml", KNOWN_SHIFT)
    args = (cases(tmp_path), *NARROW, *SHIFTED, f"--known-failures={kf}")
    return (*run(tmp_path, *args), "1 xfailed")


def empty_shard(tmp_path: Path):
    return (*run(tmp_path, cases(tmp_path), *NARROW, "--shard=2/2"), "shard 2/2 has no items")


def value_mismatch(tmp_path: Path):
    return (*run(tmp_path, cases(tmp_path), *NARROW, *SHIFTED), "[value] log_prob mismatch")


def framework_crash(tmp_path: Path):
    text = CASE.replace("[0.5, -1.0]", f"[0.5, {FAULT_VALUE}]")
    args = (cases(tmp_path, text), *NARROW[:-4], "--adapter=fake_adapters:AbortAdapter",
            "--framework=fake.abort", "-p", "no:cacheprovider")  # fmt: skip
    return (*run(tmp_path, *args), "[crash]")


def strict_xpass(tmp_path: Path):
    kf = write(tmp_path, "kf.yaml", KNOWN_TORCH)
    return (*run(tmp_path, cases(tmp_path), *NARROW, f"--known-failures={kf}"), "XPASS(strict)")


def unknown_option(tmp_path: Path):
    return (*run(tmp_path, cases(tmp_path), *NARROW, "--famly=Normal"), "did you mean --family?")


def unreadable_value(tmp_path: Path):
    return (*run(tmp_path, cases(tmp_path), *NARROW, "--shard", "half"), "--shard 'half'")


def unreadable_choice(tmp_path: Path):
    return (*run(tmp_path, cases(tmp_path), *NARROW, "--edges=maybe"), "argument --edges")


def unreadable_variable(tmp_path: Path):
    proc = popen(tmp_path, cases(tmp_path), *NARROW, env={"CONFORMANCE_ITEM_TIMEOUT": "soon"})
    return (proc.wait(timeout=600), proc.stdout.read(), "CONFORMANCE_ITEM_TIMEOUT 'soon'")


def name_matching_nothing(tmp_path: Path):
    found = "--family 'Nrmal' matches no family (did you mean 'Normal'?)"
    return (*run(tmp_path, cases(tmp_path), *NARROW, "--family=Nrmal"), found)


def missing_path(tmp_path: Path):
    return (*run(tmp_path, *NARROW, "nowhere/c.yaml"), "not found: nowhere/c.yaml")


def missing_case_root(tmp_path: Path):
    return (*run(tmp_path, *NARROW, "--cases=nowhere"), "not found")


def adapter_that_does_not_load(tmp_path: Path):
    args = (cases(tmp_path), *NARROW, "--adapter=no_such_module:Adapter")
    return (*run(tmp_path, *args), "--adapter: cannot load adapter 'no_such_module:Adapter'")


def broken_known_failures_file(tmp_path: Path):
    kf = write(tmp_path, "kf.yaml", KNOWN_TORCH.replace("kind: value", "kind: valu"))
    args = (cases(tmp_path), *NARROW, f"--known-failures={kf}")
    return (*run(tmp_path, *args), "'valu' is no kind (did you mean 'value'?)")


BROKEN = (
    CASE
    + """\
  - id: two
    family: Nrmal
    params: {loc: 0.0, scale: 2.0}
    value: 1.0
"""
)


def case_file_error(tmp_path: Path):
    found = "c.yaml:7: case 'two': 'Nrmal' is no family (did you mean 'Normal'?)"
    return (*run(tmp_path, cases(tmp_path, BROKEN), *NARROW), found)


def case_file_error_beside_a_mismatch(tmp_path: Path):
    args = (cases(tmp_path, BROKEN), *NARROW, *SHIFTED)
    return (*run(tmp_path, *args), "[value] log_prob mismatch")


def nothing_collected(tmp_path: Path):
    args = (cases(tmp_path), *(a for a in NARROW if a != "--check=log_prob"), "--check=plate")
    return (*run(tmp_path, *args), "nothing collected: --check removed all")


def every_item_skipped(tmp_path: Path):
    # A framework that is not installed: its every item is skipped with why. (A framework that
    # lacks the family has no items at all: that run collects nothing, as above.)
    args = (cases(tmp_path), "--adapter=fake_adapters:MissingAdapter", "--framework=fake.missing",
            *NARROW[1:])  # fmt: skip
    return (*run(tmp_path, *args), "nothing was tested")


def internal_error(tmp_path: Path):
    (tmp_path / "broken_plugin.py").write_text(
        "def pytest_collection_modifyitems(items):\n    raise RuntimeError('a plugin bug')\n"
    )
    proc = popen(tmp_path, cases(tmp_path), *NARROW, "-p", "broken_plugin",
                 env={"PYTHONPATH": f"{tmp_path}{os.pathsep}{SUPPORT}"})  # fmt: skip
    return (proc.wait(timeout=600), proc.stdout.read(), "INTERNALERROR")


def interrupted(tmp_path: Path):
    text = CASE.replace("[0.5, -1.0]", f"[0.5, {FAULT_VALUE}]")
    flag = tmp_path / "in-the-hang"
    args = (cases(tmp_path, text), *NARROW[:-4], "--adapter=fake_adapters:HangAdapter",
            "--framework=fake.hang", "--item-timeout=0", "-n", "0")  # fmt: skip
    proc = popen(tmp_path, *args, env={"CONFORMANCE_TEST_HANG_FLAG": str(flag)})
    deadline = time.monotonic() + 300
    while not flag.exists():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[0]
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=120)
    data = json.loads((tmp_path / "reports" / "results.json").read_text())
    assert data["run"]["interrupted"] is True
    return proc.returncode, out, "KeyboardInterrupt"


#: The README's rows (code, bold label) and the runs that produce each.
ROWS: dict[tuple[int, str], list[Callable]] = {
    (0, "passed"): [all_passed, known_failure_xfailed, empty_shard],
    (1, "mismatches"): [value_mismatch, framework_crash, strict_xpass],
    (2, "usage error"): [
        unknown_option,
        unreadable_value,
        unreadable_choice,
        unreadable_variable,
        name_matching_nothing,
        missing_path,
        missing_case_root,
        adapter_that_does_not_load,
        broken_known_failures_file,
    ],
    (2, "case-file error"): [case_file_error, case_file_error_beside_a_mismatch],
    (2, "nothing tested"): [nothing_collected, every_item_skipped],
    (3, "internal error"): [internal_error],
    (130, "interrupted"): [interrupted],
}


def readme_rows() -> list[tuple[int, str]]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    table = text.split("| code | when |\n|---|---|\n", 1)[1].split("\n\n", 1)[0]
    return [(int(c), label) for c, label in re.findall(r"^\| (\d+) \| \*\*(.+?)\*\*", table, re.M)]


def test_every_row_of_the_readme_table_has_its_runs() -> None:
    rows = readme_rows()
    assert len(rows) == len(set(rows)) == len(ROWS) and set(rows) == set(ROWS)


@pytest.mark.parametrize(
    ("code", "produce"),
    [(code, fn) for (code, _), fns in ROWS.items() for fn in fns],
    ids=[f"{code}-{fn.__name__}" for (code, _), fns in ROWS.items() for fn in fns],
)
def test_the_row_is_what_that_run_exits_with(tmp_path: Path, code: int, produce) -> None:
    got, out, found = produce(tmp_path)
    assert got == code, out[-4000:]
    assert found in out, out[-4000:]
