"""docs/conventions.md is the registry's declared conventions, rendered; it must not drift."""

from __future__ import annotations

import subprocess
import sys

from conformance.commands.conventions_page import DOC_PATH, declared, render
from conformance.registry import entries


def test_checked_in_page_matches_the_registry() -> None:
    assert DOC_PATH.read_text(encoding="utf-8") == render(), (
        "docs/conventions.md is stale: run `conformance conventions --output=docs/conventions.md`"
    )


def test_every_binding_is_listed_and_every_declaration_explained() -> None:
    page = render()
    for family in entries().values():
        for framework, bindings in family.frameworks.items():
            for binding in bindings:
                row = f"| {family.family} | {framework} | `{binding.constructor}` |"
                assert row in page
                if binding.oracle or binding.validation or binding.value_dtypes:
                    # A by-design difference with no reason given is not a documented convention.
                    assert binding.note.strip(), (family.family, framework, declared(binding))


def test_declared_differences_name_what_the_checks_use() -> None:
    page = render()
    assert "| Uniform | torch | `Uniform` | all | oracle support_upper=open |" in page
    assert "| Uniform | numpyro | `Uniform` | all | validation=none |" in page
    assert "value dtypes int32/int64" in page


def test_cli_writes_the_page(tmp_path) -> None:
    out = tmp_path / "conventions.md"
    subprocess.run(
        [sys.executable, "-m", "conformance.cli", "conventions", f"--output={out}"], check=True
    )
    assert out.read_text(encoding="utf-8") == render()
