"""Fixtures for the suite's own tests."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path

import pytest

from conformance.run.config.arguments import in_pytest_spelling

pytest_plugins = ["pytester"]

# Tests are grouped by the part they test (tests/<part>/test_*.py); the shared helpers live here.
TESTS = Path(__file__).resolve().parent
SUPPORT = TESTS / "support"
REPO = TESTS.parent
sys.path.insert(0, str(SUPPORT))
sys.path.insert(0, str(TESTS))

# Case-like YAML under tests/ is test data, never a suite of its own.
collect_ignore_glob = ["data/*", "support/*"]

# pytester's in-process runs restore sys.modules afterwards, evicting whatever a run imported.
# C-extension frameworks (torch above all) cannot be imported twice in one process — the second
# import crashes — so framework modules stay resident across in-process runs.
_RESIDENT = ("torch", "jax", "jaxlib", "numpyro", "gpytorch", "linear_operator", "scipy", "numpy")


def _keep_frameworks_resident() -> None:
    import _pytest.pytester as pytester_module

    original = pytester_module.SysModulesSnapshot

    class ResidentSnapshot(original):  # type: ignore[misc, valid-type]
        def __init__(self, preserve=None) -> None:
            def keep(name: str) -> bool:
                return name.split(".")[0] in _RESIDENT or bool(preserve and preserve(name))

            super().__init__(preserve=keep)

    pytester_module.SysModulesSnapshot = ResidentSnapshot


_keep_frameworks_resident()


@pytest.fixture
def case_dir(pytester: pytest.Pytester):
    """Write case files under the pytester dir: ``case_dir({"a.yaml": "..."})`` → ``cases/``.

    An ini file makes the pytester dir the rootdir, so node ids read ``cases/<file>::…``.
    """
    pytester.makeini("[pytest]\n")

    def write(files: dict[str, str]) -> Path:
        root = pytester.path / "cases"
        root.mkdir(exist_ok=True)
        for name, text in files.items():
            (root / name).write_text(textwrap.dedent(text), encoding="utf-8")
        return root

    return write


@pytest.fixture
def run_suite(pytester: pytest.Pytester):
    """Run the conformance plugin in-process on a case dir; returns (result, results.json).

    Unless a test names its own ``--check`` (``--edges``), only the shapes and log_prob checks
    run (and no generated edge cases), so item counts in these tests stay about collection and
    outcomes, not about the list of checks or the edge generator.
    """

    def run(cases: Path, *args: str, subprocess: bool = False):
        out = pytester.path / "results.json"
        checks = [] if any(a.startswith("--check") for a in args) else ["--check=shapes,log_prob"]
        edges = [] if any(a.startswith("--edges") for a in args) else ["--edges=off"]
        # pytest spells the suite's options --conformance-X; `conformance run` maps them so.
        argv = in_pytest_spelling(
            [f"--cases={cases}", f"--results={out}", "-p", "no:cacheprovider", *checks, *edges,
             *args]
        )  # fmt: skip
        if subprocess:
            env_path = os.pathsep.join([str(SUPPORT), os.environ.get("PYTHONPATH", "")])
            pytester._monkeypatch.setenv("PYTHONPATH", env_path)
            result = pytester.runpytest_subprocess(*argv)
        else:
            result = pytester.runpytest(*argv)
        data = json.loads(out.read_text()) if out.exists() else None
        return result, data

    return run
