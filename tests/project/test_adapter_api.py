"""The public API module is the whole surface a third-party adapter needs: the example adapter
imports nothing of the suite but it."""

from __future__ import annotations

import ast
from pathlib import Path

import conformance.adapters.api as api

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "scipy_adapter"


def _suite_imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of each import of the suite's package in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
    return [(line, m) for line, m in found if m.split(".")[0] == "conformance"]


def test_the_example_adapter_imports_only_the_public_api() -> None:
    files = sorted(EXAMPLE.rglob("*.py"))
    assert files
    imports = {f"{p.relative_to(ROOT)}:{line}": m for p in files for line, m in _suite_imports(p)}
    assert imports  # the example does use the suite
    offenders = {where: m for where, m in imports.items() if m != api.__name__}
    assert not offenders, offenders


def test_the_public_api_exports_what_it_lists() -> None:
    assert api.__all__
    missing = [name for name in api.__all__ if not hasattr(api, name)]
    assert not missing, missing
