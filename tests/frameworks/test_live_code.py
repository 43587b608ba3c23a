"""Fingerprints of live code (conformance.adapters.numpyro.store.live_code): what changes them and what must
not.

A small framework (``fakefw``: a base class, distributions, helpers, a dispatch registry and a
setting) is written to a temporary directory and walked like JAX and NumPyro are; patches come
from a module of the "user's" (``userpatch``), as a ``sitecustomize`` or ``conftest.py`` would
apply them. The real frameworks' fingerprints are checked in fresh processes at the end.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conformance.adapters.numpyro.store import live_code

FAKEFW = {
    "__init__.py": """
        from fakefw import util
        from fakefw.dists import Base, Expanded, Gamma, LogNormal, Normal

        SETTING = True
    """,
    "util.py": """
        import functools
        from textwrap import dedent  # an installed function the framework names

        def clamp(x):
            return min(max(x, 0.0), 1.0)

        @functools.singledispatch
        def promote(d):
            return d

        def _make_scaler(factor):
            def scale(x):
                return x * factor
            return scale

        scale = _make_scaler(2.0)

        # Run-time state, not code: a walked package that keeps no settings ignores it.
        _initialised = False
    """,
    "dists.py": """
        from fakefw import util

        class Base:
            validate = False

            def log_prob(self, x):
                return 0.0

            def expand(self):
                return Expanded(self)

        class Expanded(Base):
            def __init__(self, base):
                self.base = base

        class Normal(Base):
            def log_prob(self, x):
                return -util.clamp(x) ** 2 / 2

        class Gamma(Base):
            def log_prob(self, x):
                return -x

        class LogNormal(Base):
            def __init__(self):
                self.base = Normal()
    """,
}

USERPATCH = """
    import userhelper

    def normal_log_prob(self, x):
        return userhelper.shift(x)

    def make_clamp(low):
        def clamp(x):
            return max(x, low)
        return clamp
"""
USERHELPER_V1 = "def shift(x):\n    return x + 1.0\n"
USERHELPER_V2 = "def shift(x):\n    return x + 2.0\n"


@pytest.fixture
def fakefw(tmp_path, monkeypatch):
    """``fakefw`` and the user's modules importable, fresh for each test."""
    package = tmp_path / "fw" / "fakefw"
    package.mkdir(parents=True)
    for name, text in FAKEFW.items():
        (package / name).write_text(textwrap.dedent(text))
    user = tmp_path / "user"
    user.mkdir()
    (user / "userpatch.py").write_text(textwrap.dedent(USERPATCH))
    (user / "userhelper.py").write_text(USERHELPER_V1)
    monkeypatch.syspath_prepend(str(tmp_path / "fw"))
    monkeypatch.syspath_prepend(str(user))
    for name in [
        m for m in sys.modules if m.split(".")[0] in ("fakefw", "userpatch", "userhelper")
    ]:
        monkeypatch.delitem(sys.modules, name)
    module = importlib.import_module("fakefw")
    yield module
    for name in [
        m for m in sys.modules if m.split(".")[0] in ("fakefw", "userpatch", "userhelper")
    ]:
        sys.modules.pop(name, None)


def scope(settings: tuple[str, ...] = ("fakefw",)) -> live_code.CodeScope:
    return live_code.CodeScope(
        packages=("fakefw",), settings=settings, separable="fakefw.dists.Base"
    )


def fingerprints(fw, settings: tuple[str, ...] = ("fakefw",)) -> dict[str, str]:
    """A fresh fingerprint (as a new process would take it): the process's, and each class's
    as a binding's constructor."""
    code = live_code.LiveCode(scope(settings))
    out = {"process": code.process()}
    for name in ("Normal", "Gamma", "LogNormal"):
        out[name] = code.reach((getattr(fw, name),))
    return out


def test_equal_code_gives_equal_fingerprints(fakefw) -> None:
    assert fingerprints(fakefw) == fingerprints(fakefw)


def test_a_patched_method_changes_what_reaches_its_class_and_nothing_else(
    fakefw, monkeypatch
) -> None:
    import userpatch

    before = fingerprints(fakefw)
    monkeypatch.setattr(fakefw.Normal, "log_prob", userpatch.normal_log_prob)
    after = fingerprints(fakefw)
    assert after["process"] == before["process"], "a distribution's body is per binding"
    assert after["Normal"] != before["Normal"]
    assert after["LogNormal"] != before["LogNormal"], "LogNormal builds a Normal"
    assert after["Gamma"] == before["Gamma"], "Gamma's entries stay warm"


def test_the_users_helper_behind_a_patch_counts(fakefw, monkeypatch) -> None:
    """The patch's own code is the same; what it calls in the user's module changed."""
    import userhelper
    import userpatch

    monkeypatch.setattr(fakefw.Normal, "log_prob", userpatch.normal_log_prob)
    before = fingerprints(fakefw)
    namespace: dict = {}
    exec(compile(USERHELPER_V2, userhelper.__file__, "exec"), namespace)
    monkeypatch.setattr(userhelper, "shift", namespace["shift"])
    assert fingerprints(fakefw)["Normal"] != before["Normal"]


def test_a_patch_of_the_base_class_changes_every_binding(fakefw, monkeypatch) -> None:
    before = fingerprints(fakefw)
    monkeypatch.setattr(fakefw.Base, "expand", lambda self: self)
    assert fingerprints(fakefw)["process"] != before["process"]


