"""The report package without a browser: merging, numbers, escaping, histograms, names, diffs."""

from __future__ import annotations

import importlib.util
import json
import math
import re
import sys
from pathlib import Path

import pytest

from conformance.records.record import Record
from conformance.report.data import browser_payload, summary_line
from conformance.report.details import build_detail
from conformance.report.diff import diff_results, diff_text
from conformance.report.html import csp_hash, render_report, script_json
from conformance.report.merge import ResultsError, load_results_files, merge
from conformance.report.reproducers import file_names, safe_stem, write_reproducers
from conformance.report.svg import _edges, bin_index, histogram
from conformance.report.values import as_float, element_table

DATA = Path(__file__).resolve().parents[1] / "data" / "report"


def load_sample():
    """tests/data/report/sample.py (not a package: test data is never collected)."""
    name = "conformance_report_sample"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, DATA / "sample.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


sample = load_sample()


def _results(payload: dict):
    return merge([("results.json", payload)])


# ----- reading and merging ----------------------------------------------------------------
def test_merge_sums_counts_and_keeps_every_record() -> None:
    a = sample.sample_results()
    b = {
        "run": {**a["run"], "command": "shard two", "duration": 30.0, "counts": {"passed": 2}},
        "records": [
            sample.record("extra", "torch", "float32", "shapes"),
            sample.record("extra", "torch", "float64", "shapes"),
        ],
    }
    results = merge([("a.json", a), ("b.json", b)])
    assert results.merged and len(results.records) == len(a["records"]) + 2
    assert results.run["counts"]["passed"] == a["run"]["counts"]["passed"] + 2
    assert results.run["counts"]["failed"] == a["run"]["counts"]["failed"]
    assert results.run["commands"] == [a["run"]["command"], "shard two"]
    assert results.run["duration"] == 30.0 and results.run["duration_total"] == 42.5


def test_merged_shards_say_once_what_the_frameworks_do_not_offer() -> None:
    """Every shard of a run says the same; a file written before the field says nothing."""
    a = sample.sample_results()
    b = {"run": {**a["run"], "not_offered": {}}, "records": []}
    old = {"run": {k: v for k, v in a["run"].items() if k != "not_offered"}, "records": []}
    c = {"run": a["run"], "records": []}
    results = merge([("a.json", a), ("b.json", b), ("old.json", old), ("c.json", c)])
    assert results.run["not_offered"] == a["run"]["not_offered"]


def test_the_payload_carries_what_is_not_offered_as_table_indexes() -> None:
    results = _results(sample.sample_results())
    payload = browser_payload(results.records, {}, results.run["not_offered"])
    [(family, framework, parametrization, reason)] = payload["not_offered"]
    assert payload["families"][family] == "Normal"
    assert payload["frameworks"][framework] == "gpytorch.dense"
    assert (parametrization, reason) == ("loc_scale", "gpytorch.dense has no Normal")
    assert browser_payload(results.records, {})["not_offered"] == []


def test_duplicate_nodeids_across_shards_are_an_error_naming_both() -> None:
    a = sample.sample_results()
    with pytest.raises(ResultsError, match=r"duplicate nodeid .* in a\.json and in b\.json"):
        merge([("a.json", a), ("b.json", a)])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "not valid JSON"),
        ('{"run": {}}', "expected an object with a 'records' list"),
        ('{"records": [{"outcome": "passed"}]}', "record 0 has no 'nodeid'"),
    ],
)
def test_unreadable_results_say_what_is_wrong(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "r.json"
    path.write_text(text)
    with pytest.raises(ResultsError, match=re.escape(message)):
        load_results_files([path])


def test_a_record_with_only_a_nodeid_still_renders() -> None:
    html = render_report(_results({"records": [{"nodeid": "x.yaml::y"}]}))
    assert "x.yaml::y" in html


# ----- numbers and arrays -------------------------------------------------------------------
def test_strict_json_strings_are_numbers() -> None:
    assert math.isnan(as_float("nan")) and as_float("-inf") == -math.inf
    assert as_float(True) is None and as_float("abc") is None and as_float(None) is None


def test_element_table_marks_outside_tolerance_and_the_worst() -> None:
    table = element_table(
        {
            "expected": [[1.0, 2.0], [3.0, "nan"]],
            "actual": [[1.0, 2.5], [3.1, "nan"]],
            "tolerance": [[0.01, 0.01], [0.01, 0.01]],
        }
    )
    assert table is not None and table.shape == (2, 2) and table.bad == 2
    assert [r.index for r in table.rows if r.worst] == ["(0, 1)"]
    assert [r.bad for r in table.rows] == [False, True, True, False]  # nan == nan agrees


def test_element_table_refuses_mismatched_shapes() -> None:
    assert element_table({"expected": [1.0, 2.0], "actual": [1.0]}) is None


def test_gradient_arrays_get_one_table_per_parameter() -> None:
    grad = next(r for r in sample.sample_results()["records"] if r.get("kind") == "grad")
    detail = build_detail(0, Record.from_json(grad))
    assert [label for label, _ in detail.tables] == ["loc"]
    assert any(row.flag == "bad" and "loc" in row.label for row in detail.metrics)


def test_summary_line_skips_the_header_and_shapes() -> None:
    raised = next(r for r in sample.sample_results()["records"] if r.get("kind") == "raises")
    assert (
        summary_line(Record.from_json(raised))
        == "log_prob raised ZeroDivisionError: integer modulo by zero"
    )


# ----- escaping -----------------------------------------------------------------------------
def test_script_json_cannot_close_a_script_or_open_a_comment() -> None:
    value = {"id": "</script><script>alert(1)</script><!-- \u2028 & >"}
    text = str(script_json(value))
    assert "</" not in text and "<!--" not in text and "\u2028" not in text and "&" not in text
    assert json.loads(text) == value


def test_no_string_from_a_record_becomes_markup() -> None:
    payload = sample.sample_results()
    html = render_report(_results(payload))
    not_passed = sum(r["outcome"] != "passed" for r in payload["records"])
    # Our script elements only: the page's script, the data block, one inert block per detail.
    assert html.count("<script") == 2 + not_passed
    assert html.count('<script type="text/html"') == not_passed
    assert "<script>window" not in html and "<img" not in html and "<b>bold</b>" not in html
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in html


def test_csp_allows_exactly_the_page_script() -> None:
    html = render_report(_results(sample.sample_results()))
    script = re.search(r"<script>(.*?)</script>", html, re.S).group(1)
    assert f"script-src &#39;{csp_hash(script)}&#39;" in html
    assert "default-src &#39;none&#39;" in html


# ----- the browser's table ------------------------------------------------------------------
def test_payload_indexes_tables_and_keeps_ratio_strings() -> None:
    records = sample.sample_results()["records"]
    typed = [Record.from_json(r) for r in records]
    payload = browser_payload(typed, {i: i for i in range(len(records))})
    f = {name: i for i, name in enumerate(payload["fields"])}
    hostile = next(r for r in payload["records"] if r[f["case"]] == sample.HOSTILE_ID)
    assert hostile[f["ratio"]] == "inf"
    assert payload["outcomes"][hostile[f["outcome"]]] == "failed"
    assert payload["families"][payload["records"][-2][f["family"]]] == "(none)"


# ----- histogram ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("ratio", "expected_bin"),
    [(0.0, 0), (1e-9, 1), (1e-6, 2), (0.999, 13), (1.0, 14), (5e3, 20), (math.inf, 20)],
)
def test_histogram_bins_are_half_decades(ratio: float, expected_bin: int) -> None:
    assert bin_index(ratio, _edges()) == expected_bin


