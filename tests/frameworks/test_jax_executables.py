"""The executable store: NumPyro's compiled functions found before tracing, in later processes.

Each probe runs in a fresh process, as a later run would: what one process stored, the next
must load without tracing, with the same results — and without crashing (an executable that
calls LAPACK, loaded before anything was lowered, once did), even where JAX's own cache held
the program (an executable JAX reloaded from its cache once serialized without machine code).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("numpyro")

PROBE = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    from conformance import timing
    from conformance.adapters.numpyro.adapter import NumpyroAdapter
    from conformance.registry import Binding

    import numpyro.distributions as dist

    if sys.argv[2:] == ["jax-cache-only"]:
        from conformance.adapters.numpyro.store import executables as jax_executables

        jax_executables.store = lambda: jax_executables.ExecutableStore(None)
    if sys.argv[2:] == ["mutant"]:  # what conformance.mutants.plugin does in a run
        from conformance.mutants import activate

        activate("numpyro-1971")
    traces = []
    original_init = dist.MultivariateNormal.__init__
    original_log_prob = dist.MultivariateNormal.log_prob

    def counted_init(self, *args, **kwargs):
        traces.append("construct")
        original_init(self, *args, **kwargs)

    def counted_log_prob(self, value):
        traces.append("log_prob")
        return original_log_prob(self, value)

    dist.MultivariateNormal.__init__ = counted_init
    dist.MultivariateNormal.log_prob = counted_log_prob
    adapter = NumpyroAdapter()
    binding = Binding(constructor="numpyro.distributions.MultivariateNormal")
    out = {}
    with adapter.precision(sys.argv[1]):
        cov = np.array([[2.0, 0.3], [0.3, 1.0]])
        params = {
            "loc": adapter.asarray(np.array([[0.0, 1.0], [1.0, -1.0]]), "cpu"),
            "covariance_matrix": adapter.asarray(cov, "cpu"),
        }
        value = adapter.asarray(np.array([[0.5, 0.5], [1.5, -2.0]]), "cpu")
        built = adapter.construct(binding, params)
        out["log_prob"] = adapter.to_numpy(built.log_prob(value)).tolist()
        grads = adapter.log_prob_vjp(
            binding, params, value, adapter.asarray(np.ones(2), "cpu"), ("loc",), "grad"
        )
        out["grad"] = adapter.to_numpy(grads["loc"]).tolist()
        shapes, site = adapter.effect_site("plate", binding, params, value, (2, -1), None)
        out["site"] = [list(shapes), adapter.to_numpy(site).tolist()]
        out["batch_shape"] = list(adapter.batch_shape(adapter.construct(binding, params)))
    out["traces"] = len(traces)
    out["counts"] = timing.snapshot()["counts"]
    print(json.dumps(out))
    """
)


