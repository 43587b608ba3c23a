"""Nothing a case file or a framework message holds becomes markup or code in the outputs.

One run with a framework whose message is built to break out of HTML, a docstring and a
comment, and a case whose (invalid) id is markup; then every output is checked: index.html
gets no tag from them, every reproducer script compiles and carries the message verbatim,
results.json is strict JSON and junit.xml parses.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

from fake_adapters import HOSTILE_MESSAGE
from helpers import make_case, replaced, subject_for

from conformance.checks import CHECKS
from conformance.reproducers import render as reproducer

HOSTILE_ID = "</script><img src=x onerror=alert(2)>"
CASES = f"""\
cases:
  - id: scalar
    family: Normal
    params: {{loc: 0.5, scale: 2.0}}
    value: [0.25, 3.0]
  - id: '{HOSTILE_ID}'
    family: Normal
    params: {{loc: 0.5, scale: 2.0}}
    value: 1.0
"""


class Tags(HTMLParser):
    """The tags a browser would build from the page (not what hides in script text)."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.append((tag, dict(attrs)))


def test_hostile_strings_stay_text_in_every_output(case_dir, run_suite, pytester) -> None:
    cases = case_dir({"hostile.yaml": CASES})
    result, data = run_suite(
        cases,
        "--adapter=fake_adapters:HostileMessageAdapter",
        "--framework=fake.hostile",
        "--check=log_prob",
        "--dtype=float64",
        "--variants=off",
    )
    result.assert_outcomes(failed=2)
    out = pytester.path
    by_case = {r["case"]: r for r in data["records"]}
    assert HOSTILE_MESSAGE.splitlines()[0] in by_case["scalar"]["message"]
    assert by_case[HOSTILE_ID]["kind"] == "case_error"
    # The invalid id is quoted in the message and kept out of the nodeid.
    assert by_case[HOSTILE_ID]["nodeid"] == "cases/hostile.yaml::<invalid-id>[case-error-line6]"

    page = (out / "index.html").read_text(encoding="utf-8")
    parser = Tags()
    parser.feed(page)
    tags = [tag for tag, _ in parser.tags]
    assert "img" not in tags and not any("onerror" in attrs for _, attrs in parser.tags)
    # Our scripts only: the page's, its data block, one inert block per item that did not pass.
    assert tags.count("script") == 2 + 2
    assert "<img" not in page and "onerror=alert(1)>" not in page

    (script_path,) = (out / "reproducers").glob("*.py")
    source = script_path.read_text(encoding="utf-8")
    tree = ast.parse(source)  # compiles: nothing closed the docstring or escaped into code
    compile(source, str(script_path), "exec")
    doc = ast.get_docstring(tree, clean=False)
    for line in HOSTILE_MESSAGE.splitlines():
        assert line.strip() in doc, line
    assert "scalar [log_prob]" in doc

    json.loads((out / "results.json").read_text(), parse_constant=_refuse)
    ET.parse(out / "junit.xml")


def _refuse(name: str) -> None:
    raise AssertionError(f"results.json holds {name}, not strict JSON")


def test_a_reproducer_compiles_whatever_the_path_and_message(tmp_path: Path) -> None:
    case = make_case(
        """
        - id: c
          family: Normal
          params: {loc: 0.5, scale: 2.0}
          value: 1.0
        """
    )
    subject = subject_for(case, "torch", "float32")
    windows = dataclasses.replace(case, file='C:\\Users\\new\\"""cases.yaml')
    for subj in (subject, replaced(subject, case=windows)):
        source = reproducer.render(subj, CHECKS["log_prob"], HOSTILE_MESSAGE + '\\"""')
        compile(source, "repro.py", "exec")
        doc = ast.get_docstring(ast.parse(source), clean=False)
        assert subj.case.file in doc and HOSTILE_MESSAGE.splitlines()[1].strip() in doc