def test_histogram_counts_near_misses_and_failures() -> None:
    h = histogram("torch", [0.0, 0.05, 0.5, 0.9, 1.0, 2.0, math.inf], without=3)
    assert (h.total, h.near, h.over, h.without) == (7, 3, 2, 3)
    assert sum(b.count for b in h.bars) == 7
    below, above = h.bars[13], h.bars[14]  # [0.32, 1) and [1, 3.2): either side of the line
    assert (below.count, below.zone) == (2, "near") and (above.count, above.zone) == (2, "bad")
    assert below.x + below.width < h.tolerance_x < above.x


# ----- reproducer files ---------------------------------------------------------------------
def test_reproducer_names_are_safe_and_unique() -> None:
    hostile = f"cases/../x.yaml::{sample.HOSTILE_ID}[torch-float32-log_prob]"
    assert re.fullmatch(r"[A-Za-z0-9._-]+", safe_stem(hostile))
    assert not safe_stem("../..").startswith(".")
    assert safe_stem("con").startswith("_")
    names = file_names(["a/b::c", "a_b::c", "A/B::C", "x" * 500])
    assert len(set(names.values())) == 4
    assert all(len(n) <= 140 for n in names.values())


def test_reproducers_replace_the_previous_runs(tmp_path: Path) -> None:
    records = sample.sample_results()["records"]
    (tmp_path / "old.py").write_text("stale")
    written = write_reproducers([Record.from_json(r) for r in records], tmp_path)
    expected = [r["nodeid"] for r in records if r.get("reproducer") and r["outcome"] != "passed"]
    assert sorted(written) == sorted(expected)
    assert not (tmp_path / "old.py").exists()
    for nodeid, path in written.items():
        assert path.parent == tmp_path
        assert path.read_text() == next(r["reproducer"] for r in records if r["nodeid"] == nodeid)


# ----- diff ---------------------------------------------------------------------------------
def test_diff_sorts_changes_into_regressions_fixes_and_the_rest() -> None:
    old = sample.sample_results()
    new = json.loads(json.dumps(old))
    by_id = {r["nodeid"]: r for r in new["records"]}
    passed = [r for r in old["records"] if r["outcome"] == "passed"]
    failed = [r for r in old["records"] if r["outcome"] == "failed"]
    by_id[passed[0]["nodeid"]].update(outcome="failed", kind="value", message="now wrong")
    by_id[failed[0]["nodeid"]]["outcome"] = "passed"
    by_id[failed[1]["nodeid"]]["outcome"] = "xfailed"
    new["records"] = [r for r in new["records"] if r["nodeid"] != passed[1]["nodeid"]]
    new["records"].append(sample.record("brand-new", "torch", "float32", "shapes"))
    diff = diff_results(_results(old), _results(new), "old.json", "new.json")
    assert [c.nodeid for c in diff.regressions] == [passed[0]["nodeid"]]
    assert [c.nodeid for c in diff.fixes] == [failed[0]["nodeid"]]
    assert [(c.old, c.new) for c in diff.changed] == [("failed", "xfailed")]
    assert [c.nodeid for c in diff.removed] == [passed[1]["nodeid"]]
    assert [c.new for c in diff.new] == ["passed"]
    text = diff_text(diff)
    assert "Regressions (passed → failed/error): 1" in text
    assert f"{passed[0]['nodeid']}: passed → failed  [value] now wrong" in text
