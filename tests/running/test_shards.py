"""``--shard K/N`` by a stable hash of each item's id (conformance/plan/shards.py): the shards
partition the items, and a new case file moves no other item to another shard."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

from conformance.plan.planner import plan
from conformance.plan.selection import Selection
from conformance.plan.shards import in_shard, item_id, shard_of
from conformance.plan.specs import ItemSpec
from conformance.run.config.arguments import in_pytest_spelling
from conformance.run.config.settings import Settings, parse_options

SHARDS = 3
FILES = {
    "normal.yaml": """\
        cases:
          - id: scalar
            family: Normal
            params: {loc: 0.0, scale: 2.0}
            value: [0.5, -1.0]
          - id: batched
            family: Normal
            params: {loc: [0.0, 1.0], scale: [1.0, 2.0]}
            value: [0.5, 0.5]
        """,
    "gamma.yaml": """\
        cases:
          - id: scalar
            family: Gamma
            params: {concentration: 2.0, rate: 1.5}
            value: [0.5, 3.0]
        """,
}
ADDED = (
    "exponential.yaml",
    """\
    cases:
      - id: scalar
        family: Exponential
        params: {rate: 2.0}
        value: [0.5, 3.0]
    """,
)


def _write(root: Path, name: str, text: str) -> None:
    (root / name).write_text(textwrap.dedent(text))


NARROW = ["--framework=torch", "--dtype=float64", "--edges=off", "--variants=off"]


def _selection(root: Path) -> Selection:
    return Settings.from_sources(parse_options(NARROW)[0], {}, [root]).selection


def _id(spec: ItemSpec) -> str:
    return item_id(str(spec.static().file), spec.name)


def _shards(selection: Selection) -> dict[str, int]:
    """Each item's id → the shard that plans it, asserting that exactly one does."""
    found: dict[str, int] = {}
    for k in range(1, SHARDS + 1):
        for spec in plan(dataclasses.replace(selection, shard=(k, SHARDS))):
            assert _id(spec) not in found, f"{_id(spec)} in shards {found[_id(spec)]} and {k}"
            found[_id(spec)] = k
    everything = [_id(s) for s in plan(selection)]
    assert sorted(found) == sorted(everything)  # the shards partition the items
    return found


def test_adding_a_case_file_leaves_every_other_item_in_its_shard(tmp_path: Path) -> None:
    root = tmp_path / "cases"
    root.mkdir()
    for name, text in FILES.items():
        _write(root, name, text)
    selection = _selection(root)
    before = _shards(selection)
    assert len(before) > 10 and len(set(before.values())) == SHARDS
    _write(root, *ADDED)
    after = _shards(selection)
    added = {i: k for i, k in after.items() if i not in before}
    assert added and all(i.startswith(f"cases/{ADDED[0]}::") for i in added)
    assert {i: after[i] for i in before} == before


def test_a_run_collects_the_items_its_shard_has_in_the_plan(case_dir, pytester) -> None:
    """pytest's collection (a run, ``conformance list``) and the plan apply one rule."""
    root = case_dir(FILES)
    selection = _selection(root)
    for k in range(1, SHARDS + 1):
        argv = [f"--cases={root}", "--no-results", *NARROW, f"--shard={k}/{SHARDS}"]
        result = pytester.runpytest(*in_pytest_spelling(argv), "--collect-only", "-q")
        collected = {line for line in result.outlines if "::" in line}
        planned = {_id(s) for s in plan(dataclasses.replace(selection, shard=(k, SHARDS)))}
        assert collected == planned and planned, k


def test_shard_of_is_the_same_in_every_process_and_balanced() -> None:
    """A stable hash, not Python's salted ``hash``; balanced in expectation."""
    ids = [f"cases/f{i}.yaml::c[torch-float64-log_prob]" for i in range(3000)]
    code = "import sys; from conformance.plan.shards import shard_of; " + (
        "print(*(shard_of(line.strip(), 7) for line in sys.stdin))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        input="\n".join(ids),
        capture_output=True,
        text=True,
        check=True,
    )
    assert [int(k) for k in proc.stdout.split()] == [shard_of(i, 7) for i in ids]
    counts = Counter(shard_of(i, 7) for i in ids)
    assert set(counts) == set(range(1, 8))
    assert all(abs(n - 3000 / 7) < 100 for n in counts.values()), counts
    assert all(in_shard(i, (shard_of(i, 7), 7)) for i in ids[:50])
