"""``conformance triage``: failing records → known-failure drafts the loader accepts, one per
symptom and set of checks × dtypes, case lists exact."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

from conformance.known_failures import entries as known_failures
from conformance.known_failures.triage import DRAFT_REASON, draft_entries
from conformance.records.record import Record


def record(case: str, check: str, dtype: str, kind: str, message: str, outcome="failed") -> dict:
    return {
        "case": case,
        "check": check,
        "dtype": dtype,
        "kind": kind,
        "message": message,
        "outcome": outcome,
        "family": "GeneralizedPareto",
        "framework": "torch",
        "package": "torch",
        "framework_version": "2.13.0+cpu",
    }


DOUBLE = "log_prob raised RuntimeError: Double did not match Float\n  at torch/x.py:1"
OTHER = "log_prob raised ValueError: The value argument must be within the support"
GRAD = "grad mismatch: ∂/∂concentration (all elements): 1 of 8 elements outside tolerance 2.5e-06"
RECORDS = [
    *(record(c, k, "float64", "raises", DOUBLE) for c in ("a", "b") for k in ("log_prob", "grad")),
    record("c", "log_prob", "float64", "raises", DOUBLE),  # a smaller set of checks
    record("a+pad1", "broadcast", "float64", "raises", DOUBLE),  # a broadcast variant
    record("d", "log_prob", "float32", "raises", OTHER),  # another bug of the same kind
    record("z", "grad", "float32", "grad", GRAD),
    record("z", "grad", "float32", "grad", GRAD.replace("1 of 8", "3 of 8")),  # same symptom
    record("ok", "log_prob", "float32", "", "", outcome="passed"),
    record("known", "log_prob", "float32", "value", "x", outcome="xfailed"),
]


def test_one_entry_per_symptom_and_rectangle_of_checks_and_dtypes() -> None:
    entries = {e["id"]: e for e in draft_entries(map(Record.from_json, RECORDS))}
    shapes = {i: (e["case"], e["check"], e["dtype"]) for i, e in entries.items()}
    assert shapes == {
        "torch-generalizedpareto-raises@transforms-1": (["a+pad1"], ["broadcast"], ["float64"]),
        "torch-generalizedpareto-raises-2": (["a", "b"], ["grad", "log_prob"], ["float64"]),
        "torch-generalizedpareto-raises-3": (["c"], ["log_prob"], ["float64"]),
        "torch-generalizedpareto-raises-b": (["d"], ["log_prob"], ["float32"]),
        "torch-generalizedpareto-grad": (["z"], ["grad"], ["float32"]),
    }
    assert entries["torch-generalizedpareto-grad"]["version"] == "torch<=2.13.0"
    assert "Double did not match Float" in entries["torch-generalizedpareto-raises-2"]["reason"]
    assert all(e["reason"].startswith(DRAFT_REASON) for e in entries.values())


def test_the_cli_writes_drafts_the_loader_accepts(tmp_path: Path) -> None:
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"run": {}, "records": RECORDS}))
    out = tmp_path / "drafts.yaml"
    done = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "triage", str(results), f"--output={out}"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "5 draft entries" in done.stderr
    assert len(yaml.safe_load(out.read_text())["known_failures"]) == 5
    loaded = known_failures.load([out])
    assert sorted(e.id for e in loaded)[0] == "torch-generalizedpareto-grad"
    missing = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "triage", str(tmp_path / "none.json")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert missing.returncode == 2 and "cannot read" in missing.stderr
