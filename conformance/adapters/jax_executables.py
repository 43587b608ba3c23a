"""Compiled functions kept between runs, found before tracing.

JAX's persistent cache (:mod:`conformance.adapters.jax_cache`) is keyed on the lowered program,
so a warm run still traces and lowers every function for every new shape: most of a warm
NumPyro item's time. This store keys an executable on what decides the trace instead — the
function (adapter, operation, binding, static parameters), the arguments' shapes, dtypes and
weak types, JAX's configuration, the source of everything the trace runs through (jax,
numpyro, the suite's adapters and registry), the mutant applied, the backend and the CPU — and
keeps JAX's own serialized executable, so the executable that runs is the one ``jax.jit``
compiles (what users run), only not traced again. Facts the adapter records while tracing
(distribution shapes) are kept beside it, since a loaded executable never traces.

Entries are written atomically (a temporary file, then a rename), so every xdist worker shares
one directory. ``CONFORMANCE_JAX_CACHE=off`` turns this store off with JAX's cache.
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
import zlib
from collections.abc import Hashable, Iterable
from pathlib import Path
from typing import Any

from conformance import timing
from conformance.adapters import jax_cache
from conformance.versions import version_text

#: Bumped when an entry's layout changes.
FORMAT = 1


def _hash_files(digest: Any, root: Path, suffixes: tuple[str, ...]) -> None:
    for folder, subfolders, files in os.walk(root):
        subfolders.sort()
        for name in sorted(files):
            if name.endswith(suffixes):
                path = Path(folder, name)
                digest.update(str(path.relative_to(root)).encode())
                digest.update(path.read_bytes())


@functools.cache
def code_fingerprint(owner: type) -> str:
    """Contents (not times: a fresh clone or install must match) of the code a trace of
    ``owner``'s functions runs: jax and numpyro, the adapter's classes, the compiled-function
    wrapper and, in a process that applies a mutant, the mutants (a binding's own content is in
    each function's name, so the registry is not needed here). Without a mutant no mutant code
    runs, so editing the mutant table does not empty every user's store."""
    import conformance.mutants

    digest = hashlib.blake2b(digest_size=20)
    for package in ("jax", "jaxlib", "numpyro", "numpy"):
        digest.update(f"{package}={version_text(package)};".encode())
    for name in ("jax", "numpyro"):
        module = sys.modules.get(name) or importlib.import_module(name)
        _hash_files(digest, Path(module.__file__).parent, (".py",))
    if os.environ.get(conformance.mutants.ENV):
        _hash_files(digest, Path(conformance.mutants.__file__).parent, (".py",))
    files = {str(Path(__file__).with_name("jax_compiled.py"))}
    files.update(getattr(sys.modules.get(c.__module__), "__file__", None) for c in owner.__mro__)
    for file in sorted(f for f in files if f and f.endswith(".py")):
        digest.update(Path(file).read_bytes())
    return digest.hexdigest()


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
            os.environ.get("CONFORMANCE_MUTANT", ""),
        )
        return hashlib.blake2b(repr(parts).encode(), digest_size=20).hexdigest()

    def _path(self, key: str) -> Path:
        assert self.directory is not None
        return self.directory / key[:2] / key

    def load(self, key: str, device: Any) -> tuple[Any, dict] | None:
        """The executable (loaded onto ``device``) and facts stored under ``key``, or None
        (absent or unreadable)."""
        entry = self._read(key)
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

    def save(self, key: str, compiled: Any, facts: dict) -> None:
        """Keep ``compiled``; an executable JAX cannot serialize, or a full disk, is skipped."""
        try:
            from jax.experimental import serialize_executable

            self._write(key, (*serialize_executable.serialize(compiled), facts))
        except Exception:
            timing.count("executable_store_unserializable")

    def load_fact(self, key: str) -> Any | None:
        """A fact learned by a trace that compiles nothing (a distribution's shapes)."""
        entry = self._read(key)
        if entry is None or entry[0] is not None:
            return None
        timing.count("executable_store_fact_hits")
        return entry[3]

    def save_fact(self, key: str, fact: Any) -> None:
        self._write(key, (None, None, None, fact))

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

    def _write(self, key: str, entry: tuple) -> None:
        """Atomically (a temporary file, then a rename): workers share the directory. A full
        disk or a read-only directory costs warmth, not the run."""
        if self.directory is None:
            return
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
            return
        timing.count("executable_store_writes")


@functools.cache
def _store_at(directory: Path | None) -> ExecutableStore:
    return ExecutableStore(directory)


def store() -> ExecutableStore:
    """The store this process uses: beside JAX's cache, shared by every worker (or off)."""
    return _store_at(jax_cache.executables_dir())
