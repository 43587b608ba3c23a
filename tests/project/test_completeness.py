"""Every oracle family is complete, and every check is documented: the suite's own inventory.

A family is complete when it has a registry file, a binding in some built-in adapter, cases in
``cases/`` and oracle tests in ``tests/oracle/test_oracle_*.py``; a check when the README's table names
it. ``tests/project/test_recipes.py`` runs this module in a temporary copy of the repository with a toy
family and a toy check added by the recipes of docs/architecture.md.
"""

from __future__ import annotations

import ast
import importlib
from functools import cache
from pathlib import Path

import pytest

from conformance import reference
from conformance.adapters import BUILTIN
from conformance.cases.loader import find_case_files, load_case_file
from conformance.checks import CHECKS
from conformance.registry import FAMILY_DIR, entries

REPO = Path(__file__).resolve().parents[2]


@cache
def _case_families() -> set[str]:
    """Families of the cases in ``cases/`` that load (a broken one is another test's failure)."""
    files = find_case_files(REPO / "cases")
    return {case.family for path in files for case in load_case_file(path).cases}


@cache
def _oracle_test_strings() -> set[str]:
    """Every string literal in the oracle's tests: a family they never name is untested."""
    out: set[str] = set()
    for path in sorted((REPO / "tests" / "oracle").glob("test_oracle_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                out.add(node.value)
    return out


@pytest.mark.parametrize("family", reference.family_names())
def test_every_oracle_family_has_bindings_cases_and_oracle_tests(family: str) -> None:
    assert family in entries(), f"{family}: no registry file in {FAMILY_DIR}"
    bound = [cls.name for cls in BUILTIN if family in cls().family_bindings()]
    assert bound, f"{family}: no built-in adapter binds it (registry file or naming convention)"
    assert family in _case_families(), f"{family}: no case in cases/*.yaml"
    assert family in _oracle_test_strings(), f"{family}: not named in tests/oracle/test_oracle_*.py"


def test_registry_names_only_oracle_families() -> None:
    assert set(entries()) <= set(reference.family_names())


def test_declared_unsupported_frameworks_follow_a_naming_convention() -> None:
    """``unsupported`` opts a family out of a framework's convention, so it names one."""
    conventions = {c.registry_name: c.family_module for c in BUILTIN if c.family_module}
    for family, entry in entries().items():
        for framework in entry.unsupported:
            assert framework in conventions, f"{family}: {framework} has no naming convention"
            assert framework not in entry.frameworks, f"{family}: {framework} bound and not"


def test_conventions_name_real_constructors_and_unsupported_declarations_are_true() -> None:
    """The convention's default (``torch.distributions.<Family>``) exists in the framework, and
    a family declared unsupported really is absent there: neither claim is taken on trust."""
    for cls in BUILTIN:
        if not cls.family_module:
            continue
        module = importlib.import_module(cls.family_module)
        for bindings in cls().family_bindings().values():
            for binding in bindings:
                owner, _, attr = binding.constructor.rpartition(".")
                assert hasattr(importlib.import_module(owner), attr), binding.constructor
        for family, entry in entries().items():
            if cls.registry_name in entry.unsupported:
                assert not hasattr(module, family), f"{cls.family_module}.{family} exists"


def test_every_check_is_in_the_readme_table() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    rows = [line for line in readme.splitlines() if line.startswith("| `")]
    for name in CHECKS:
        assert any(f"`{name}`" in row.split("|")[1] for row in rows), f"check {name}: no row"
