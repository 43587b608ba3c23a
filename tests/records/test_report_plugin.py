"""After a run: index.html, reproducer scripts and junit.xml appear beside results.json."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import Counter

from conformance.report import html as report_html
from conformance.report.reproducers import file_names
from conformance.run.config.arguments import in_pytest_spelling

CASE = """\
cases:
  - id: scalar
    family: Normal
    params: {loc: 0.5, scale: 2.0}
    value: [0.25, 3.0]
"""

SHIFTED = ("--adapter", "fake_adapters:ShiftedAdapter", "--framework", "torch,fake.shifted")
ONE_CHECK = ("--check", "log_prob", "--dtype", "float64")


def outcomes(data: dict) -> Counter:
    return Counter(r["outcome"] for r in data["records"])


def test_a_run_writes_report_reproducers_and_junit(case_dir, run_suite, pytester) -> None:
    cases = case_dir({"normal.yaml": CASE})
    result, data = run_suite(cases, *SHIFTED, *ONE_CHECK)
    counts = outcomes(data)
    assert counts["passed"] >= 1 and counts["failed"] >= 1  # torch passes, fake.shifted fails
    out = pytester.path
    html = (out / "index.html").read_text(encoding="utf-8")
    assert "cases/normal.yaml::scalar[fake.shifted-float64-log_prob]" in html
    result.stdout.fnmatch_lines([f"conformance report: {out / 'index.html'}"])

    failing = {r["nodeid"]: r for r in data["records"] if r["outcome"] == "failed"}
    with_script = [nodeid for nodeid, r in failing.items() if r.get("reproducer")]
    written = sorted(p.name for p in (out / "reproducers").glob("*.py"))
    assert written == sorted(file_names(with_script).values())

    junit = ET.parse(out / "junit.xml").getroot()
    failures = 0
    for case in junit.iter("testcase"):
        failure = case.find("failure")
        if failure is None:
            continue
        failures += 1
        rec = failing[f"cases/normal.yaml::{case.get('name')}"]
        # The kind first (what a known-failure entry names), then our message, whole.
        head = f"[{rec['kind']}] log_prob mismatch: cases/normal.yaml::scalar"
        assert rec["kind"] == "value" and failure.get("message").startswith(head)
        assert "Traceback" not in failure.text and "def runtest" not in failure.text
        assert failure.text.strip() == f"[{rec['kind']}] {rec['message']}".strip()
    assert failures == counts["failed"]


def test_a_failing_render_warns_and_keeps_results(
    case_dir, run_suite, pytester, monkeypatch
) -> None:
    def explode(*args, **kwargs):
        raise RuntimeError("template exploded")

    monkeypatch.setattr(report_html, "render_report", explode)
    cases = case_dir({"normal.yaml": CASE})
    result, data = run_suite(cases, "--framework", "torch", *ONE_CHECK)
    assert result.ret == 0  # the run's verdict is untouched
    assert data is not None and data["records"]
    assert all(r["outcome"] == "passed" for r in data["records"])
    result.stdout.fnmatch_lines(
        ["*WARNING: could not write the HTML report: RuntimeError: template exploded*"]
    )
    assert not (pytester.path / "index.html").exists()


def test_no_junit_for_a_run_without_case_items(pytester) -> None:
    pytester.makeini("[pytest]\nconformance_cases = cases\n")
    (pytester.path / "cases").mkdir()
    (pytester.path / "cases" / "normal.yaml").write_text(CASE)
    pytester.makepyfile(test_plain="def test_ok():\n    pass\n")
    result = pytester.runpytest("test_plain.py", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert not (pytester.path / "reports").exists()


def test_an_explicit_junitxml_wins(case_dir, run_suite, pytester) -> None:
    cases = case_dir({"normal.yaml": CASE})
    result, _ = run_suite(cases, "--framework", "torch", *ONE_CHECK, "--junitxml=mine.xml")
    assert result.ret == 0
    assert (pytester.path / "mine.xml").exists()
    assert not (pytester.path / "junit.xml").exists()


def test_no_results_means_no_report_and_no_junit(case_dir, pytester) -> None:
    cases = case_dir({"normal.yaml": CASE})
    result = pytester.runpytest(
        *in_pytest_spelling(
            ["--cases", str(cases), "--framework", "torch", *ONE_CHECK, "--no-results"]
        )
    )
    assert result.ret == 0
    assert not list(pytester.path.rglob("*.html")) and not list(pytester.path.rglob("junit.xml"))


def test_under_xdist_the_controller_writes_everything(case_dir, run_suite, pytester) -> None:
    cases = case_dir({"normal.yaml": CASE})
    result, data = run_suite(cases, *SHIFTED, *ONE_CHECK, "-n", "2", subprocess=True)
    assert outcomes(data)["failed"] >= 1, result.stdout.str()
    out = pytester.path
    assert (out / "index.html").exists() and (out / "junit.xml").exists()
    junit = ET.parse(out / "junit.xml").getroot()
    assert sum(1 for _ in junit.iter("testcase")) == len(data["records"])
    rendered = (out / "index.html").read_text(encoding="utf-8")
    payload = rendered.split('<script type="application/json" id="report-data">', 1)[1]
    records = json.loads(payload.split("</script>", 1)[0])["records"]
    assert len(records) == len(data["records"])
