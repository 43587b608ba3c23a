"""The README's commands, pasted: the quick start's two lines and the "use from your own
repository" section's, each run (narrowed where it is long or needs what this machine lacks),
and the worked example they set up (examples/downstream, written by `conformance init`)."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "downstream"
README = (REPO / "README.md").read_text(encoding="utf-8")
BIN = Path(sys.executable).parent


def section(title: str) -> str:
    return README.split(f"## {title}", 1)[1].split("\n## ", 1)[0]


def bash_lines(text: str) -> list[str]:
    blocks = re.findall(r"```bash\n(.+?)\n\s*```", text, flags=re.S)
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip()]


def sh(command: str, cwd: Path, timeout: int = 900) -> subprocess.CompletedProcess:
    """``command`` in bash, with this environment's bin first (as after `. .venv/bin/activate`)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CONFORMANCE_", "PYTEST_"))}
    env["PATH"] = f"{BIN}{os.pathsep}{env['PATH']}"
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)  # fmt: skip


#: What each step of the quick start becomes here: the install resolves against this very
#: environment (pip must accept the constraints with the extras, and find nothing to change),
#: the runs are narrowed, apt-get is left out (Chromium is there, or the browser tests say so).
def narrowed(step: str, venv_dir: Path) -> str | None:
    if step.startswith("sudo apt-get"):
        return None
    if step == "python3 -m venv .venv":
        return f"python3 -m venv --without-pip {venv_dir}"
    if step == ". .venv/bin/activate":
        return None  # the test's own environment plays the activated one
    if step.startswith("pip install "):
        return f"python -m pip install --dry-run --no-deps {step.removeprefix('pip install ')}"
    if step == "conformance run -n auto":
        return "conformance run -n 0 --quick --family=Normal --framework=torch --no-results"
    if step == "pytest tests -n auto":
        return "python -m pytest tests --collect-only -q -p no:cacheprovider"
    raise AssertionError(f"a README step this test does not know how to run: {step!r}")


def test_the_quick_start_lines_work_when_pasted(tmp_path: Path) -> None:
    lines = bash_lines(section("Quick start"))
    assert len(lines) == 2
    for line in lines:
        for step in (s.strip() for s in line.split("&&")):
            command = narrowed(step, tmp_path / "venv")
            if command is None:
                continue
            proc = sh(command, REPO)
            assert proc.returncode == 0, (step, proc.stdout[-3000:] + proc.stderr[-3000:])
            if step.startswith("pip install"):
                # the constraints agree with what is installed: only the project would change
                would = re.findall(r"Would install (.*)", proc.stdout)
                assert would == ["distribution-conformance-0.1.0"], proc.stdout[-2000:]


def test_the_cpu_torch_line_names_the_pinned_torch_and_pytorchs_cpu_index() -> None:
    """Not run: PyTorch's index is out of reach here (so README line 1 must not need it)."""
    line = re.search(r"```\n(pip install -c constraints.txt torch .+)\n```", README).group(1)
    assert shlex.split(line) == ["pip", "install", "-c", "constraints.txt", "torch",
                                 "--index-url", "https://download.pytorch.org/whl/cpu"]  # fmt: skip
    assert "download.pytorch.org" not in bash_lines(section("Quick start"))[0]


def test_the_downstream_section_works_when_pasted(tmp_path: Path) -> None:
    """pip install from the repository (here: this clone's committed HEAD through git, not the
    network), `conformance init .`, and the run it prints: green, the project's known failures
    xfailed under its own entries."""
    install, init, run = bash_lines(section("Using it from your own repository"))
    url = "git+https://github.com/conformance/conformance"
    assert url in install
    local = install.replace(url, f"git+file://localhost{REPO}").replace("pip install ", "", 1)
    proc = sh(f"python -m pip install --dry-run --no-deps {local}", tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "Would install distribution-conformance-0.1.0" in proc.stdout
    assert init == "conformance init ."
    proc = sh(init, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"Run them: {run}" in proc.stdout.replace("./", "")
    proc = sh(run + " -n 2 -p no:cacheprovider", tmp_path)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    records = json.loads((tmp_path / "reports" / "results.json").read_text())["records"]
    xfailed = [r for r in records if r["outcome"] == "xfailed"]
    assert xfailed and all(
        r["known_failures"][0]["id"].startswith("torch-beta-lgamma") for r in xfailed
    )
    assert {r["framework"] for r in records} == {"torch"}
    assert {r["file"] for r in records} == {"cases/my_distributions.yaml"}


def test_the_readme_shows_the_examples_workflow() -> None:
    block = section("Using it from your own repository").split("```yaml\n", 1)[1].split("```")[0]
    assert block in (EXAMPLE / ".github" / "workflows" / "conformance.yml").read_text()


def test_the_example_pins_a_commit_of_the_suite_that_has_every_input_it_uses() -> None:
    text = (EXAMPLE / ".github" / "workflows" / "conformance.yml").read_text()
    jobs = yaml.safe_load(text)["jobs"]
    assert {j["if"] for j in jobs.values()} == {
        "github.event_name == 'pull_request'",
        "github.event_name != 'pull_request'",
    }
    assert "--quick" in jobs["quick"]["with"]["args"] and jobs["full"]["with"]["shards"] == 4
    triggers = yaml.safe_load(text)[True]
    assert {"pull_request", "schedule", "workflow_dispatch"} <= set(triggers)
    pins = {j["uses"] for j in jobs.values()}
    assert len(pins) == 1
    sha = re.fullmatch(r"conformance/conformance/\.github/workflows/conformance\.yml@([0-9a-f]{40})",
                       pins.pop()).group(1)  # fmt: skip
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout: the pinned commit cannot be looked up")
    shown = subprocess.run(["git", "-C", str(REPO), "show", f"{sha}:.github/workflows/conformance.yml"],
                           capture_output=True, text=True, check=True).stdout  # fmt: skip
    inputs = yaml.safe_load(shown)[True]["workflow_call"]["inputs"]
    for job in jobs.values():
        assert set(job["with"]) <= set(inputs), set(job["with"]) - set(inputs)


def test_init_writes_the_example_pinned_to_the_installed_commit(tmp_path: Path) -> None:
    from conformance.commands import scaffold

    written = scaffold.scaffold(tmp_path, commit="a" * 40)
    assert [p.relative_to(tmp_path).as_posix() for p in written] == list(scaffold.FILES)
    for name in scaffold.FILES[:2]:
        assert (tmp_path / name).read_text() == (EXAMPLE / name).read_text()
    workflow = (tmp_path / scaffold.FILES[2]).read_text()
    assert workflow.count("conformance.yml@" + "a" * 40) == 2
    with pytest.raises(FileExistsError):
        scaffold.scaffold(tmp_path)
    proc = sh("conformance init .", tmp_path)
    assert proc.returncode == 2 and "these exist (--force overwrites)" in proc.stderr
    assert sh("conformance init . --force", tmp_path).returncode == 0
