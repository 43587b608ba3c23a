"""``conformance report`` and ``conformance diff`` as a user runs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_report import sample

from conformance.cli import main
from conformance.records.record import Record
from conformance.records.results import counts


def write(path: Path, payload: dict) -> Path:
    path.write_text(json.dumps(payload), encoding="utf-8")
    return path


def shards(tmp_path: Path) -> tuple[Path, Path, dict, dict]:
    full = sample.sample_results()
    half = len(full["records"]) // 2
    parts = []
    for i, records in enumerate((full["records"][:half], full["records"][half:])):
        run = {
            **full["run"],
            "command": f"pytest --shard {i}",
            "counts": counts(map(Record.from_json, records)),
        }
        parts.append({"run": run, "records": records})
    a = write(tmp_path / "a.json", parts[0])
    b = write(tmp_path / "b.json", parts[1])
    return a, b, parts[0], parts[1]


def test_report_renders_beside_the_results_by_default(tmp_path: Path, capsys) -> None:
    results = write(tmp_path / "results.json", sample.sample_results())
    assert main(["report", str(results)]) == 0
    html = (tmp_path / "index.html").read_text()
    assert "cases/mvn.yaml::batched[numpyro-float32-log_prob]" in html
    scripts = sorted(p.name for p in (tmp_path / "reproducers").iterdir())
    assert len(scripts) == 4
    assert f"reproducers/{scripts[0]}" in html
    assert "wrote" in capsys.readouterr().out


def test_report_merges_shards_and_says_so(tmp_path: Path) -> None:
    a, b, part_a, part_b = shards(tmp_path)
    out = tmp_path / "site" / "report.html"
    assert main(["report", str(a), str(b), "-o", str(out)]) == 0
    html = out.read_text()
    assert "Merged from 2 shards of one run" in html
    assert "pytest --shard 0" in html and "pytest --shard 1" in html
    total = len(part_a["records"]) + len(part_b["records"])
    assert f"Conformance: {total} items" in html
    assert (out.parent / "reproducers").is_dir()


def test_report_refuses_overlapping_shards(tmp_path: Path, capsys) -> None:
    a, _, _, _ = shards(tmp_path)
    assert main(["report", str(a), str(a), "-o", str(tmp_path / "x.html")]) == 2
    err = capsys.readouterr().err
    assert "duplicate nodeid" in err and str(a) in err
    assert not (tmp_path / "x.html").exists()


def test_report_on_a_missing_file_is_a_usage_error(tmp_path: Path, capsys) -> None:
    assert main(["report", str(tmp_path / "nope.json")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_diff_lists_changes_and_exits_0_also_as_html(tmp_path: Path, capsys) -> None:
    old = sample.sample_results()
    new = json.loads(json.dumps(old))
    passed = next(r for r in new["records"] if r["outcome"] == "passed")
    passed.update(outcome="error", kind="harness_error", message="RuntimeError: <oops>")
    write(tmp_path / "old.json", old)
    write(tmp_path / "new.json", new)
    out = tmp_path / "diff.html"
    code = main(
        ["diff", str(tmp_path / "old.json"), str(tmp_path / "new.json"), "--html", str(out)]
    )
    assert code == 0
    text = capsys.readouterr().out
    assert "Regressions (passed → failed/error): 1" in text
    assert f"{passed['nodeid']}: passed → error  [harness_error] RuntimeError: <oops>" in text
    assert "Fixes (failed/error → passed): 0" in text
    html = out.read_text()
    assert "RuntimeError: &lt;oops&gt;" in html and "<oops>" not in html


def test_the_installed_command_has_both_subcommands(tmp_path: Path) -> None:
    results = write(tmp_path / "results.json", sample.sample_results())
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "conformance.cli",
            "report",
            str(results),
            "-o",
            str(tmp_path / "r.html"),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "r.html").stat().st_size > 10_000
    proc = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "diff", str(results), str(results)],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert proc.returncode == 0 and "0 regressions" in proc.stdout, proc.stderr


def test_diff_fails_on_what_it_is_told_to(tmp_path: Path, capsys) -> None:
    """``--fail-on`` turns the diff into a CI gate: 1 when a named kind of change happened,
    0 when only others did; an unknown name is a usage error with a suggestion."""
    old = sample.sample_results()
    new = json.loads(json.dumps(old))
    passed = next(r for r in new["records"] if r["outcome"] == "passed")
    passed.update(outcome="failed", kind="value", message="log_prob mismatch")
    new["records"].append({**passed, "nodeid": passed["nodeid"] + "-new", "outcome": "error"})
    args = ["diff", str(write(tmp_path / "old.json", old)), str(write(tmp_path / "new.json", new))]
    assert main(args) == 0  # no --fail-on: a report, never a verdict
    assert main([*args, "--fail-on=removed"]) == 0  # nothing was removed
    assert main([*args, "--fail-on=regression"]) == 1
    assert "failing on 1 regression (--fail-on=regression)" in capsys.readouterr().out
    assert main([*args, "--fail-on=removed,new-failure,changed"]) == 1
    assert "failing on 1 new-failure, 1 changed" in capsys.readouterr().out
    with pytest.raises(SystemExit) as info:
        main([*args, "--fail-on=regresion"])
    assert info.value.code == 2
    assert "(did you mean 'regression'?)" in capsys.readouterr().err
    assert main(["diff", args[1], args[1], "--fail-on=regression,removed,changed"]) == 0


def test_report_of_some_shards_says_which_are_missing(tmp_path: Path, capsys) -> None:
    """Merging shard 1 of 2 once gave a report that passed for the whole run."""
    a, b, part_a, part_b = shards(tmp_path)
    for path, part, k in ((a, part_a, 1), (b, part_b, 2)):
        write(path, {**part, "run": {**part["run"], "shard": [k, 3]}})
    out = tmp_path / "partial.html"
    assert main(["report", str(a), str(b), "-o", str(out)]) == 0
    assert "warning: 2 of 3 shards given (1/3, 2/3); missing 3/3" in capsys.readouterr().err
    assert "this report covers part of a run: 2 of 3 shards given" in out.read_text()
    c = write(tmp_path / "c.json", {"run": {**part_b["run"], "shard": [3, 3]}, "records": []})
    assert main(["report", str(a), str(b), str(c), "-o", str(out)]) == 0
    assert "warning" not in capsys.readouterr().err
    assert "covers part of a run" not in out.read_text()
