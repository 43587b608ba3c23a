"""Where the shipped case files lie: the plan names their items from here, the runner adds them."""

from __future__ import annotations

from pathlib import Path


def builtin_cases() -> Path:
    """The shipped cases: ``cases/`` beside the package in a checkout, or inside the wheel."""
    package = Path(__file__).resolve().parents[1]
    for candidate in (package.parent / "cases", package / "builtin_cases"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("no built-in cases found (neither ../cases nor builtin_cases)")
