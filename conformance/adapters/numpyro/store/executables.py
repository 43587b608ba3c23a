"""Compiled functions kept between runs, found before tracing.

JAX's persistent cache (:mod:`conformance.adapters.numpyro.store.cache`) is keyed on the lowered program,
so a warm run still traces and lowers every function for every new shape: most of a warm
NumPyro item's time. This store keys an executable on what decides the trace instead — the
function (adapter, operation, binding, static parameters), the arguments' shapes, dtypes and
weak types, JAX's configuration, the code everything the trace runs through *is in this
process* (jax, numpyro and the adapter as loaded and patched, the distribution classes the
binding reaches; :mod:`conformance.adapters.numpyro.store.live_code`), the backend and the CPU — and
keeps JAX's own serialized executable, so the executable that runs is the one ``jax.jit``
compiles (what users run), only not traced again. Facts the adapter records while tracing
(distribution shapes) are kept beside it, since a loaded executable never traces.

Entries are written atomically (a temporary file, then a rename), so every xdist worker shares
one directory. ``CONFORMANCE_JAX_CACHE=off`` turns this store off with JAX's cache;
``CONFORMANCE_EXECUTABLE_STORE=off`` (``--no-executable-store``) turns off only this store, so
every function is traced and lowered again (JAX's own cache, keyed on the lowered program,
still saves the compilation).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import os
import pickle
import platform
import sys
import tempfile
import traceback
import zlib
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance import timing
from conformance.adapters.numpyro.store import cache, live_code
from conformance.versions import version_text

#: Bumped when an entry's layout changes (2: trace failures are kept too).
FORMAT = 2


@functools.cache
def code_scope(owner: type) -> live_code.CodeScope:
    """The live code a trace of ``owner``'s functions can run: the packages it declares
    (``traced_packages``: jax, numpyro), the modules of its classes and of the compiled-function
    wrapper, the packages that keep settings in plain values (``setting_packages``), and the
    framework's distribution classes hashed per binding (``distribution_base``)."""
    modules = {c.__module__ for c in owner.__mro__ if c.__module__ != "builtins"}
    modules.add(__name__.rsplit(".", 2)[0] + ".compiled")  # beside store/
    return live_code.CodeScope(
        packages=tuple(getattr(owner, "traced_packages", ())),
        modules=tuple(sorted(modules)),
        imports=tuple(getattr(owner, "traced_imports", ())),
        settings=tuple(getattr(owner, "setting_packages", ())),
        separable=getattr(owner, "distribution_base", None),
    )


def _sources(scope: live_code.CodeScope, packages: tuple[str, ...]) -> str:
    """Versions, and the source contents (not times: a fresh clone or install must match) of
    ``packages``' modules that the live fingerprint did not walk: not loaded yet (a trace may
    import them later) or not walked at all (a compiled extension's Python part)."""
    walked = {
        str(Path(f).resolve())
        for name, m in list(sys.modules.items())
        if scope.walks(name) and (f := getattr(m, "__file__", None))
    }
    digest = hashlib.blake2b(digest_size=20)
    for package in (*packages, "numpy"):
        digest.update(f"{package}={version_text(package)};".encode())
    for name in packages:
        module = sys.modules.get(name) or importlib.import_module(name)
        if module.__file__ is None:  # a namespace package: no files of its own
            continue
        root = Path(module.__file__).resolve().parent
        for folder, subfolders, files in os.walk(root):
            subfolders.sort()
            for file in sorted(files):
                path = Path(folder, file)
                if file.endswith(".py") and str(path) not in walked:
                    digest.update(str(path.relative_to(root)).encode())
                    digest.update(path.read_bytes())
    return digest.hexdigest()


@functools.cache
def code_fingerprint(owner: type) -> str:
    """What the code a trace of ``owner``'s functions runs *is* in this process: the live
    objects of every loaded module it can reach (patches, subclasses and globals included, see
    :mod:`conformance.adapters.numpyro.store.live_code`), and the installed sources of the rest
    (``extension_packages``: jaxlib, whose Python half holds its run-time state and is not
    walked). The framework's distribution classes are left to each binding's key
    (:func:`binding_fingerprint`). Taken once per process, at its first compiled item."""
    scope = code_scope(owner)
    with timing.phase("code_fingerprint"):
        live = live_code.live_code(scope).process()
        extensions = tuple(getattr(owner, "extension_packages", ()))
        return f"{live}:{_sources(scope, (*scope.packages, *extensions))}"


