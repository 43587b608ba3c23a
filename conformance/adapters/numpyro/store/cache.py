"""JAX's persistent compilation cache, switched on for conformance runs.

Eager JAX compiles every primitive for every new shape, and a conformance run is thousands of
small, differently shaped evaluations: XLA compilation is most of a cold run's time. With the
persistent cache a second run (or a CI job that keeps the directory) loads the executables
instead. ``CONFORMANCE_JAX_CACHE`` names the directory, or ``off``; the default lives under
``$XDG_CACHE_HOME`` (``~/.cache``). Each jaxlib release and each xdist worker gets its own
subdirectory: JAX's cache is not safe for processes writing the same entry at once
(jax-ml/jax#22718). Before jaxlib 0.5 the cache stays off: jax 0.4.34 and 0.4.35 segfault in
about 2 of 6,000 items per run, in XLA compilation and in cache reads, different items each
run, with one worker or two. The crashes persist with the cache off, so XLA itself is at
fault, but keeping the cache out of those runs keeps its state from being a suspect.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

from packaging.version import InvalidVersion, Version

from conformance import timing
from conformance.adapters.base import EXECUTABLE_STORE_ENV
from conformance.versions import version_text

ENV = "CONFORMANCE_JAX_CACHE"
#: ``off``: no executable store, JAX's own cache kept (``--no-executable-store``).
STORE_ENV = EXECUTABLE_STORE_ENV
_OFF = ("off", "0", "none", "false")


def _root() -> Path | None:
    chosen = os.environ.get(ENV, "").strip()
    if chosen.lower() in _OFF:
        return None
    if chosen:
        return Path(chosen).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "conformance" / "jax"


def cache_dir() -> Path | None:
    """Where JAX keeps this process's compiled executables, or None when the cache is off."""
    root = _root()
    if root is None:
        return None
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    return root / f"jaxlib-{version_text('jaxlib')}" / worker


def executables_dir() -> Path | None:
    """Where the suite keeps executables found before tracing
    (:mod:`conformance.adapters.numpyro.store.executables`): one directory for every worker, off with
    JAX's cache, on the jaxlib releases that keep JAX's cache off, and with
    ``CONFORMANCE_EXECUTABLE_STORE=off`` (``--no-executable-store``)."""
    if os.environ.get(STORE_ENV, "").strip().lower() in _OFF:
        return None
    root = _root()
    jaxlib = version_text("jaxlib")
    if root is None or not cache_is_safe(jaxlib):
        return None
    return root / "executables" / f"jaxlib-{jaxlib}"


#: The first jaxlib release whose persistent cache the suite uses (see the module docstring).
FIRST_SAFE_JAXLIB = "0.5.0"


def cache_is_safe(jaxlib_version: str) -> bool:
    try:
        return Version(jaxlib_version) >= Version(FIRST_SAFE_JAXLIB)
    except InvalidVersion:
        return False


_configured = False


_LISTENING = False


def _listen_to_compile_events() -> None:
    """Adds JAX's tracing, lowering and XLA compile durations to the run's timing, as the
    included figures ``jax_compile`` and ``jax_cache_load`` (``conformance bench`` shows them)."""
    global _LISTENING
    if _LISTENING:
        return
    _LISTENING = True
    try:
        from jax import monitoring
    except ImportError:
        return

    def on_duration(event: str, duration: float, **_: object) -> None:
        if event.startswith("/jax/core/compile/"):
            timing.add_included("jax_compile", duration)
        elif "compilation_cache" in event and "retrieval" in event:
            timing.add_included("jax_cache_load", duration)

    with contextlib.suppress(AttributeError):
        monitoring.register_event_duration_secs_listener(on_duration)


def configure() -> None:
    """Point JAX at the cache once per process, before its first compilation.

    Caches every executable however quick to compile (JAX's defaults skip those under 1 s,
    which is all of ours). A directory that cannot be created leaves the cache off.
    """
    global _configured
    if _configured:
        return
    _configured = True
    _listen_to_compile_events()
    path = cache_dir()
    if path is None or not cache_is_safe(version_text("jaxlib")):
        return
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return
    import jax

    for name, value in (
        ("jax_compilation_cache_dir", str(path)),
        ("jax_persistent_cache_min_compile_time_secs", 0.0),
        ("jax_persistent_cache_min_entry_size_bytes", -1),
    ):
        # An old JAX without one of these knobs runs without it.
        with contextlib.suppress(AttributeError, KeyError, ValueError):
            jax.config.update(name, value)


@contextlib.contextmanager
def bypassed() -> Iterator[bool]:
    """Compile inside without reading or writing JAX's cache; yields False where this JAX
    cannot (then nothing is changed).

    An executable JAX loaded from its cache serializes without its machine code on CPU (jaxlib
    0.10.2: the reloaded copy fails with "Function ... not found"), so what the executable store
    keeps must be compiled afresh. Keys with metadata are never written (writes are off
    inside), so no read can hit either.
    """
    import jax

    settings = {
        "jax_compilation_cache_include_metadata_in_key": True,
        "jax_persistent_cache_min_compile_time_secs": float("inf"),
    }
    try:
        before = {name: getattr(jax.config, name) for name in settings}
    except AttributeError:
        yield False
        return
    try:
        for name, value in settings.items():
            jax.config.update(name, value)
        yield True
    finally:
        for name, value in before.items():
            jax.config.update(name, value)


def share_between_workers(changed_since: float | None = None) -> int:
    """Give every worker's cache directory the executables the others compiled; returns how
    many entries were added. With ``changed_since`` (a run's start, as ``time.time()``), a run
    in which no worker wrote an entry (no directory changed: a torch-only run, a warm one)
    skips the listing of tens of thousands of names.

    Each process keeps its own directory (concurrent writers can corrupt an entry), and xdist
    hands items to whichever worker is free, so on the next run a worker meets shapes that only
    the other one compiled. Run after the workers are done (no writer is left): entries are
    hard-linked (copied where links are not possible), so the next run starts warm everywhere.
    """
    here = cache_dir()
    if here is None or not here.parent.is_dir():
        return 0
    dirs = [d for d in here.parent.iterdir() if d.is_dir()]
    if changed_since is not None and all(d.stat().st_mtime < changed_since for d in dirs):
        return 0
    # Names only (one listing per directory, no stat per entry): tens of thousands of entries.
    held = {d: set(os.listdir(d)) for d in dirs}
    owner: dict[str, Path] = {}
    for d, names in held.items():
        for name in names - owner.keys():
            if not name.startswith("."):
                owner[name] = d
    added = 0
    for d, names in held.items():
        for name in owner.keys() - names:
            source, target = owner[name] / name, d / name
            try:
                try:
                    os.link(source, target)
                except OSError:
                    shutil.copyfile(source, target)
            except OSError:
                continue  # a full disk or a read-only directory costs warmth, not the run
            added += 1
    return added
