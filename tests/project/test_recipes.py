"""The recipes of docs/architecture.md, followed in a temporary copy of the repository.

A toy family (the exponential density, bound to torch's Exponential under a new name) and a toy
check are added by writing exactly the files the recipes name; the suite's completeness tests
must fail while a file is missing (naming what is missing) and pass once all are there, and the
new items must run and pass through the real plugin.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
COPIED = ("pyproject.toml", "README.md", "cases", "conformance", "reference", "tests")

TOY_ORACLE = '''\
"""Toy(rate): the exponential density under a new name (the recipe test's family)."""

import numpy as np

from ..core import Family, ParamInfo, ValueInfo


class Toy(Family):
    def _log_prob(self, params, value, parametrization, options):
        return np.log(params["rate"]) - params["rate"] * value

    def _grad(self, params, value, parametrization, options):
        return {"rate": 1.0 / params["rate"] - value, "value": -params["rate"]}

    def _sample(self, params, shape, rng, parametrization):
        return rng.exponential(1.0 / params["rate"], size=shape)


TOY = Toy(
    name="Toy",
    parametrizations={"rate": {"rate": ParamInfo(0, "positive")}},
    value=ValueInfo(0, "positive"),
)
'''
TOY_REGISTRY = """\
family: Toy
unsupported:
  numpyro: numpyro.distributions has no Toy
frameworks:
  torch:
    - constructor: torch.distributions.Exponential
"""
TOY_CASES = """\
defaults: {family: Toy}
cases:
  - id: batched
    params: {rate: {generator: positive, shape: [3], seed: 1}}
    value: {sample: {seed: 2}}
"""
TOY_ORACLE_TEST = """\
import numpy as np
from scipy import stats

from conformance import reference
def test_toy_is_scipy_expon() -> None:
    x = np.array([0.1, 1.0, 4.0])
    got = reference.get_family("Toy").log_prob({"rate": np.array(2.0)}, x)
    np.testing.assert_allclose(got, stats.expon(scale=0.5).logpdf(x), rtol=1e-12)
"""
FAMILY_RECIPE = {
    "reference/families/toy.py": TOY_ORACLE,
    "conformance/registry/families/toy.yaml": TOY_REGISTRY,
    "cases/toy.yaml": TOY_CASES,
    "tests/oracle/test_oracle_toy.py": TOY_ORACLE_TEST,
}

TOY_CHECK = '''\
"""finite: log_prob is finite wherever the oracle's is (the recipe test's check)."""

import numpy as np

from conformance.check_names import CheckName
from conformance.checks.base import Check, CheckResult
from conformance.checks.subject import Subject
from conformance.kinds import Kind


class FiniteCheck(Check):
    name = CheckName.FINITE
    description = "log_prob finite where the oracle's is"

    def evaluate(self, subject: Subject) -> CheckResult:
        got = subject.numpy(subject.log_prob(subject.build()))
        want = np.isfinite(subject.expected.log_prob)
        bad = int(np.sum(want & ~np.isfinite(got)))
        return CheckResult(bad == 0, kind=None if bad == 0 else Kind.NAN, message=f"{bad} non-finite")
'''


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for name in COPIED:
        src = REPO / name
        if src.is_symlink():  # reference/: a link to conformance/reference, as in the repository
            root.mkdir(exist_ok=True)
            (root / name).symlink_to(src.readlink(), target_is_directory=src.is_dir())
        elif src.is_dir():
            shutil.copytree(
                src, root / name, symlinks=True, ignore=shutil.ignore_patterns("__pycache__")
            )
        else:
            root.mkdir(exist_ok=True)
            shutil.copy2(src, root / name)
    return root


def _run(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(root), "CONFORMANCE_JAX_CACHE": "off"}
    env = {k: v for k, v in env.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER")}
    return subprocess.run(
        [sys.executable, *args], cwd=root, env=env, capture_output=True, text=True, timeout=600
    )


def _completeness(root: Path) -> subprocess.CompletedProcess:
    return _run(
        root, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/project/test_completeness.py"
    )


def _insert_after(path: Path, anchor: str, line: str) -> None:
    """Add ``line`` after ``anchor`` (which must be there: a moved anchor fails loudly)."""
    text = path.read_text(encoding="utf-8")
    assert text.count(anchor) == 1, (path, anchor)
    path.write_text(text.replace(anchor, anchor + line), encoding="utf-8")


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).write_text(text, encoding="utf-8")


@pytest.mark.parametrize("missing", sorted(set(FAMILY_RECIPE) - {"reference/families/toy.py"}))
def test_family_recipe_is_incomplete_without_each_file(tmp_path, missing) -> None:
    root = _copy(tmp_path)
    _write(root, {k: v for k, v in FAMILY_RECIPE.items() if k != missing})
    proc = _completeness(root)
    assert proc.returncode == 1, proc.stdout[-3000:]
    assert "[Toy]" in proc.stdout and "1 failed" in proc.stdout, proc.stdout[-3000:]


def test_family_and_check_recipes_pass_completeness_and_run(tmp_path) -> None:
    root = _copy(tmp_path)
    _write(root, FAMILY_RECIPE)
    # The check recipe: its module, its name, its registration, its README row.
    (root / "conformance/checks/finite.py").write_text(TOY_CHECK, encoding="utf-8")
    _insert_after(
        root / "conformance/check_names.py",
        '    PROPERTY = "property"\n',
        '    FINITE = "finite"\n',
    )
    registry = root / "conformance/checks/__init__.py"
    _insert_after(
        registry,
        "from conformance.checks.eager import EagerCheck\n",
        "from conformance.checks.finite import FiniteCheck\n",
    )
    _insert_after(registry, "    PropertyCheck(),\n", "    FiniteCheck(),\n")
    proc = _completeness(root)
    assert proc.returncode == 1 and "check finite: no row" in proc.stdout, proc.stdout[-3000:]
    readme = root / "README.md"
    readme.write_text(
        re.sub(
            r"(\| `property` \|[^\n]*\n)",
            r"\1| `finite` | log_prob finite where the oracle's is | all |\n",
            readme.read_text(encoding="utf-8"),
        ),
        encoding="utf-8",
    )
    proc = _completeness(root)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert (
        _run(
            root, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/oracle/test_oracle_toy.py"
        ).returncode
        == 0
    )

    run = _run(
        root, "-m", "pytest", "-p", "no:cacheprovider", "--conformance-cases=cases/toy.yaml",
        "--conformance-framework=torch,numpyro", "--conformance-check=finite,log_prob,grad",
        "--conformance-variants=off", "--conformance-no-results", "-rA",
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:]
    # No placeholder item, never silent: the header says which framework lacks the family.
    assert "conformance not offered: numpyro lacks Toy" in run.stdout
    assert "[numpyro-unsupported]" not in run.stdout
    for check in ("finite", "log_prob", "grad"):
        for dtype in ("float32", "float64"):
            assert f"PASSED cases/toy.yaml::batched[torch-{dtype}-{check}]" in run.stdout