@pytest.mark.parametrize(
    "patch",
    [
        "helper replaced",
        "closure value",
        "dispatch registry",
        "module setting",
        "class setting",
        "default argument",
    ],
)
def test_what_a_trace_runs_or_reads_changes_the_process_fingerprint(
    fakefw, monkeypatch, patch
) -> None:
    import userpatch

    util = fakefw.util
    before = fingerprints(fakefw)["process"]
    if patch == "helper replaced":
        monkeypatch.setattr(util, "clamp", userpatch.make_clamp(0.0))
    elif patch == "closure value":  # the same code, another constant in its closure
        monkeypatch.setattr(util, "scale", util._make_scaler(3.0))
    elif patch == "dispatch registry":  # how numpyro#1971's mutant is applied
        util.promote.register(fakefw.Gamma, lambda d: None)
    elif patch == "module setting":
        monkeypatch.setattr(fakefw, "SETTING", False)
    elif patch == "class setting":
        monkeypatch.setattr(fakefw.Base, "validate", True)
    elif patch == "default argument":
        monkeypatch.setattr(util._make_scaler, "__defaults__", (1.0,))
    assert fingerprints(fakefw)["process"] != before


def test_run_time_state_of_a_package_without_settings_does_not_count(fakefw, monkeypatch) -> None:
    """JAX keeps its settings in ``jax.config``; its plain globals are run-time state (an
    initialised backend) that differs between processes running the same code."""
    before = fingerprints(fakefw, settings=())
    monkeypatch.setattr(fakefw.util, "_initialised", True)
    monkeypatch.setattr(fakefw, "SETTING", False)
    assert fingerprints(fakefw, settings=()) == before
    monkeypatch.setattr(fakefw.util, "clamp", lambda x: x)
    assert fingerprints(fakefw, settings=())["process"] != before["process"]


def test_another_packages_tag_on_an_installed_function_does_not_count(fakefw, monkeypatch) -> None:
    """Importing torch tags ``enum.Enum.__new__`` (``_torchscript_modifier``): processes that had
    imported it keyed every executable apart from those that had not, so a run whose items
    were shared out differently compiled afresh. Installed code is versioned, not walked."""
    before = fingerprints(fakefw)
    monkeypatch.setattr(textwrap.dedent, "_other_packages_tag", "drop", raising=False)
    assert fingerprints(fakefw) == before


PROBE = textwrap.dedent(
    """
    import json, sys
    from conformance.adapters.numpyro.store import executables as jax_executables
    from conformance.adapters.numpyro.compiled import constructors
    from conformance.adapters.base import import_dotted
    from conformance.adapters.numpyro.adapter import NumpyroAdapter

    if sys.argv[1] == "after-jax-ran":  # whatever ran first in this process
        import jax
        import jax.numpy as jnp

        jax.jit(lambda x: jnp.sin(x) * 2)(jnp.ones(3))
        jax.grad(lambda x: jnp.exp(x))(1.0)
    if sys.argv[1] == "after-torch":  # a worker that ran torch and GPyTorch items first
        import gpytorch
        import torch

        torch.distributions.Normal(0.0, 1.0).log_prob(torch.tensor(0.5))
        gpytorch.distributions.MultivariateNormal(torch.zeros(2), torch.eye(2))
    if sys.argv[1] == "mutant":
        from conformance.mutants import activate

        activate("numpyro-1971")
    adapter = NumpyroAdapter()
    with adapter.precision("float32"):
        pass
    out = {"process": jax_executables.code_fingerprint(NumpyroAdapter)}
    for family, bindings in sorted(adapter.family_bindings().items()):
        for i, b in enumerate(bindings if isinstance(bindings, (list, tuple)) else [bindings]):
            roots = (import_dotted(b.constructor), *constructors(b.args))
            out[f"{family}/{i}"] = jax_executables.binding_fingerprint(NumpyroAdapter, roots)
    if sys.argv[1] == "where-jax-is":
        import jax

        out["jax_file"] = jax.__file__
    print(json.dumps(out))
    """
)


def probe(how: str, seed: str, path: str | None = None, cwd: Path | None = None) -> dict:
    """The fingerprints a fresh process takes (``path``: put first on its import path)."""
    pytest.importorskip("numpyro")
    env = {**os.environ, "PYTHONHASHSEED": seed}
    env.pop("PYTEST_XDIST_WORKER", None)
    if path is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [path, env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-c", PROBE, how],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_numpyros_fingerprints_are_the_same_in_every_process() -> None:
    """Another hash seed; JAX's backends, lowering and caches warmed before; torch and GPyTorch
    imported and run before: the same fingerprints (otherwise a process would miss the store
    for entries another process filled)."""
    first = probe("plain", "1")
    assert len(first) > 40
    assert probe("after-jax-ran", "2") == first
    assert probe("after-torch", "3") == first


def test_the_same_environment_at_another_path_gives_the_same_fingerprints(tmp_path) -> None:
    """JAX keeps where each jitted function lies (``negative at <site-packages>/...``) in its
    wrapper: a second clone with its own virtual environment missed every entry the first
    had stored. Here the installed packages are imported through another directory (a link
    to them, first on the import path) from another working directory."""
    jax = pytest.importorskip("jax")
    site = Path(jax.__file__).resolve().parent.parent
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "site-packages").symlink_to(site, target_is_directory=True)
    moved = probe("where-jax-is", "0", path=str(elsewhere / "site-packages"), cwd=elsewhere)
    assert moved.pop("jax_file").startswith(str(elsewhere))  # the link was what was imported
    assert moved == probe("plain", "0")


def test_a_mutant_changes_the_keys_without_the_store_knowing_of_mutants() -> None:
    """numpyro#1971's replica re-registers ``promote_batch_shape`` for every distribution: a
    change to what every trace runs (the store names no mutant)."""
    plain = probe("plain", "0")
    mutated = probe("mutant", "0")
    assert mutated["process"] != plain["process"]
    source = Path(live_code.__file__).with_name("executables.py").read_text()
    assert "mutant" not in source.lower()
