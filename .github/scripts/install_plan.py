"""What the reusable workflow installs for one call: the extras of the frameworks asked for,
the suite's constraints less the packages the caller's requirements name, and the torch
requirement to take from PyTorch's CPU index. Standard library only: it runs before the suite
is installed.

    python install_plan.py FRAMEWORKS REQUIREMENTS CONSTRAINTS OUT_CONSTRAINTS

prints ``extras=...`` and ``torch=...`` lines for $GITHUB_OUTPUT.
"""

from __future__ import annotations

import fnmatch
import re
import sys
from pathlib import Path

#: Each built-in adapter (as --framework names them) → the extra that installs its framework.
ADAPTER_EXTRAS = {
    "torch": "torch",
    "numpyro": "numpyro",
    "gpytorch": "gpytorch",
    "gpytorch.dense": "gpytorch",
    "gpytorch.root": "gpytorch",
    "gpytorch.diag": "gpytorch",
    "gpytorch.blockdiag": "gpytorch",
    "gpytorch.kronecker": "gpytorch",
    "gpytorch.iterative": "gpytorch",
}


def _name(requirement: str) -> str:
    return re.split(r"[=<>!~ \[;@]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def extras(frameworks: str) -> list[str]:
    """The extras for ``frameworks`` (globs, comma- or space-separated; empty: all). A
    third-party adapter's name selects none: its package brings its framework."""
    patterns = [p for p in re.split(r"[,\s]+", frameworks) if p]
    if not patterns:
        return ["frameworks"]
    return sorted(
        {e for a, e in ADAPTER_EXTRAS.items() if any(fnmatch.fnmatchcase(a, p) for p in patterns)}
    )


def constraints(text: str, requirements: str) -> str:
    """The suite's pins, less those of packages the caller's requirements name (theirs win)."""
    named = {_name(r) for r in requirements.split() if r}
    kept = [
        line
        for line in text.splitlines()
        if not line.split("#", 1)[0].strip() or _name(line.split("#", 1)[0]) not in named
    ]
    return "\n".join(kept) + "\n"


def torch_requirement(chosen: list[str], requirements: str) -> str:
    """``torch`` (or the caller's torch requirement) when a chosen extra needs torch, else ''."""
    if not {"torch", "gpytorch", "frameworks"} & set(chosen):
        return ""
    return next((r for r in requirements.split() if _name(r) == "torch"), "torch")


def main(argv: list[str]) -> int:
    frameworks, requirements, source, target = argv
    chosen = extras(frameworks)
    Path(target).write_text(constraints(Path(source).read_text(), requirements))
    print(f"extras={','.join(chosen)}")
    print(f"torch={torch_requirement(chosen, requirements)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