def binding_fingerprint(owner: type, roots: tuple[Any, ...]) -> str:
    """The distribution classes a binding's constructors (``roots``) reach, as they are now."""
    with timing.phase("code_fingerprint"):
        return live_code.live_code(code_scope(owner)).reach(roots)


@functools.cache
def _machine() -> str:
    """The CPU an executable was compiled for: XLA:CPU emits code for the host's features."""
    flags = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("flags", "Features", "model name")):
                flags += line
                if line.startswith(("flags", "Features")):
                    break
    return f"{platform.machine()}|{platform.python_version()}|{flags}"


def _configuration() -> tuple:
    """JAX's settings that can change a trace (the cache's own knobs and logging cannot)."""
    import jax

    return tuple(
        (name, repr(value))
        for name, value in sorted(jax.config.values.items())
        if not any(word in name for word in ("cache", "log", "dump", "traceback"))
    )


def _backend(device: Any) -> str:
    client = device.client
    return f"{client.platform}|{client.platform_version}|{device.device_kind}"


def argument_avals(args: Iterable[Any]) -> Hashable:
    """Tree structure, shapes, dtypes and weak types of ``args``: what a compiled executable
    accepts (a different weak type is a different trace, like a different shape)."""
    import jax

    leaves, tree = jax.tree_util.tree_flatten(tuple(args))
    return (
        str(tree),
        tuple((tuple(x.shape), str(x.dtype), bool(getattr(x, "weak_type", False))) for x in leaves),
    )


@functools.cache
def _ready_to_load(device: Any) -> bool:
    """Whether executables can run on ``device`` without a lowering first.

    jaxlib fills in its CPU LAPACK kernels (from SciPy) when a linear-algebra operation is first
    lowered; an executable loaded before that calls a null kernel and crashes the process.
    ``jax.export`` calls the same initialisation before running what it deserializes. A JAX
    without it keeps the store from loading (every function is then traced and compiled).
    """
    if device.platform != "cpu":
        return True
    try:
        from jax._src.lax import linalg

        linalg.initialize_lapack()
    except (ImportError, AttributeError):
        return False
    return True


#: Marks an entry that keeps a failure (see :meth:`ExecutableStore.save_failure`).
FAILURE = "failure"
#: Failures that say nothing of the code traced: never kept.
NONDETERMINISTIC = (MemoryError, RecursionError, OSError, KeyboardInterrupt)


def _roots() -> list[Path]:
    """Where this environment's code lives: the import path's folders, longest first."""
    found = {Path(p).resolve() for p in sys.path if p and os.path.isdir(p)}
    return sorted(found, key=lambda p: len(str(p)), reverse=True)


def portable(where: str) -> str:
    """``file:line`` with the file relative to the import path folder holding it (a store is
    shared by checkouts and environments at other paths: see :mod:`live_code`)."""
    filename, _, line = where.rpartition(":")
    resolved = Path(filename).resolve()
    for root in _roots():
        if resolved.is_relative_to(root):
            return f"<sys.path>/{resolved.relative_to(root)}:{line}"
    return where


def raised_here(where: str) -> str:
    """A :func:`portable` place read in this environment: the first import path folder that
    holds the file."""
    if not where.startswith("<sys.path>/"):
        return where
    relative, _, line = where.removeprefix("<sys.path>/").rpartition(":")
    for root in _roots():
        if (root / relative).is_file():
            return f"{root / relative}:{line}"
    return where


@dataclass(frozen=True)
class StoredFailure:
    """What a kept trace failure brings back (:meth:`ExecutableStore.load`)."""

    exc: Exception
    facts: dict


