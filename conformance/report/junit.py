"""The JUnit XML default: reports/junit.xml beside results.json, for CI systems that read JUnit.

pytest writes JUnit only when ``--junitxml`` is given, and its plugin reads that option once,
in ``pytest_configure`` — before collection — so whether "this run collects case items" must
be decided from the arguments: a case file named on the command line, or a path that is, lies
inside, or contains a case root. ``pytest tests`` (the suite's own tests) never gets one.
Our items' failures are already concise in JUnit: ``repr_failure`` returns our message (no
traceback) and pytest's ``message`` attribute keeps only its first lines.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from conformance.cases import CASE_SUFFIXES

FILENAME = "junit.xml"


def reaches_case_roots(args: Iterable[str], roots: Sequence[Path], cwd: Path) -> bool:
    """Whether collecting ``args`` would collect case files under ``roots``."""
    for arg in args:
        if arg.startswith("-"):
            continue
        path = (cwd / arg.split("::", 1)[0]).resolve()
        if path.suffix in CASE_SUFFIXES:
            return True
        for root in roots:
            if path == root or root in path.parents or path in root.parents:
                return True
    return False


def default_junitxml(
    *,
    given: str | None,
    results_path: Path | None,
    args: Iterable[str],
    roots: Sequence[Path],
    cwd: Path,
) -> Path | None:
    """The path to default ``--junitxml`` to, or None (the user chose one, results are off, or
    no case item will be collected)."""
    if given or results_path is None:
        return None
    if not reaches_case_roots(args, roots, cwd):
        return None
    return results_path.parent / FILENAME