def probe(tmp_path: Path, dtype: str = "float32", *args: str, **env: str) -> dict:
    environment = {**os.environ, "CONFORMANCE_JAX_CACHE": str(tmp_path / "cache"), **env}
    environment.pop("PYTEST_XDIST_WORKER", None)
    done = subprocess.run(
        [sys.executable, "-c", PROBE, dtype, *args],
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def store_entries(tmp_path: Path) -> list[Path]:
    return [p for p in (tmp_path / "cache" / "executables").rglob("*") if p.is_file()]


def test_a_later_process_loads_every_function_without_tracing(tmp_path) -> None:
    first = probe(tmp_path)
    assert first["traces"] > 0
    # log_prob, grad and the plate site's executables, and the shapes construction learned
    assert first["counts"].get("executable_store_writes", 0) == 4
    second = probe(tmp_path)
    assert second["traces"] == 0, "nothing is constructed or evaluated in Python"
    assert second["counts"].get("executable_store_hits", 0) == 3
    assert second["counts"].get("executable_store_fact_hits", 0) == 1
    assert "executable_store_writes" not in second["counts"]
    # Same numbers, and the facts recorded while tracing (shapes) came back with them.
    for name in ("log_prob", "grad", "site", "batch_shape"):
        assert second[name] == first[name], name
    assert first["batch_shape"] == [2]


def test_what_jax_reloaded_from_its_own_cache_is_stored_afresh(tmp_path) -> None:
    # JAX's cache holds the programs (compiled with the store off); the next run's compiles
    # would come from JAX's cache, whose reloaded executables serialize without their machine
    # code ("Function ... not found" in the third process).
    first = probe(tmp_path, "float32", "jax-cache-only")
    assert not store_entries(tmp_path)
    again = probe(tmp_path, "float32", "jax-cache-only")
    assert again["traces"] > 0 and "executable_store_writes" not in again["counts"]
    probe(tmp_path)
    third = probe(tmp_path)
    assert third["traces"] == 0 and third["log_prob"] == first["log_prob"]


def test_entries_are_kept_apart_by_dtype_and_mutant(tmp_path) -> None:
    probe(tmp_path)
    float64 = probe(tmp_path, "float64")
    assert float64["traces"] > 0, "a float64 trace is not a float32 one"
    mutated = probe(tmp_path, "float32", "mutant")
    assert mutated["traces"] > 0, "a mutant's run must never load the unmutated executables"
    # The variable alone changes no code: nothing to compile again.
    named = probe(tmp_path, CONFORMANCE_MUTANT="numpyro-1971")
    assert named["traces"] == 0


def test_an_unreadable_entry_is_compiled_again_and_replaced(tmp_path) -> None:
    first = probe(tmp_path)
    for entry in store_entries(tmp_path):
        entry.write_bytes(b"truncated")
    second = probe(tmp_path)
    assert second["traces"] > 0 and second["log_prob"] == first["log_prob"]
    assert second["counts"]["executable_store_unreadable"] == 4
    assert probe(tmp_path)["traces"] == 0


def test_the_store_alone_off_keeps_jax_cache(tmp_path) -> None:
    """``CONFORMANCE_EXECUTABLE_STORE=off`` (``--no-executable-store``): every function is
    traced again, JAX's own cache keeps the compiled programs."""
    first = probe(tmp_path, CONFORMANCE_EXECUTABLE_STORE="off")
    assert not store_entries(tmp_path)
    assert any((tmp_path / "cache").rglob("*")), "JAX's cache is still on"
    again = probe(tmp_path, CONFORMANCE_EXECUTABLE_STORE="off")
    assert again["traces"] > 0 and again["log_prob"] == first["log_prob"]
    assert "executable_store_hits" not in again["counts"]


def test_off_with_jax_cache(tmp_path) -> None:
    probe(tmp_path, CONFORMANCE_JAX_CACHE="off")
    assert not (tmp_path / "cache").exists()
    assert probe(tmp_path, CONFORMANCE_JAX_CACHE="off")["traces"] > 0


def test_keys_name_what_decides_a_trace(monkeypatch) -> None:
    import jax.numpy as jnp
    import numpy as np

    from conformance.adapters.numpyro.adapter import NumpyroAdapter
    from conformance.adapters.numpyro.compiled import CompiledFunctions, _static_token
    from conformance.adapters.numpyro.store import executables as jax_executables
    from conformance.registry import Binding

    store = jax_executables.ExecutableStore(None)
    device = jnp.zeros(()).devices().pop()
    avals = jax_executables.argument_avals((jnp.zeros(3),))
    key = store.key(("log_prob",), avals, device, NumpyroAdapter)
    assert key == store.key(("log_prob",), avals, device, NumpyroAdapter)
    weak = jax_executables.argument_avals((jnp.asarray(1.0) * 1,))
    strong = jax_executables.argument_avals((jnp.asarray(1.0, dtype=jnp.float32),))
    assert weak != strong
    assert store.key(("log_prob",), weak, device, NumpyroAdapter) != store.key(
        ("log_prob",), strong, device, NumpyroAdapter
    )

    class Other(NumpyroAdapter):
        pass

    assert key != store.key(("log_prob",), avals, device, Other)

    # Static parameters by content: repr elides the middle of a long array.
    long = np.zeros(2000)
    changed = long.copy()
    changed[1000] = 1.0
    assert repr(long) == repr(changed)
    assert _static_token(long) != _static_token(changed)
    # Bindings by content, the same in every process.
    functions = CompiledFunctions(NumpyroAdapter)
    a = Binding(constructor="numpyro.distributions.Normal")
    b = Binding(constructor="numpyro.distributions.Normal")
    c = Binding(constructor="numpyro.distributions.Normal", rename={"loc": "mu"})
    assert functions.key(a, {}) == functions.key(b, {}) != functions.key(c, {})


BOUNDED = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    from conformance import timing
    from conformance.adapters.numpyro.compiled import CompiledFunctions
    from conformance.adapters.numpyro.adapter import NumpyroAdapter
    from conformance.registry import Binding

    CompiledFunctions.LIVE_EXECUTABLES = 3
    if sys.argv[1:] == ["unsaved"]:  # a full disk, an executable JAX cannot serialize
        from conformance.adapters.numpyro.store.executables import ExecutableStore

        ExecutableStore.save = lambda self, key, compiled, facts: False
    adapter = NumpyroAdapter()
    binding = Binding(constructor="numpyro.distributions.Normal")
    functions = adapter._functions
    values, loaded = [], []

    def log_prob(n):
        params = {
            "loc": adapter.asarray(np.linspace(-1.0, 1.0, n), "cpu"),
            "scale": adapter.asarray(np.full(n, 2.0), "cpu"),
        }
        value = adapter.asarray(np.full(n, 0.5), "cpu")
        out = adapter.to_numpy(adapter.construct(binding, params).log_prob(value)).tolist()
        loaded.append(sum(len(f._compiled) for f in functions._jitted.values()))
        return out

    with adapter.precision("float32"):
        for n in (1, 2, 3, 4, 5, 1):  # six calls, five shapes: the first is gone by the last
            values.append(log_prob(n))
    print(json.dumps({"values": values, "loaded": loaded, "counts": timing.snapshot()["counts"]}))
    """
)


def bounded(tmp_path: Path, *args: str, **env: str) -> dict:
    environment = {**os.environ, "CONFORMANCE_JAX_CACHE": str(tmp_path / "cache"), **env}
    environment.pop("PYTEST_XDIST_WORKER", None)
    done = subprocess.run(
        [sys.executable, "-c", BOUNDED, *args], capture_output=True, text=True, env=environment
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_only_the_recently_used_executables_stay_loaded(tmp_path) -> None:
    """A loaded executable holds ~2 MB and ~50 memory mappings: a process keeps the most
    recently used few, and one unloaded comes back from the store, the same numbers."""
    first = bounded(tmp_path)
    assert first["loaded"] == [1, 2, 3, 3, 3, 3]
    assert first["counts"]["executable_store_writes"] == 5 + 5  # executables + shape facts
    assert first["counts"]["executable_store_hits"] == 1  # the first shape, loaded again
    assert first["values"][-1] == first["values"][0]
    # Without a store, or where it could not keep one, nothing is unloaded: it could only be
    # compiled again.
    off = bounded(tmp_path, CONFORMANCE_EXECUTABLE_STORE="off")
    unsaved = bounded(tmp_path / "other", "unsaved")
    for run in (off, unsaved):
        assert run["loaded"] == [1, 2, 3, 4, 5, 5]
        assert run["values"] == first["values"]
        assert "executable_store_hits" not in run["counts"]


RAISING_PROBE = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    from conformance import timing
    from conformance.adapters.numpyro.adapter import NumpyroAdapter
    from conformance.checks.subject import FrameworkError
    from conformance.registry import Binding

    import numpyro.distributions as dist

    traces = []
    original_log_prob = dist.MultivariateNormal.log_prob

    def counted_log_prob(self, value):
        traces.append("log_prob")
        return original_log_prob(self, value)

    dist.MultivariateNormal.log_prob = counted_log_prob
    adapter = NumpyroAdapter()
    binding = Binding(constructor="numpyro.distributions.MultivariateNormal")
    with adapter.precision("float32"):
        params = {
            "loc": adapter.asarray(np.zeros((3, 2)), "cpu"),
            "covariance_matrix": adapter.asarray(np.eye(2), "cpu"),
        }
        value = adapter.asarray(np.zeros((4, 2)), "cpu")  # batch 4 against 3: raises
        try:
            adapter.to_numpy(adapter.construct(binding, params).log_prob(value))
        except Exception as exc:
            error = FrameworkError("log_prob", exc)
            out = {"type": type(exc).__name__, "message": str(error), "where": error.where}
    out["traces"] = len(traces)
    out["counts"] = timing.snapshot()["counts"]
    print(json.dumps(out))
    """
)


