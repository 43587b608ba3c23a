"""``--quick``: the pull-request preset keeps every family × framework × check (× dtype, but
for the checks it keeps in one dtype), the seed bugs' cases whole, and every error; it is
deterministic and far smaller than the full run."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from conformance.cases.derived.edges import EDGE_TAG, EXACT_TAG
from conformance.run.config.settings import Settings, parse_options
from conformance.run.plan import QUICK_ONE_DTYPE, SEED_TAG, CaseErrorSpec, CheckSpec, plan

REPO = Path(__file__).resolve().parents[2]


@cache
def _plan(quick: bool) -> tuple:
    argv = [f"--cases={REPO / 'cases'}"] + (["--quick"] if quick else [])
    return tuple(plan(Settings.from_sources(parse_options(argv)[0], {}), root=REPO))


def _keys(specs, dtypes: bool = True) -> set[tuple[str, str, str, str]]:
    return {
        (s.case.family, s.adapter.name, s.check.name, s.dtype if dtypes else "")
        for s in specs
        if isinstance(s, CheckSpec)
    }


def test_quick_covers_every_family_framework_and_check_of_the_full_run() -> None:
    full, quick = _plan(False), _plan(True)
    assert _keys(quick, dtypes=False) == _keys(full, dtypes=False)
    assert len(quick) * 5 < len(full)  # a preset, not the full run under another name


def test_quick_keeps_every_dtype_of_values_shapes_and_gradients() -> None:
    full, quick = _plan(False), _plan(True)

    def both(specs) -> set:
        return {k for k in _keys(specs) if k[2] not in QUICK_ONE_DTYPE}

    assert both(quick) == both(full)
    assert {k[2] for k in both(full)} >= {"log_prob", "shapes", "grad"}


def test_quick_runs_a_transformation_in_one_dtype_unless_a_seed_case_asks_for_more() -> None:
    # Per case file, as the whole selection is.
    quick = _plan(True)
    dtypes: dict[tuple, set[str]] = {}
    for s in quick:
        if (
            isinstance(s, CheckSpec)
            and s.check.name in QUICK_ONE_DTYPE
            and {SEED_TAG, EXACT_TAG}.isdisjoint(s.case.spec.tags)
        ):
            key = (s.case.file, s.case.family, s.adapter.name, s.check.name)
            dtypes.setdefault(key, set()).add(s.dtype)
    assert dtypes and all(len(d) == 1 for d in dtypes.values())
    assert {k[3] for k in dtypes} >= {"broadcast", "vmap", "scan", "plate", "context", "eager"}


def test_quick_keeps_every_item_of_the_seed_cases() -> None:
    full, quick = _plan(False), _plan(True)
    seeds = {s.name for s in full if isinstance(s, CheckSpec) and SEED_TAG in s.case.spec.tags}
    assert {"numpyro-1971-plate-in-scan", "torchsharp-1334", "bernoulli-probs-int64-values"} <= {
        n.split("[")[0] for n in seeds
    }
    assert any("+value-lead[gpytorch" in n for n in seeds)  # seed 2 is caught by a variant
    assert seeds <= {s.name for s in quick}


def test_quick_takes_the_generated_edges_exactly_at_the_ends_and_not_those_near_them() -> None:
    full, quick = _plan(False), _plan(True)
    quick_names = {s.name for s in quick}

    def edge_items(tag: str) -> set[str]:
        return {s.name for s in full if isinstance(s, CheckSpec) and tag in s.case.spec.tags}

    exact = edge_items(EXACT_TAG)
    near = edge_items(EDGE_TAG) - exact
    assert exact and exact <= quick_names
    assert "edge-probs-at-1[torch-float32-log_prob]" in exact
    assert len(near & quick_names) < len(near) // 10  # only as a key's first item


def test_quick_is_deterministic_and_a_subset_of_the_full_run() -> None:
    quick = [s.name for s in _plan(True)]
    assert quick == [s.name for s in plan(_settings(True), root=REPO)]
    assert set(quick) <= {s.name for s in _plan(False)}


def _settings(quick: bool, env: dict | None = None) -> Settings:
    argv = [f"--cases={REPO / 'cases'}"] + (["--quick"] if quick else [])
    return Settings.from_sources(parse_options(argv)[0], env or {})


def test_quick_keeps_broken_cases_visible(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text(
        "cases:\n"
        "  - id: good\n    family: Normal\n    params: {loc: 0.0, scale: 1.0}\n    value: 0.5\n"
        "  - id: bad\n    family: Normal\n    params: {loc: 0.0}\n    value: 0.5\n",
        encoding="utf-8",
    )
    specs = plan(_settings(True), paths=[broken], root=tmp_path)
    assert any(isinstance(s, CaseErrorSpec) and "bad" in s.name for s in specs)
    assert any(isinstance(s, CheckSpec) for s in specs)


def test_quick_comes_from_the_environment_too() -> None:
    assert _settings(False, {"CONFORMANCE_QUICK": "1"}).quick
    assert not _settings(False).quick
