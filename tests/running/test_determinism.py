"""Two runs, in any item order, and ``-n 0`` vs ``-n 2``, give the same records.

Everything a record holds except its duration must follow from the case, the framework, the
dtype and the check — never from which process ran the item or what ran before it (NumPyro
switches x64 on and off between items; inputs are seeded per case).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SELECTION = (
    "--family=Normal",
    "--family=Bernoulli",
    "--framework=torch,numpyro,fake.shifted",
    "--adapter=fake_adapters:ShiftedAdapter",  # value mismatches, with reproducer scripts
    "--check=log_prob",
    "--variants=off",
    "--no-builtin-known-failures",
)
#: Torch's Normal items pass, so this entry makes them strict XPASS failures: a message that
#: pytest writes itself, which under xdist once began with the worker's name.
KNOWN = """\
known_failures:
  - id: not-really-broken
    family: Normal
    framework: torch
    kind: value
    reason: pretend
"""


def records(tmp_path: Path, name: str, *args: str) -> list[dict]:
    out = tmp_path / name / "results.json"
    known = tmp_path / "known.yaml"
    known.write_text(KNOWN)
    env = {**os.environ, "PYTHONPATH": str(REPO / "tests" / "support")}
    argv = ["run", *SELECTION, f"--known-failures={known}", f"--results={out}", *args]
    proc = subprocess.run(
        [sys.executable, "-m", "conformance.cli", *argv],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert proc.returncode in (0, 1), proc.stdout[-3000:] + proc.stderr[-3000:]
    data = json.loads(out.read_text())
    assert len(data["records"]) == data["run"]["collected"] > 100
    failed = [r for r in data["records"] if r["outcome"] == "failed"]
    assert any("[XPASS(strict)]" in r["message"] for r in failed)
    assert any(r["framework"] == "fake.shifted" and r.get("reproducer") for r in failed)
    return [{k: v for k, v in r.items() if k != "duration"} for r in data["records"]]


def first_difference(a: list[dict], b: list[dict]) -> str:
    by_id = {r["nodeid"]: r for r in b}
    for rec in a:
        other = by_id.get(rec["nodeid"], {})
        if rec != other:
            keys = sorted(k for k in {*rec, *other} if rec.get(k) != other.get(k))
            return f"{rec['nodeid']}: {keys}: {[(rec.get(k), other.get(k)) for k in keys][:2]}"
    return "different items"


def test_runs_are_identical_whatever_the_order_or_the_workers(tmp_path: Path) -> None:
    serial = records(tmp_path, "serial", "-n", "0", "-p", "no:cacheprovider")
    reverse = records(
        tmp_path, "reverse", "-n", "0", "-p", "reverse_items", "-p", "no:cacheprovider"
    )
    parallel = records(tmp_path, "parallel", "-n", "2", "-p", "no:cacheprovider")
    # Records follow the collection order, so a reversed run lists them reversed.
    assert reverse == serial[::-1], first_difference(serial, reverse)
    assert parallel == serial, first_difference(serial, parallel)
