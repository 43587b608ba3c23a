"""The JAX compilation cache directory: one per jaxlib release and per xdist worker."""

from __future__ import annotations

import os

from conformance.adapters.numpyro.store import cache as jax_cache
from conformance.versions import version_text


def test_each_worker_and_release_gets_its_own_directory(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv(jax_cache.ENV, str(tmp_path))
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    release = f"jaxlib-{version_text('jaxlib')}"
    assert jax_cache.cache_dir() == tmp_path / release / "gw1"
    monkeypatch.delenv("PYTEST_XDIST_WORKER")
    assert jax_cache.cache_dir() == tmp_path / release / "main"


def test_off_and_default(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv(jax_cache.ENV, "off")
    assert jax_cache.cache_dir() is None
    monkeypatch.delenv(jax_cache.ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert jax_cache.cache_dir().is_relative_to(tmp_path / "conformance" / "jax")


def test_old_jaxlib_runs_without_the_cache() -> None:
    assert not jax_cache.cache_is_safe("0.4.34")
    assert not jax_cache.cache_is_safe("not installed")
    assert jax_cache.cache_is_safe("0.5.0") and jax_cache.cache_is_safe("0.10.2")


def test_after_a_run_every_worker_directory_holds_every_entry(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv(jax_cache.ENV, str(tmp_path))
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    release = tmp_path / f"jaxlib-{version_text('jaxlib')}"
    for worker, names in {"gw0": ["a-cache", "b-cache"], "gw1": ["b-cache", "c-cache"]}.items():
        (release / worker).mkdir(parents=True)
        for name in names:
            (release / worker / name).write_bytes(f"{worker}:{name}".encode())
    assert jax_cache.share_between_workers() == 2
    for worker in ("gw0", "gw1"):
        assert sorted(p.name for p in (release / worker).iterdir()) == [
            "a-cache",
            "b-cache",
            "c-cache",
        ]
    # An entry a worker already had is never replaced.
    assert (release / "gw1" / "b-cache").read_bytes() == b"gw1:b-cache"
    assert jax_cache.share_between_workers() == 0


def test_a_run_that_wrote_nothing_shares_nothing(monkeypatch, tmp_path) -> None:
    """Sharing after a run reads only directories that run changed; once one changed, every
    entry any worker holds is shared, older ones included."""
    monkeypatch.setenv(jax_cache.ENV, str(tmp_path))
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    release = tmp_path / f"jaxlib-{version_text('jaxlib')}"
    for worker in ("gw0", "gw1"):
        (release / worker).mkdir(parents=True)
        (release / worker / f"{worker}-old").write_bytes(b"x")
    for worker in ("gw0", "gw1"):
        os.utime(release / worker, (1_000_000, 1_000_000))
    assert jax_cache.share_between_workers(changed_since=2_000_000) == 0
    assert not (release / "gw1" / "gw0-old").exists()
    (release / "gw0" / "gw0-new").write_bytes(b"y")  # this run compiled something
    assert jax_cache.share_between_workers(changed_since=2_000_000) == 3
    assert sorted(p.name for p in (release / "gw1").iterdir()) == ["gw0-new", "gw0-old", "gw1-old"]


def test_sharing_without_a_cache_does_nothing(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv(jax_cache.ENV, "off")
    assert jax_cache.share_between_workers() == 0
    monkeypatch.setenv(jax_cache.ENV, str(tmp_path / "never-made"))
    assert jax_cache.share_between_workers() == 0
