"""The ``conformance`` command: run (exit codes 0/1/2), schema export."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

from conformance.cases.builtin import builtin_cases
from conformance.cases.case_model import json_schema

REPO = Path(__file__).resolve().parents[2]

GOOD = """\
cases:
  - id: one
    family: Normal
    params: {loc: 0.0, scale: 2.0}
    value: 1.0
"""


def conformance(
    *args: str, cwd: Path, env_extra: dict | None = None
) -> subprocess.CompletedProcess:
    import os

    env = {**os.environ, "PYTHONPATH": str(REPO / "tests" / "support"), **(env_extra or {})}
    return subprocess.run(
        [sys.executable, "-m", "conformance.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=600,
    )


def write(tmp_path: Path, text: str) -> Path:
    root = tmp_path / "mycases"
    root.mkdir(exist_ok=True)
    (root / "c.yaml").write_text(textwrap.dedent(text))
    return root


def test_run_all_good_exits_0_and_writes_results(tmp_path: Path) -> None:
    root = write(tmp_path, GOOD)
    proc = conformance("run", "--cases", str(root), "--framework", "torch", "-q", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads((tmp_path / "reports" / "results.json").read_text())
    records = data["records"]
    counts = data["run"]["counts"]
    assert len(records) == data["run"]["collected"] == counts["passed"] + counts["xfailed"]
    # The one known failure is the file's own generated float32 edge: torch's Normal gradient
    # at scale 3.4e38 (scale**2 overflows; conformance/known_failures/float32-edges.yaml).
    xfailed = {(r["case"], r["check"]) for r in records if r["outcome"] == "xfailed"}
    assert xfailed == {("edge-scale-f32-largest", "grad")}
    checks = {r["check"] for r in records}
    assert {"shapes", "log_prob", "grad", "grad_functional", "broadcast"} <= checks
    assert {r["dtype"] for r in records} == {"float32", "float64"}


def test_run_with_mismatches_exits_1(tmp_path: Path) -> None:
    root = write(tmp_path, GOOD)
    proc = conformance(
        "run",
        "--cases",
        str(root),
        "--adapter",
        "fake_adapters:ShiftedAdapter",
        "--framework",
        "fake.shifted",
        "-q",
        cwd=tmp_path,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr


def test_run_with_a_broken_case_file_exits_2(tmp_path: Path) -> None:
    root = write(tmp_path, GOOD.replace("Normal", "Nromal"))
    proc = conformance("run", "--cases", str(root), "--framework", "torch", "-q", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "case 'one': 'Nromal' is no family (did you mean 'Normal'?)" in proc.stdout


def test_run_usage_error_exits_2(tmp_path: Path) -> None:
    proc = conformance("run", "--framework", "nonesuch", cwd=tmp_path)
    assert proc.returncode == 2


def test_run_defaults_to_the_builtin_cases(tmp_path: Path) -> None:
    proc = conformance("run", "--collect-only", "-q", "--framework", "torch", cwd=tmp_path)
    assert "torchsharp-1334[torch-float32-shapes]" in proc.stdout, proc.stdout + proc.stderr
    assert builtin_cases() == REPO / "cases"


def test_an_argument_file_of_node_ids_runs_only_those_items(tmp_path: Path) -> None:
    """pytest's ``@file`` (one node id per line) is a selection: the built-in cases must not be
    added to it (they were: a re-run of 3,525 listed items collected all 24,082)."""
    write(tmp_path, GOOD)
    wanted = [
        "mycases/c.yaml::one[torch-float64-log_prob]",
        "mycases/c.yaml::one[torch-float32-shapes]",
    ]
    (tmp_path / "ids.txt").write_text("\n".join(wanted) + "\n")
    proc = conformance("run", "-q", "--framework=torch", "@ids.txt", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads((tmp_path / "reports" / "results.json").read_text())
    assert sorted(r["nodeid"] for r in data["records"]) == sorted(wanted)


def test_exported_schema_is_current() -> None:
    committed = json.loads((REPO / "cases" / "case.schema.json").read_text())
    assert committed == json.loads(json.dumps(json_schema())), (
        "cases/case.schema.json is stale: run `conformance schema -o cases/case.schema.json`"
    )


def test_schema_validates_the_bundled_cases() -> None:
    import jsonschema
    import yaml

    schema = json.loads((REPO / "cases" / "case.schema.json").read_text())
    for path in sorted((REPO / "cases").glob("*.yaml")):
        jsonschema.validate(yaml.safe_load(path.read_text()), schema)


def test_collect_only_leaves_the_last_results_untouched(tmp_path: Path) -> None:
    root = write(tmp_path, GOOD)
    results = tmp_path / "out" / "results.json"
    args = (
        f"--cases={root}",
        "--framework=torch",
        f"--results={results}",
        "-p",
        "no:cacheprovider",
    )
    ran = conformance("run", *args, cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    written = ("results.json", "index.html", "junit.xml")
    before = {name: (results.parent / name).read_bytes() for name in written}
    listed = conformance("run", *args, "--co", cwd=tmp_path)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert "[torch-float64-log_prob]" in listed.stdout
    # Not every item rewritten as "no result reported", nor a junit.xml of zero tests.
    assert {name: (results.parent / name).read_bytes() for name in written} == before


def test_nox_conformance_session_fails_on_mismatches() -> None:
    import ast

    tree = ast.parse((REPO / "noxfile.py").read_text())
    session = next(
        f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name == "conformance"
    )
    calls = [n for n in ast.walk(session) if isinstance(n, ast.Call)]
    assert not any(k.arg == "success_codes" for c in calls for k in c.keywords)


def test_noxfile_documents_every_session_and_pins_ruff() -> None:
    """The docstring once listed 3 sessions of 6, and lint installed whatever ruff was new."""
    import ast
    import tomllib

    tree = ast.parse((REPO / "noxfile.py").read_text())
    sessions = [
        f.name
        for f in tree.body
        if isinstance(f, ast.FunctionDef)
        and any("nox.session" in ast.unparse(d) for d in f.decorator_list)
    ]
    assert len(sessions) == 6
    doc = ast.get_docstring(tree) or ""
    assert all(f"``{name}" in doc for name in sessions), sessions
    lint = next(f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name == "lint")
    assert "pinned('ruff')" in ast.unparse(lint)
    assert "\nruff==" in (REPO / "constraints.txt").read_text()
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert any(r.startswith("ruff>=") for r in extras["optional-dependencies"]["test"])


def test_plain_nox_runs_the_tests_and_lint_not_the_conformance_suite() -> None:
    import noxfile

    assert noxfile.nox.options.sessions == ["tests", "lint"]


def test_the_nox_pins_come_from_the_constraints_with_overrides(monkeypatch) -> None:
    import noxfile

    monkeypatch.setenv("CONFORMANCE_PIN_NUMPYRO", "0.16.1")
    pins = noxfile.pinned_frameworks({"jax": "0.4.35"})
    assert "numpyro==0.16.1" in pins and "jax==0.4.35" in pins and "torch==2.13.0" in pins
    assert noxfile.pinned("ruff") == next(
        line for line in (REPO / "constraints.txt").read_text().splitlines()
        if line.startswith("ruff==")
    )  # fmt: skip


def test_version_and_python_dash_m(tmp_path: Path) -> None:
    from conformance import __version__

    proc = subprocess.run(
        [sys.executable, "-m", "conformance", "--version"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"conformance {__version__} (torch ")


def test_command_help_shows_the_suites_options_first(tmp_path: Path) -> None:
    """`run --help` once printed pytest's 566 lines headed "usage: pytest.main()"; `list
    --help` printed an empty table and exited 2."""
    for command in ("run", "list"):
        proc = conformance(command, "--help", cwd=tmp_path)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert proc.stdout.startswith(f"usage: conformance {command} [options]")
        for option in ("--framework", "--family", "--shard", "--quick", "--known-failures"):
            assert option in proc.stdout
        assert "pytest.main" not in proc.stdout and len(proc.stdout.splitlines()) < 120
        assert "goes to pytest" in proc.stdout.replace("\n", " ")


def test_list_ends_with_what_the_frameworks_do_not_offer(tmp_path: Path) -> None:
    """No placeholder items; one line per framework, a family by name where it lacks every
    parametrisation the cases use."""
    import os

    root = write(tmp_path, GOOD + MVN_BY_COVARIANCE_AND_TRIL)
    code = os.pathsep.join([str(REPO / "tests" / "support"), str(REPO)])  # this checkout's
    args = ("list", "--cases", str(root), "--check=log_prob", "--edges=off")
    proc = conformance(
        *args, "--framework=torch,gpytorch", cwd=tmp_path, env_extra={"PYTHONPATH": code}
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "unsupported" not in proc.stdout.split("items:")[0]
    assert proc.stdout.endswith(
        "not offered:\n  gpytorch lacks MultivariateNormal.scale_tril, Normal\n"
    )
    proc = conformance(*args, "--framework=torch", cwd=tmp_path, env_extra={"PYTHONPATH": code})
    assert proc.returncode == 0 and "not offered" not in proc.stdout


MVN_BY_COVARIANCE_AND_TRIL = """\
  - id: cov
    family: MultivariateNormal
    parametrization: covariance_matrix
    params: {loc: [0.0, 0.0], covariance_matrix: [[1.0, 0.0], [0.0, 1.0]]}
    value: [0.5, 0.5]
  - id: tril
    family: MultivariateNormal
    parametrization: scale_tril
    params: {loc: [0.0, 0.0], scale_tril: [[1.0, 0.0], [0.0, 1.0]]}
    value: [0.5, 0.5]
"""


def test_misspelt_options_and_names_get_a_suggestion(tmp_path: Path) -> None:
    proc = conformance("run", "--famly=Normal", cwd=tmp_path)
    assert proc.returncode == 2
    assert "unknown option --famly (did you mean --family?)" in proc.stderr
    proc = conformance("run", "--family=Normall", "--framework", "torhc", cwd=tmp_path)
    assert proc.returncode == 2
    assert "--family 'Normall' matches no family (did you mean 'Normal'?)" in proc.stderr
    assert "--framework 'torhc' matches no adapter (did you mean 'torch'?)" in proc.stderr


def test_every_value_option_takes_its_value_after_a_space(tmp_path: Path) -> None:
    """``--known-failures my.yaml`` (the README's spelling) ran nothing: "no tests ran", exit
    2, because pytest took the file for a path before the plugin's options were known. Every
    option declared with a value is now joined to it, read from the declarations."""
    from conformance.run.config.arguments import join_option_values, value_options

    assert {"--known-failures", "--shard", "--memory-budget", "--results"} <= value_options()
    assert (
        "--no-results" not in value_options() and "--strict-known-failures" not in value_options()
    )
    assert join_option_values(["--shard", "1/2", "--no-results", "-x"]) == [
        "--shard=1/2",
        "--no-results",
        "-x",
    ]
    known = tmp_path / "my.yaml"
    known.write_text(
        textwrap.dedent(
            """\
            known_failures:
              - id: my-normal-shapes
                family: Normal
                framework: torch
                case: one
                check: shapes
                dtype: float64
                kind: shape
                reason: a made-up failure, to see the file is read
            """
        )
    )
    root = write(tmp_path, GOOD)
    proc = conformance(
        "run", "--cases", str(root), "--known-failures", str(known), "--framework", "torch",
        "--check", "shapes", "--dtype", "float64", "--no-strict-known-failures", "-q",
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "no tests ran" not in proc.stdout
    records = json.loads((tmp_path / "reports" / "results.json").read_text())["records"]
    matched = [r for r in records if r.get("known_failures")]
    assert [(r["case"], r["check"]) for r in matched] == [("one", "shapes")]
    assert matched[0]["known_failures"][0]["id"] == "my-normal-shapes"


def test_a_misspelt_adapter_is_a_usage_error_not_an_internal_error(tmp_path: Path) -> None:
    """``--adapter module:Class`` that does not load exited 3 with 66 INTERNALERROR lines."""
    root = write(tmp_path, GOOD)
    proc = conformance(
        "run", "--cases", str(root), "--adapter", "no_such_module:Adapter", "-q", cwd=tmp_path
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    output = proc.stdout + proc.stderr
    assert "INTERNALERROR" not in output
    assert "--adapter: cannot load adapter 'no_such_module:Adapter'" in output


def test_the_readmes_known_failure_example_runs_as_it_says(tmp_path: Path) -> None:
    """The README's example entry, saved as my.yaml and passed as the README writes it."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = readme.split("```yaml\nknown_failures:", 1)[1].split("```", 1)[0]
    (tmp_path / "my.yaml").write_text("known_failures:" + block)
    proc = conformance(
        "run", "--known-failures", "my.yaml", "--family=GeneralizedPareto", "--framework=torch",
        "--check=log_prob", "-q", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    records = json.loads((tmp_path / "reports" / "results.json").read_text())["records"]
    mine = [
        r
        for r in records
        if any(k["id"] == "my-generalized-pareto-float64" for k in r.get("known_failures", []))
    ]
    assert [(r["case"], r["dtype"], r["outcome"]) for r in mine] == [
        ("scalar", "float64", "xfailed")
    ]


def test_a_misspelt_command_gets_a_suggestion(tmp_path: Path) -> None:
    proc = conformance("rn", "--family=Normal", cwd=tmp_path)
    assert proc.returncode == 2
    assert "'rn' is no command (did you mean 'run'?)" in proc.stderr
    assert "coverage" in proc.stderr  # the known commands are listed


def test_builtin_cases_run_beside_ones_own(tmp_path: Path) -> None:
    """``--cases DIR`` replaces the shipped cases; ``--builtin-cases`` adds them back, and a
    root named twice is read once (the run header once showed "cases, cases")."""
    from conformance.plan.planner import plan
    from conformance.plan.specs import CheckSpec
    from conformance.run.config.settings import Settings, parse_options

    root = write(tmp_path, GOOD)
    argv = [f"--cases={root}", "--family=Normal", "--framework=torch", "--check=shapes"]

    def files(extra: list[str], env: dict) -> set[str]:
        settings = Settings.from_sources(parse_options(argv + extra)[0], env)
        return {
            s.case.file for s in plan(settings.selection, root=tmp_path) if isinstance(s, CheckSpec)
        }

    assert files([], {}) == {"mycases/c.yaml"}
    both = files(["--builtin-cases", f"--cases={builtin_cases()}"], {})
    assert {"mycases/c.yaml", "cases/normal.yaml"} <= both  # (and other files with Normal cases)
    assert files([], {"CONFORMANCE_BUILTIN_CASES": "1"}) == both


def test_every_subcommands_options_and_choices_get_a_suggestion(tmp_path: Path) -> None:
    """argparse said only "unrecognized arguments" / "invalid choice"; `edges --family=Nrmal`
    printed nothing and exited 2."""
    expected = {
        ("list", "--famly=Normal"): "unknown option --famly (did you mean --family?)",
        ("edges", "--famly=Normal"): "unknown option --famly (did you mean --family?)",
        ("edges", "--family=Nrmal"): "--family 'Nrmal' matches no family (did you mean 'Normal'?)",
        ("coverage", "--format=jsn"): "'jsn' is no choice (did you mean 'json'?)",
        ("report", "r.json", "--ouptut=x.html"): "unknown option --ouptut (did you mean --output?)",
        ("triage", "--outptu=x"): "unknown option --outptu (did you mean --output?)",
        ("schema", "--otput=x"): "unknown option --otput (did you mean --output?)",
        ("mutants", "--onyl=numpyro-1971"): "unknown option --onyl (did you mean --only?)",
        ("mutants", "--only=numpyro-197"): "'numpyro-197' is no mutant (did you mean",
        ("bench", "--runz=2"): "unknown option --runz (did you mean --runs?)",
    }
    for args, message in expected.items():
        proc = conformance(*args, cwd=tmp_path)
        assert proc.returncode == 2, (args, proc.stdout + proc.stderr)
        assert message in proc.stderr, (args, proc.stderr)


def test_a_run_that_collects_nothing_says_which_filter_removed_everything(tmp_path) -> None:
    root = write(tmp_path, GOOD)
    narrow = ["--cases", str(root), "--framework=torch", "--edges=off", "-p", "no:cacheprovider"]
    proc = conformance("run", *narrow, "--check=plate", "-n", "0", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "nothing collected: --check removed all" in proc.stdout
    assert (
        "(they have: broadcast, context, grad, grad_functional, log_prob, rsample_grad, sample_fit, sample_shapes, shapes)"
        in proc.stdout
    )
    proc = conformance("run", *narrow, "-k", "nosuchthing", "-n", "0", cwd=tmp_path)
    assert proc.returncode == 2
    assert "nothing collected: -k 'nosuchthing' selected none of the" in proc.stdout
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = conformance("list", "--cases", str(empty), cwd=tmp_path)
    assert proc.returncode == 2
    assert f"nothing collected: no case files (*.yaml, *.yml) under {empty}" in proc.stderr
    proc = conformance("run", *narrow, "--check=plate", "--shard=1/2", "-n", "0", cwd=tmp_path)
    assert proc.returncode == 2, "an empty selection is no empty shard"


def test_a_run_whose_output_is_no_terminal_says_its_progress(tmp_path: Path) -> None:
    """CI logs (no tty) showed only pytest's percentage for a 30-minute first run."""
    from conformance.run.session.progress import line

    assert line(50, 200, 10.0) == (
        "conformance progress: 50/200 items (25%), 5.0 items/s, ETA 30 s, 10 s so far"
    )
    root = write(tmp_path, GOOD)
    for workers in ("0", "2"):  # pytest's own reporter, and xdist's
        proc = conformance(
            "run", "--cases", str(root), "--framework=torch", "-n", workers, "--no-results",
            cwd=tmp_path, env_extra={"CONFORMANCE_PROGRESS_INTERVAL": "0.5"},
        )  # fmt: skip
        assert proc.returncode == 0, proc.stdout[-3000:]
        pattern = r"conformance progress: (\d+)/(\d+) items .* items/s, ETA "
        found = re.findall(pattern, proc.stdout)
        assert found and all(int(total) > 0 for _, total in found), proc.stdout[-3000:]
        assert int(found[-1][0]) > int(found[0][0])  # it moves
        # Each on a line of its own, never after a row of progress dots.
        assert len(re.findall("^" + pattern, proc.stdout, re.M)) == len(found), proc.stdout
    quiet = conformance(
        "run", "--cases", str(root), "--framework=torch", "-n", "0", "--no-results",
        cwd=tmp_path, env_extra={"CONFORMANCE_PROGRESS_INTERVAL": "0"},
    )  # fmt: skip
    assert "conformance progress" not in quiet.stdout
