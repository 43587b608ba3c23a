"""``--quick``: the pull-request preset keeps every family × framework × check (× dtype, but
for the checks it keeps in one dtype) where items run op by op; where they compile (NumPyro) a
covering design: every family × framework with values, shapes and gradients in both dtypes, its
calling context, one transformation and one sampling item, and every check on a share of the
families. The seed bugs' cases whole, and every error; deterministic and far smaller than the
full run."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from conformance.plan.derived.edges import EDGE_TAG, EXACT_TAG
from conformance.plan.planner import plan
from conformance.plan.quick import (
    EXACT_EDGE_CHECKS,
    QUICK_ONE_DTYPE,
    SAMPLING,
    SEED_TAG,
    TRANSFORMATIONS,
)
from conformance.plan.specs import CaseErrorSpec, CheckSpec
from conformance.run.config.settings import Settings, parse_options

REPO = Path(__file__).resolve().parents[2]


@cache
def _plan(quick: bool) -> tuple:
    argv = [f"--cases={REPO / 'cases'}"] + (["--quick"] if quick else [])
    return tuple(plan(Settings.from_sources(parse_options(argv)[0], {}).selection, root=REPO))


def _keys(specs, dtypes: bool = True) -> set[tuple[str, str, str, str]]:
    return {
        (s.case.family, s.adapter.name, s.check.name, s.dtype if dtypes else "")
        for s in specs
        if isinstance(s, CheckSpec)
    }


def _compiled(spec) -> bool:
    return spec.adapter.evaluates_compiled()


def test_quick_covers_every_family_framework_and_check_where_items_run_op_by_op() -> None:
    full, quick = _plan(False), _plan(True)
    op_by_op = [s for s in full if isinstance(s, CheckSpec) and not _compiled(s)]
    assert op_by_op and _keys(op_by_op, dtypes=False) <= _keys(quick, dtypes=False)
    assert len(quick) * 5 < len(full)  # a preset, not the full run under another name


def test_quick_covers_every_family_framework_and_every_check_where_items_compile() -> None:
    full, quick = _plan(False), _plan(True)

    def compiled(specs) -> list:
        return [s for s in specs if isinstance(s, CheckSpec) and _compiled(s)]

    def pairs(specs, fields) -> set:
        return {
            tuple(getattr(s, f) if f != "family" else s.case.family for f in fields) for s in specs
        }

    assert pairs(compiled(quick), ["family"]) == pairs(compiled(full), ["family"])
    checks = {(s.adapter.name, s.check.name) for s in compiled(quick)}
    assert checks == {(s.adapter.name, s.check.name) for s in compiled(full)}
    # Each transformation on a share of the families, not on one or two of them.
    families = {s.case.family for s in compiled(full)}
    for check in TRANSFORMATIONS + SAMPLING:
        runs = {s.case.family for s in compiled(quick) if s.check.name is check}
        offered = {s.case.family for s in compiled(full) if s.check.name is check}
        assert len(runs) >= min(len(offered), len(families) // 20), check


def test_quick_takes_one_transformation_and_one_sampling_item_where_items_compile() -> None:
    quick = _plan(True)
    taken: dict[tuple, list[str]] = {}
    for s in quick:
        if isinstance(s, CheckSpec) and _compiled(s) and SEED_TAG not in s.case.spec.tags:
            for group in (TRANSFORMATIONS, SAMPLING):
                if s.check.name in group:
                    key = (s.case.file, s.case.family, s.adapter.name, group)
                    taken.setdefault(key, []).append(s.check.name)
    assert taken and all(len(names) == 1 for names in taken.values()), [
        (k[:3], v) for k, v in taken.items() if len(v) > 1
    ]


def test_quick_keeps_every_dtype_of_values_shapes_and_gradients() -> None:
    full, quick = _plan(False), _plan(True)

    def both(specs) -> set:
        one = QUICK_ONE_DTYPE | set(SAMPLING)
        return {k for k in _keys(specs) if k[2] not in one}

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
    compiled_beyond_values = {
        s.name
        for s in full
        if isinstance(s, CheckSpec)
        and EXACT_TAG in s.case.spec.tags
        and SEED_TAG not in s.case.spec.tags
        and _compiled(s)
        and s.check.name not in EXACT_EDGE_CHECKS
    }
    assert compiled_beyond_values and not compiled_beyond_values & quick_names
    exact -= compiled_beyond_values
    assert exact and exact <= quick_names
    assert "edge-probs-at-1[torch-float32-log_prob]" in exact
    assert len(near & quick_names) < len(near) // 10  # only as a key's first item


def test_quick_is_deterministic_and_a_subset_of_the_full_run() -> None:
    quick = [s.name for s in _plan(True)]
    assert quick == [s.name for s in plan(_settings(True).selection, root=REPO)]
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
    specs = plan(_settings(True).selection, paths=[broken], root=tmp_path)
    assert any(isinstance(s, CaseErrorSpec) and "bad" in s.name for s in specs)
    assert any(isinstance(s, CheckSpec) for s in specs)


def test_quick_comes_from_the_environment_too() -> None:
    assert _settings(False, {"CONFORMANCE_QUICK": "1"}).quick
    assert not _settings(False).quick
