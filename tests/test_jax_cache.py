"""The JAX compilation cache directory: one per jaxlib release and per xdist worker."""

from __future__ import annotations

from conformance.adapters import jax_cache
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
