"""The memory budget: compiled code is dropped between items once a process outgrows it, and
doing so changes no result."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from conformance.adapters import all_adapters
from conformance.run.worker import memory

CASES = textwrap.dedent(
    """\
    cases:
      - id: a
        family: Normal
        params: {loc: [0.0, 1.0], scale: 2.0}
        value: [0.5, 1.0]
      - id: b
        family: Normal
        params: {loc: 0.0, scale: [2.0, 3.0, 4.0]}
        value: [[0.5], [1.0]]
    """
)


class RecordingAdapter:
    name = "recording"

    def __init__(self) -> None:
        self.released = 0

    def release_caches(self) -> None:
        self.released += 1


def test_resident_bytes_is_the_current_size_of_this_process() -> None:
    rss = memory.resident_bytes()
    assert rss is not None and 10 << 20 < rss < 64 << 30


def test_guard_releases_every_framework_used_only_above_its_budget() -> None:
    first, second = RecordingAdapter(), RecordingAdapter()
    second.name = "second"
    roomy = memory.MemoryGuard(budget=1 << 50)
    roomy.after_item(first)
    assert first.released == 0 and roomy.releases == 0
    tight = memory.MemoryGuard(budget=1)
    tight.after_item(first)
    tight.after_item(second)
    # The second release also reaches the framework used before.
    assert (first.released, second.released, tight.releases) == (2, 1, 2)
    off = memory.MemoryGuard(budget=None, max_mappings=None)
    off.after_item(first)
    assert first.released == 2


def test_guard_releases_near_the_kernels_mapping_limit_whatever_the_budget(monkeypatch) -> None:
    """Past ``vm.max_map_count`` an mmap in XLA's compiler fails and the process dies, budget or
    not. Counting the mappings costs milliseconds, so the next count waits until the fastest
    growth could have reached the threshold (and at least a second)."""
    assert memory.mapping_limit() is not None and memory.mapping_count() > 10
    assert memory.MemoryGuard(budget=None).max_mappings == memory.mapping_limit()
    clock, counted, held = [1000.0], [], [30_000]
    monkeypatch.setattr(memory.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(memory, "mapping_count", lambda: counted.append(clock[0]) or held[0])
    adapter = RecordingAdapter()
    guard = memory.MemoryGuard(budget=None, max_mappings=60_000)  # releases above 45,000
    guard.after_item(adapter)
    assert counted == [1000.0] and adapter.released == 0
    # 15,000 to go at the fastest growth measured: not counted again before that could happen.
    wait = max(memory.MAPPING_CHECK_S, 15_000 / memory.MAPPING_GROWTH_PER_S)
    clock[0] += wait - 0.25
    guard.after_item(adapter)
    assert counted == [1000.0]
    clock[0] += 0.5
    held[0] = 50_000
    guard.after_item(adapter)
    second = 1000.0 + wait + 0.25
    assert counted == [1000.0, second] and (adapter.released, guard.releases) == (1, 1)
    clock[0] += 0.5  # past the threshold: counted again a second later, not before
    guard.after_item(adapter)
    clock[0] += 0.6
    guard.after_item(adapter)
    assert counted == [1000.0, second, second + 1.1] and adapter.released == 2
    never = memory.MemoryGuard(budget=None, max_mappings=None)
    never.after_item(adapter)
    assert adapter.released == 2 and len(counted) == 3


def test_releasing_numpyros_caches_returns_xlas_mappings() -> None:
    """What the mapping guard counts on: each compiled executable holds mappings of its own,
    and a release hands them back."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    f = jax.jit(lambda x: jnp.log(x) * 2 + jnp.sin(x))
    before = memory.mapping_count()
    for n in range(1, 151):
        f(jnp.ones(n)).block_until_ready()
    grown = memory.mapping_count()
    assert grown - before >= 150
    guard = memory.MemoryGuard(budget=None, max_mappings=1)
    guard.after_item(all_adapters()["numpyro"])
    assert memory.mapping_count() < grown - 100


def test_numpyro_release_drops_jax_executables() -> None:
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    f = jax.jit(lambda x: jnp.log(x) * 2)
    for n in (2, 3, 4):
        f(jnp.ones(n)).block_until_ready()
    assert f._cache_size() == 3
    all_adapters()["numpyro"].release_caches()
    assert f._cache_size() == 0


def test_a_budget_exceeded_after_every_item_releases_each_time_and_changes_no_result(
    run_suite, tmp_path: Path
) -> None:
    root = tmp_path / "cases"
    root.mkdir()
    (root / "n.yaml").write_text(CASES)
    selection = ("--framework=numpyro,torch", "--variants=off", "--check=shapes,log_prob,grad")
    # In subprocesses: timing counters are per process.
    _, roomy = run_suite(root, *selection, "--memory-budget=off", subprocess=True)
    _, tight = run_suite(root, *selection, "--memory-budget=1", subprocess=True)
    assert tight["run"]["counts"] == roomy["run"]["counts"]
    assert tight["run"]["counts"]["passed"] == len(tight["records"]) == 24
    outcomes = {r["nodeid"]: (r["outcome"], r["metrics"]) for r in tight["records"]}
    assert outcomes == {r["nodeid"]: (r["outcome"], r["metrics"]) for r in roomy["records"]}
    controller = tight["run"]["timing"]["controller"]
    assert controller["counts"]["memory_releases"] == 24
    assert "memory_releases" not in roomy["run"]["timing"]["controller"]["counts"]


def test_memory_budget_rejects_nonsense(run_suite, tmp_path: Path) -> None:
    root = tmp_path / "cases"
    root.mkdir()
    (root / "n.yaml").write_text(CASES)
    result, _ = run_suite(root, "--conformance-memory-budget=lots")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--conformance-memory-budget: not a size: 'lots'" in "\n".join(result.errlines)
