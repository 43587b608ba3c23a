"""The executable store answers only for the code that runs: a NumPyro method patched at
start-up changes the outcome of the affected items with a warm store exactly as with the store
off, and a patch the items cannot reach leaves the store warm.

Every run is a fresh ``conformance run`` process, as a maintainer testing a fix in place would
start it: the patch comes from a ``sitecustomize`` on ``PYTHONPATH`` or from a session-scoped
fixture in the project's ``conftest.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("numpyro")

CASES = """\
cases:
  - id: scalar
    family: Normal
    params: {loc: 0.3, scale: 1.7}
    value: -0.4
  - id: batched
    family: Normal
    params:
      loc: {generator: normal, shape: [4], seed: 1}
      scale: {generator: positive, shape: [4], seed: 2}
    value: {sample: {seed: 3}}
"""

#: Patches of ``numpyro.distributions.Normal.log_prob``, each as a maintainer would try a
#: change: wrong everywhere, wrong only when traced (as under ``jax.jit``), and a gradient
#: stopped. ``Gamma`` is the patch these items never reach.
PATCHES = {
    "shift": """
        import numpyro.distributions as dist

        _original = dist.Normal.log_prob

        def log_prob(self, value):
            return _original(self, value) + 1.0

        dist.Normal.log_prob = log_prob
    """,
    "jit-only": """
        import jax
        import numpyro.distributions as dist

        _original = dist.Normal.log_prob

        def log_prob(self, value):
            out = _original(self, value)
            return out + 1.0 if isinstance(out, jax.core.Tracer) else out

        dist.Normal.log_prob = log_prob
    """,
    "stop-gradient": """
        import jax
        import numpyro.distributions as dist

        _original = dist.Normal.log_prob

        def log_prob(self, value):
            return _original(self, jax.lax.stop_gradient(value))

        dist.Normal.log_prob = log_prob
    """,
    "unrelated": """
        import numpyro.distributions as dist

        _original = dist.Gamma.log_prob

        def log_prob(self, value):
            return _original(self, value) + 1.0

        dist.Gamma.log_prob = log_prob
    """,
}

CONFTEST = """
import pytest


@pytest.fixture(scope="session", autouse=True)
def patched_normal():
    import numpyro.distributions as dist

    original = dist.Normal.log_prob

    def log_prob(self, value):
        return original(self, value) + 1.0

    dist.Normal.log_prob = log_prob
    yield
    dist.Normal.log_prob = original
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("patched")
    (root / "pytest.ini").write_text("[pytest]\n")
    (root / "cases").mkdir()
    (root / "cases" / "store_probe.yaml").write_text(CASES)
    for name, source in PATCHES.items():
        (root / name).mkdir()
        (root / name / "sitecustomize.py").write_text(textwrap.dedent(source))
    with_conftest = root / "with-conftest"
    with_conftest.mkdir()
    shutil.copy(root / "pytest.ini", with_conftest / "pytest.ini")
    shutil.copytree(root / "cases", with_conftest / "cases")
    (with_conftest / "conftest.py").write_text(CONFTEST)
    return root


def run(
    project: Path,
    *,
    patch: str | None = None,
    store: bool = True,
    cwd: Path | None = None,
    extra: tuple[str, ...] = (),
):
    """One fresh run of the probe cases: (outcome per item, the store's counts)."""
    where = cwd or project
    results = where / "out" / f"{patch}-{store}-{len(extra)}.json"
    env = {
        **os.environ,
        "CONFORMANCE_JAX_CACHE": str(project / "store") if store else "off",
        "PYTHONPATH": str(project / patch) if patch else "",
    }
    env.pop("PYTEST_XDIST_WORKER", None)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "conformance.cli",
            "run",
            "-n",
            "0",
            "--cases=cases",
            "--framework=numpyro",
            "--check=log_prob,grad",
            "--dtype=float64",
            "--edges=off",
            "--variants=off",
            f"--results={results}",
            "-p",
            "no:cacheprovider",
            *extra,
        ],
        cwd=where,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-3000:]
    data = json.loads(results.read_text())
    outcomes = {r["nodeid"]: r["outcome"] for r in data["records"]}
    timing = data["run"]["timing"]
    counts: dict[str, int] = {}
    for process in [timing["controller"], *timing["workers"].values()]:
        for name, n in process["counts"].items():
            counts[name] = counts.get(name, 0) + n
    assert len(outcomes) == 4, outcomes
    return outcomes, counts


@pytest.fixture(scope="module")
def warm(project: Path) -> dict:
    """The store filled by an unpatched run, and what a second unpatched run loads."""
    filled, counts = run(project)
    assert set(filled.values()) == {"passed"}, filled
    assert counts.get("executable_store_writes", 0) > 0
    again, counts = run(project)
    assert again == filled
    assert "executable_store_writes" not in counts, "a second run compiles nothing"
    assert counts.get("executable_store_hits", 0) > 0
    return filled


@pytest.mark.parametrize("patch", ["shift", "jit-only", "stop-gradient"])
def test_a_patch_at_start_up_is_tested_with_a_warm_store(project, warm, patch) -> None:
    warm_outcomes, counts = run(project, patch=patch)
    off_outcomes, _ = run(project, patch=patch, store=False)
    assert "failed" in off_outcomes.values(), f"the {patch} patch must break something"
    assert warm_outcomes == off_outcomes
    assert counts.get("executable_store_writes", 0) > 0, "the patched code was compiled"


def test_a_patch_by_a_session_fixture_is_tested_with_a_warm_store(project, warm) -> None:
    with_conftest = project / "with-conftest"
    warm_outcomes, counts = run(project, cwd=with_conftest)
    off_outcomes, _ = run(project, store=False, cwd=with_conftest)
    assert "failed" in off_outcomes.values()
    assert warm_outcomes == off_outcomes
    assert counts.get("executable_store_writes", 0) > 0


def test_a_patch_the_items_do_not_reach_leaves_the_store_warm(project, warm) -> None:
    outcomes, counts = run(project, patch="unrelated")
    assert outcomes == warm
    assert "executable_store_writes" not in counts, "Gamma's patch emptied Normal's entries"
    assert counts.get("executable_store_hits", 0) > 0


def test_no_executable_store_traces_everything_again(project, warm) -> None:
    """The way out for what the store cannot see: every xdist worker traces afresh."""
    outcomes, counts = run(project, patch="shift", extra=("--no-executable-store", "-n", "2"))
    off_outcomes, _ = run(project, patch="shift", store=False)
    assert outcomes == off_outcomes
    assert not any(k.startswith("executable_store") for k in counts), counts
    _, counts = run(project, extra=("-n", "2"))
    assert counts.get("executable_store_hits", 0) > 0, "the workers' counts are read"