class ExecutableStore:
    """One directory of serialized executables, each with the facts its trace recorded."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory

    def key(self, function: Hashable, avals: Hashable, device: Any, owner: type) -> str:
        import jax

        parts = (
            FORMAT,
            code_fingerprint(owner),
            f"{owner.__module__}.{owner.__qualname__}",
            function,
            avals,
            bool(jax.config.jax_enable_x64),
            _configuration(),
            _backend(device),
            _machine(),
        )
        return hashlib.blake2b(repr(parts).encode(), digest_size=20).hexdigest()

    def _path(self, key: str) -> Path:
        assert self.directory is not None
        return self.directory / key[:2] / key

    def load(self, key: str, device: Any) -> tuple[Any, dict] | StoredFailure | None:
        """The executable (loaded onto ``device``) and facts stored under ``key``, the failure
        kept there (:meth:`save_failure`), or None (absent or unreadable)."""
        entry = self._read(key)
        if entry is not None and entry[1] == FAILURE:
            return self._failure(entry)
        if entry is None or entry[0] is None or not _ready_to_load(device):
            return None
        payload, in_tree, out_tree, facts = entry
        try:
            from jax.experimental import serialize_executable

            compiled = serialize_executable.deserialize_and_load(
                payload, in_tree, out_tree, backend=device.client, execution_devices=[device]
            )
        except Exception:  # a foreign entry: compile again and replace it
            timing.count("executable_store_unreadable")
            return None
        timing.count("executable_store_hits")
        return compiled, facts

    def save(self, key: str, compiled: Any, facts: dict) -> bool:
        """Keep ``compiled``; an executable JAX cannot serialize, or a full disk, is skipped.
        Whether it was kept (a later load can bring it back)."""
        try:
            from jax.experimental import serialize_executable

            return self._write(key, (*serialize_executable.serialize(compiled), facts))
        except Exception:
            timing.count("executable_store_unserializable")
            return False

    def load_fact(self, key: str) -> Any | None:
        """A fact learned by a trace that compiles nothing (a distribution's shapes)."""
        entry = self._read(key)
        if entry is None or entry[0] is not None or entry[1] is not None:
            return None
        timing.count("executable_store_fact_hits")
        return entry[3]

    def save_fact(self, key: str, fact: Any) -> None:
        self._write(key, (None, None, None, fact))

    def _failure(self, entry: tuple) -> StoredFailure | None:
        """The exception a trace or compilation raised, as it was raised (its type, message and
        the place it was raised, read in this environment), and the facts recorded before it;
        None where it cannot be read here."""
        try:
            exc, where, facts = pickle.loads(entry[3])
        except Exception:  # an exception type gone from this environment: trace again
            return None
        exc.__conformance_where__ = raised_here(where)
        timing.count("executable_store_failure_hits")
        return StoredFailure(exc, facts)

    def save_failure(self, key: str, exc: Exception, facts: dict) -> bool:
        """Keep what a deterministic failure raised (the same trace raises it again), where its
        type and message survive a round trip through pickle; whether it was kept."""
        if isinstance(exc, NONDETERMINISTIC):
            return False
        frames = traceback.extract_tb(exc.__traceback__)
        where = portable(f"{frames[-1].filename}:{frames[-1].lineno}") if frames else ""
        try:
            payload = pickle.dumps((exc, where, dict(facts)))
            copy = pickle.loads(payload)[0]
        except Exception:
            return False
        if type(copy) is not type(exc) or str(copy) != str(exc):
            return False
        return self._write(key, (None, FAILURE, None, payload))

    def _read(self, key: str) -> tuple | None:
        if self.directory is None:
            return None
        try:
            blob = self._path(key).read_bytes()
        except OSError:
            return None
        try:
            return pickle.loads(zlib.decompress(blob))
        except Exception:  # a truncated entry: learn again and replace it
            timing.count("executable_store_unreadable")
            return None

    def _write(self, key: str, entry: tuple) -> bool:
        """Atomically (a temporary file, then a rename): workers share the directory. A full
        disk or a read-only directory costs warmth, not the run. Whether it was written."""
        if self.directory is None:
            return False
        blob = zlib.compress(pickle.dumps(entry), 1)
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=path.parent, delete=False) as out:
                out.write(blob)
            os.replace(out.name, path)
        except OSError:
            with contextlib.suppress(OSError, UnboundLocalError):
                os.unlink(out.name)
            return False
        timing.count("executable_store_writes")
        return True


@functools.cache
def _store_at(directory: Path | None) -> ExecutableStore:
    return ExecutableStore(directory)


def store() -> ExecutableStore:
    """The store this process uses: beside JAX's cache, shared by every worker (or off)."""
    return _store_at(cache.executables_dir())
