"""``conformance init DIR``: the downstream example (examples/downstream) written into a
repository: its case directory, known-failures file and a workflow calling the reusable one.

The workflow is pinned to the commit the suite was installed from, where that is known (a
git checkout, or pip's record of a ``git+`` install), and to the template's commit otherwise.
Existing files are never overwritten without ``--force``.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from importlib import metadata
from pathlib import Path

#: What init writes, relative to the template and the target alike.
FILES = (
    "conformance/cases/my_distributions.yaml",
    "conformance/known_failures.yaml",
    ".github/workflows/conformance.yml",
)
_PIN = re.compile(r"(conformance\.yml@)([0-9a-f]{40})")


def template() -> Path:
    """examples/downstream beside the package in a checkout, or inside the wheel."""
    package = Path(__file__).resolve().parents[1]
    for candidate in (package.parent / "examples" / "downstream", package / "downstream_template"):
        if (candidate / FILES[0]).is_file():
            return candidate
    raise FileNotFoundError("no downstream template (examples/downstream) found")


def installed_commit() -> str | None:
    """The commit this suite was installed from: pip's direct_url.json (``git+`` installs),
    or the checkout's HEAD for an editable install; None when unknown."""
    try:
        text = metadata.distribution("distribution-conformance").read_text("direct_url.json")
        commit = (json.loads(text or "{}").get("vcs_info") or {}).get("commit_id")
        if commit:
            return commit
    except metadata.PackageNotFoundError:
        pass
    root = Path(__file__).resolve().parents[2]
    if not (root / ".git").exists():
        return None
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
            timeout=30, check=True,
        ).stdout.strip()  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    return out if re.fullmatch(r"[0-9a-f]{40}", out) else None


def scaffold(target: Path, force: bool = False, commit: str | None = None) -> list[Path]:
    """Write :data:`FILES` under ``target``; returns them. Raises FileExistsError naming the
    files that exist (nothing is written then) unless ``force``."""
    source = template()
    existing = [target / f for f in FILES if (target / f).exists()]
    if existing and not force:
        raise FileExistsError(", ".join(str(p) for p in existing))
    written = []
    for name in FILES:
        text = (source / name).read_text(encoding="utf-8")
        if name.endswith("conformance.yml") and commit:
            text = _PIN.sub(lambda m: m.group(1) + commit, text)
        path = target / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def run_command(target: Path) -> str:
    """The command that runs what :func:`scaffold` wrote under ``target``, for the framework
    its workflow names (the example's own choice, read from the file)."""
    workflow = (target / FILES[2]).read_text(encoding="utf-8")
    found = re.search(r"^\s*framework:\s*([\w.]+)", workflow, re.M)
    cases = shlex.quote(str(target / "conformance" / "cases"))
    known = shlex.quote(str(target / FILES[1]))
    framework = f" --framework {found.group(1)}" if found else ""
    return f"conformance run --cases {cases} --known-failures {known}{framework}"