def test_a_trace_that_raises_is_raised_again_without_tracing(tmp_path) -> None:
    """A compiled function whose trace raises (a value batch that does not broadcast) is kept
    as its failure: a later process raises the same exception type, message and place (the
    item's record is the same) without tracing it again."""

    def run() -> dict:
        environment = {**os.environ, "CONFORMANCE_JAX_CACHE": str(tmp_path / "cache")}
        environment.pop("PYTEST_XDIST_WORKER", None)
        done = subprocess.run(
            [sys.executable, "-c", RAISING_PROBE], capture_output=True, text=True,
            env=environment, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads(done.stdout.strip().splitlines()[-1])

    first = run()
    assert first["traces"] == 1 and first["counts"].get("executable_store_writes", 0) >= 1
    assert "site-packages" in first["where"] and first["where"].rpartition(":")[2].isdigit()
    second = run()
    assert second["traces"] == 0, "the failing trace ran again"
    assert second["counts"].get("executable_store_failure_hits", 0) == 1
    for name in ("type", "message", "where"):
        assert second[name] == first[name], name


def test_failures_that_say_nothing_of_the_code_are_not_kept(tmp_path) -> None:
    from conformance.adapters.numpyro.store.executables import ExecutableStore

    store = ExecutableStore(tmp_path)

    class Unpicklable(ValueError):
        def __reduce__(self):
            raise TypeError("no")

    assert not store.save_failure("a" * 40, MemoryError("out of memory"), {})
    assert not store.save_failure("b" * 40, Unpicklable("x"), {})
    assert store.save_failure("c" * 40, ValueError("shapes (3,) and (4,)"), {"k": 1})
    found = store.load("c" * 40, None)
    assert type(found.exc) is ValueError and str(found.exc) == "shapes (3,) and (4,)"
    assert found.facts == {"k": 1}


def test_a_kept_failures_place_reads_in_another_environment() -> None:
    """The place is kept relative to the import path, so a store shared by checkouts at other
    paths gives each its own file's path."""
    from conformance.adapters.numpyro.store import executables

    where = f"{executables.__file__}:12"
    kept = executables.portable(where)
    assert kept.startswith("<sys.path>/") and kept.endswith("executables.py:12")
    assert executables.raised_here(kept) == f"{Path(executables.__file__).resolve()}:12"
