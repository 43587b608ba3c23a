"""results.json's schema: derived from the typed record, published current, and met by a run."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from conformance.records.record import ItemStatic, Record
from conformance.records.schema import results_schema

REPO = Path(__file__).resolve().parents[2]
PUBLISHED = REPO / "docs" / "results.schema.json"

CASES = {
    "normal.yaml": """\
        cases:
          - id: scalar
            family: Normal
            params: {loc: 0.5, scale: 2.0}
            value: [0.25, 3.0]
        """,
    "broken.yaml": """\
        cases:
          - id: no-family
            params: {loc: 0.5}
        """,
}
SHIFTED = ("--adapter", "fake_adapters:ShiftedAdapter", "--framework", "torch,fake.shifted")


def test_published_schema_is_current() -> None:
    assert json.loads(PUBLISHED.read_text()) == results_schema(), (
        "docs/results.schema.json is stale: run "
        "`conformance schema --results -o docs/results.schema.json`"
    )


def test_a_real_results_json_meets_the_schema_and_reads_back_unchanged(case_dir, run_suite) -> None:
    """Passes, value failures with their attachments, and a case that fails to load: each
    record validates, and reading it into the typed record and writing it again gives the
    same keys in the same order (what the lead's byte diff of whole runs relies on)."""
    _, data = run_suite(case_dir(CASES), *SHIFTED, "--check", "log_prob", "--dtype", "float64")
    jsonschema.validate(data, results_schema())
    outcomes = {r["outcome"] for r in data["records"]}
    assert {"passed", "failed", "error"} <= outcomes, outcomes
    for raw in data["records"]:
        again = Record.from_json(raw).to_json()
        assert list(again.items()) == list(raw.items()), raw["nodeid"]
    assert any("reproducer" in r for r in data["records"])


def test_the_schema_rejects_what_a_record_cannot_hold() -> None:
    record = Record.from_json({"nodeid": "f.yaml::a", "outcome": "passed", "check": "shapes"})
    payload = {"run": {"schema_version": 1}, "records": [record.to_json()]}
    jsonschema.validate(payload, results_schema())
    for bad in ({"outcome": "fine"}, {"dtype": "float16"}, {"line": "7"}):
        wrong = {"run": {"schema_version": 1}, "records": [{**record.to_json(), **bad}]}
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(wrong, results_schema())
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**payload, "run": {"schema_version": 2}}, results_schema())


def test_the_schema_holds_what_the_frameworks_do_not_offer() -> None:
    entry = {
        "family": "Bernoulli",
        "parametrization": "probs",
        "reason": "gpytorch has no Bernoulli",
    }
    run = {"schema_version": 1, "not_offered": {"gpytorch": [entry]}}
    jsonschema.validate({"run": run, "records": []}, results_schema())
    for bad in ({"gpytorch": "Bernoulli"}, {"gpytorch": [{"family": "Bernoulli"}]}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(
                {"run": {**run, "not_offered": bad}, "records": []}, results_schema()
            )


def test_fields_an_item_lacks_stay_out_of_its_record() -> None:
    """A check item names its variant even when it has none; a load error its case and line;
    an item known only by its nodeid, what the nodeid says."""
    check = ItemStatic(case="c", file="f", dtype="float32", device="cpu", check="shapes")
    assert check.to_json() == {
        "case": "c",
        "file": "f",
        "dtype": "float32",
        "device": "cpu",
        "check": "shapes",
        "variant": None,
    }
    assert ItemStatic(file="f", check="load").to_json() == {
        "case": None,
        "file": "f",
        "line": None,
        "check": "load",
    }
    assert ItemStatic(file="f").to_json() == {"file": "f"}


def test_a_failure_without_a_script_still_says_reproducer_null() -> None:
    """A failure's context writes its keys even when empty, as results.json always has; any
    other attachment is left out when empty, and both read back to the same JSON."""
    from conformance.records.record import Attachments

    failure = Attachments(of_failure=True, source="- id: x\n", inputs={}, expected_shapes={})
    written = failure.to_json()
    assert written == {
        "reproducer": None,
        "source": "- id: x\n",
        "inputs": {},
        "arrays": None,
        "expected_shapes": {},
    }
    assert Attachments.from_json(written).to_json() == written
    passed = Attachments(framework_notes={"path": "cholesky"})
    assert passed.to_json() == {"framework_notes": {"path": "cholesky"}}
    assert Attachments.from_json(passed.to_json()) == passed
