"""Item ids: the same from any working directory, and pytest's id-based selection (``--lf``,
``--ff``, ``-k``, ``--deselect``, node ids) working on pytest 8 and on pytest 9, whose node ids
read a trailing ``[...]`` as parameters.

pytest 8 is installed for the test with pip into a directory of its own (put first on
PYTHONPATH), so the rest of the environment is the one the suite runs in.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SUPPORT = Path(__file__).resolve().parents[1] / "support"
CONFORMANCE = Path(sys.executable).parent / "conformance"
PYTEST_8 = "pytest==8.4.2"

CASES = """\
cases:
  - id: first
    family: Normal
    params: {loc: 0.0, scale: 1.0}
    value: [0.5, -1.0]
  - id: second
    family: Normal
    params: {loc: 1.0, scale: 2.0}
    value: [0.25]
"""
#: torch is right, fake.shifted is off by 1e-3: two failing items, two passing.
SELECTION = [
    "--conformance-framework=torch,fake.shifted",
    "--conformance-adapter=fake_adapters:ShiftedAdapter",
    "--conformance-check=log_prob",
    "--conformance-dtype=float64",
    "--conformance-variants=off",
    "-p",
    "no:timeout",
]
FAILING = {
    "cases/normal.yaml::first[fake.shifted-float64-log_prob]",
    "cases/normal.yaml::second[fake.shifted-float64-log_prob]",
}
PASSING = {
    "cases/normal.yaml::first[torch-float64-log_prob]",
    "cases/normal.yaml::second[torch-float64-log_prob]",
}


@pytest.fixture(scope="session")
def pytest8(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("pytest8")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", target, PYTEST_8],
        check=True,
    )
    return target


@pytest.fixture(params=["8", "9"])
def project(request: pytest.FixtureRequest, tmp_path: Path):
    """A project with a case root, and a runner of pytest (major version as the param)."""
    major = request.param
    path = [str(SUPPORT)]
    if major == "8":
        path.insert(0, str(request.getfixturevalue("pytest8")))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    env.pop("PYTEST_ADDOPTS", None)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "normal.yaml").write_text(CASES)
    version = subprocess.run(
        [sys.executable, "-c", "import pytest; print(pytest.__version__)"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert version.split(".")[0] == major, version  # the test really runs that pytest

    def run(*args: str) -> tuple[int, list[str]]:
        """Run the selection with ``args``; (exit code, the ids that ran, in order)."""
        results = tmp_path / "results.json"
        results.unlink(missing_ok=True)
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "--conformance-cases=cases",
                f"--conformance-results={results}",
                *SELECTION,
                *args,
            ],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode in (0, 1), proc.stdout[-3000:] + proc.stderr[-3000:]
        records = json.loads(results.read_text())["records"]
        ran = [r["nodeid"] for r in records if r["outcome"] in ("passed", "failed")]
        return proc.returncode, ran

    return run


def test_last_failed_and_failed_first(project) -> None:
    code, ran = project()
    assert code == 1 and set(ran) == FAILING | PASSING

    code, ran = project("--lf")
    assert code == 1 and sorted(ran) == sorted(FAILING)  # pytest 9 reran all four before

    code, ran = project("--ff", "-x")
    assert code == 1 and len(ran) == 1 and ran[0] in FAILING


def test_keyword_deselect_and_node_ids(project) -> None:
    _, ran = project("-k", "torch and first")
    assert ran == ["cases/normal.yaml::first[torch-float64-log_prob]"]

    deselected = "cases/normal.yaml::first[fake.shifted-float64-log_prob]"
    _, ran = project("--deselect", deselected)
    assert set(ran) == (FAILING | PASSING) - {deselected}

    wanted = "cases/normal.yaml::second[fake.shifted-float64-log_prob]"
    code, ran = project(wanted)
    assert code == 1 and ran == [wanted]


def _collected(cwd: Path, *args: str) -> list[str]:
    proc = subprocess.run(
        [str(CONFORMANCE), "run", "--co", "-q", "-p", "no:cacheprovider", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return [line for line in proc.stdout.splitlines() if "::" in line]


def test_ids_do_not_depend_on_the_working_directory(tmp_path: Path) -> None:
    """The shipped cases read ``cases/...`` from the repository and from elsewhere (a clone
    and a wheel once gave ``cases/beta.yaml::…`` and ``beta.yaml::…``, and ``conformance
    diff`` of two identical runs reported every item new and removed); a project's own case
    root reads ``<root name>/...`` from inside and outside the project."""
    selection = ["--family=Beta", "--framework=torch", "--dtype=float32", "--variants=off"]
    from_repo = _collected(REPO, *selection)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    files = ("cases/beta.yaml::", "cases/kl/beta.yaml::")  # Beta's cases, and KL's with p Beta
    assert from_repo and all(i.startswith(files) for i in from_repo)
    assert _collected(elsewhere, *selection) == from_repo

    project = tmp_path / "project"
    (project / "mycases").mkdir(parents=True)
    (project / "mycases" / "normal.yaml").write_text(CASES)
    inside = _collected(project, "--cases=mycases", "--framework=torch")
    outside = _collected(elsewhere, f"--cases={project / 'mycases'}", "--framework=torch")
    assert inside and all(i.startswith("mycases/normal.yaml::") for i in inside)
    assert outside == inside


def test_a_shipped_case_id_runs_from_anywhere(tmp_path: Path) -> None:
    """An id copied from a report (``cases/beta.yaml::…``) selects that item from any
    directory, where no ``cases/`` is (``conformance run`` finds the shipped file)."""
    wanted = "cases/beta.yaml::scalar[torch-float32-log_prob]"
    assert _collected(tmp_path, wanted) == [wanted]


def test_ids_from_an_installed_wheel_match_the_clones(tmp_path: Path) -> None:
    """Built and installed as a wheel, the shipped cases live in ``conformance/builtin_cases``;
    their ids still read ``cases/...``, so a wheel's run and a clone's diff cleanly."""
    wheels, site = tmp_path / "wheels", tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", wheels, REPO],
        check=True,
        timeout=600,
    )
    wheel = next(wheels.glob("*.whl"))
    # The distribution's own name ("conformance" on the package index is another project).
    assert wheel.name.startswith("distribution_conformance-"), wheel.name
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", site, wheel],
        check=True,
        timeout=600,
    )
    assert (site / "conformance" / "builtin_cases" / "beta.yaml").is_file()
    # One top-level module, no generic name: the oracle ships as files inside the package.
    with zipfile.ZipFile(wheel) as archive:
        top = {name.split("/")[0] for name in archive.namelist()}
    assert {t for t in top if not t.endswith(".dist-info")} == {"conformance"}, top
    oracle = site / "conformance" / "reference" / "families" / "normal.py"
    assert oracle.is_file() and not oracle.is_symlink()
    selection = ["--family=Beta", "--framework=torch", "--dtype=float32", "--variants=off"]
    env = {**os.environ, "PYTHONPATH": str(site)}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "conformance",
            "run",
            "--co",
            "-q",
            "-p",
            "no:cacheprovider",
            *selection,
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert (
        str(site)
        in subprocess.run(  # the wheel's package ran, not the checkout's
            [sys.executable, "-c", "import conformance.reference as r; print(r.__file__)"],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    from_wheel = [line for line in proc.stdout.splitlines() if "::" in line]
    assert from_wheel == _collected(REPO, *selection)
