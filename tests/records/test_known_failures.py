"""Known-failure entries: loading errors, pattern and version matching, kinds, stale entries."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.known_failures import entries as kf
from conformance.records.record import Record

STATIC = {
    "case": "cov-value-batch-larger+pad1",
    "file": "cases/multivariate_normal.yaml",
    "family": "MultivariateNormal",
    "framework": "numpyro",
    "dtype": "float32",
    "device": "cpu",
    "check": "log_prob",
}


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "kf.yaml"
    path.write_text(text)
    return path


def entry(**fields) -> kf.KnownFailure:
    return kf.KnownFailure.model_validate({"id": "x", "kind": "raises", "reason": "r", **fields})


def test_patterns_are_globs_over_static_metadata() -> None:
    assert kf.matches(entry(case="cov-value-*", framework="numpyro"), STATIC)
    assert kf.matches(entry(family="Multi*", check="log_prob", dtype="float32"), STATIC)
    assert not kf.matches(entry(framework="torch"), STATIC)
    assert not kf.matches(entry(case="cov-value-batch-larger"), STATIC)  # variants end in +…
    assert not kf.matches(entry(dtype="float64"), STATIC)


def test_a_pattern_field_may_list_globs_and_any_one_matches() -> None:
    assert kf.matches(
        entry(case=["tril-*", "cov-value-*+pad1"], check=["grad", "log_prob"]), STATIC
    )
    assert not kf.matches(entry(case=["tril-*", "cov-value-batch-larger"]), STATIC)
    assert not kf.matches(entry(case=["cov-*"], check=["grad", "shapes"]), STATIC)
    assert kf.matches(entry(framework=["torch", "*"]), STATIC)


def test_version_requirements_use_pep_440_on_installed_distributions() -> None:
    installed = kf.installed_version("numpyro")
    assert kf.version_applies(entry(version=f"numpyro=={installed}"))
    assert not kf.version_applies(entry(version="numpyro<0.1"))
    assert kf.version_applies(entry(version="torch>=2.0"))  # local version 2.13.0+cpu included
    assert not kf.version_applies(entry(version="not-a-distribution-xyz>=1"))


def test_kind_accepts_one_or_many() -> None:
    assert entry(kind="value").kind == ("value",)
    assert entry(kind=["value", "grad"]).kind == ("value", "grad")


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("known_failures:\n  - id: a\n    kind: raises\n", ":2: reason: Field required"),
        (
            "known_failures:\n  - id: a\n    kind: raises\n    reason: r\n    version: 'numpyro<<1'\n",
            "PEP 440",
        ),
        (
            "known_failures:\n  - {id: a, kind: raises, reason: r}\n  - {id: a, kind: value, reason: s}\n",
            ":3: duplicate id 'a'",
        ),
        ("known_failures: []\nknown_failure: []\n", ":2: unknown key 'known_failure'"),
        ("known_failures:\n  - {id: a, kind: raises, reason: r, colour: red}\n", "colour"),
        ("- nope\n", ":1: expected a mapping"),
    ],
)
def test_bad_files_name_file_and_line(tmp_path: Path, text: str, fragment: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(kf.KnownFailuresError) as info:
        kf.load([path])
    assert str(path) in str(info.value) and fragment in str(info.value)


def test_stale_and_inactive_entries() -> None:
    records = [Record.from_json({"nodeid": "x::cov", **STATIC})]
    live = kf.Entry(entry(id="live", case="cov-*"), "f:1")
    stale = kf.Entry(entry(id="stale", case="gone-*"), "f:2")
    inactive = kf.Entry(entry(id="old", version="numpyro<0.1"), "f:3")
    out_of_scope = kf.Entry(entry(id="torch-only", framework="torch"), "f:4")
    got_stale, got_inactive = kf.unmatched([live, stale, inactive, out_of_scope], records)
    assert [e.id for e in got_stale] == ["stale"]
    assert [e.id for e in got_inactive] == ["old"]


def test_builtin_registry_loads_and_every_entry_has_a_reason() -> None:
    entries = kf.load(kf.builtin_files())
    assert len(entries) >= 5
    assert all(e.failure.reason and e.failure.kind for e in entries)


_GLOBS = st.sampled_from(
    ["*", "numpyro", "torch", "Multi*", "*Normal", "cov-*", "float32", "*+pad1"]
)
_VALUES = st.sampled_from(
    ["numpyro", "torch", "MultivariateNormal", "Normal", "cov-value", "cov-a+pad1", "float32", None]
)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    patterns=st.lists(
        st.dictionaries(
            st.sampled_from(kf.PATTERN_FIELDS),
            st.one_of(_GLOBS, st.lists(_GLOBS, min_size=1, max_size=2)),
            max_size=3,
        ),
        max_size=6,
    ),
    versions=st.lists(st.sampled_from([None, "numpy>=1", "numpy<1"]), min_size=6, max_size=6),
    items=st.lists(st.dictionaries(st.sampled_from(kf.PATTERN_FIELDS), _VALUES), max_size=6),
)
def test_the_index_matches_exactly_what_matching_one_by_one_would(patterns, versions, items):
    entries = [
        kf.Entry(entry(**fields, version=version), f"f.yaml:{i}")
        for i, (fields, version) in enumerate(zip(patterns, versions, strict=False))
    ]
    index = kf.Index(entries)
    for static in items:
        one_by_one = [
            e for e in entries if kf.version_applies(e.failure) and kf.matches(e.failure, static)
        ]
        assert index.matching(static) == one_by_one


@pytest.mark.parametrize(
    ("field", "text", "fragment"),
    [
        ("family", "family: Norml", "'Norml' matches no family (did you mean 'Normal'?)"),
        ("framework", "framework: [torch, numpyr]", "'numpyr' matches no framework"),
        ("check", "check: log-prob", "(did you mean 'log_prob'?)"),
        ("dtype", "dtype: float16", "'float16' matches no dtype"),
        ("kind", "kind: [value, gradient]", "'gradient' is no kind (did you mean 'grad'?)"),
        ("family", "family: 'Multivariate*'", None),  # a glob that matches a family is fine
    ],
)
def test_names_are_checked_on_load(tmp_path: Path, field, text, fragment) -> None:
    """An entry that can never match an item is a usage error naming file, line and entry
    (once, a misspelt family or kind was accepted and the bug's items simply failed)."""
    from conformance.run.config.settings import Settings, parse_options

    body = f"known_failures:\n  - id: a\n    kind: value\n    reason: r\n  - id: b\n    {text}\n"
    body += "    reason: r\n" + ("    kind: value\n" if field != "kind" else "")
    path = write(tmp_path, body)
    settings = Settings.from_sources(parse_options([f"--known-failures={path}"])[0], {})
    if fragment is None:
        assert [e.id for e in settings.known_failures][-2:] == ["a", "b"]
        return
    with pytest.raises(kf.KnownFailuresError) as info:
        _ = settings.known_failures
    assert f"{path}:6: known failure 'b': {field}: " in str(info.value)
    assert fragment in str(info.value)


def test_stale_entries_account_for_filters_and_what_the_run_covered() -> None:
    """A float32 run does not call a float64-only entry stale; a run of named files does not
    call stale an entry for a case it did not have, and a run that sampled items (--quick, a
    shard, -k) calls nothing stale, not even an entry for its own cases; a whole run does."""
    records = [Record.from_json({"nodeid": "x::cov", **STATIC})]  # one float32 numpyro MVN item
    float64_only = kf.Entry(entry(id="float64-only", dtype="float64"), "f:1")
    other_case = kf.Entry(entry(id="other-case", case="cov-other"), "f:2")
    # Written for the run's own cases, but for none of the items it ran.
    left_out = entry(id="left-out", case="cov-*", exclude_case=STATIC["case"])
    entries = [float64_only, other_case, kf.Entry(left_out, "f:3")]
    stale = {c: [e.id for e in kf.unmatched(entries, records, coverage=c)[0]] for c in kf.Coverage}
    assert stale == {
        kf.Coverage.WHOLE: ["other-case", "left-out"],
        kf.Coverage.NAMED_FILES: ["left-out"],
        kf.Coverage.SAMPLE: [],
    }


def test_entries_for_generated_edges_are_judged_only_in_runs_that_generate_them() -> None:
    """Without --edges no edge item exists: an entry written for generated cases is not stale
    there, and it is again as soon as the run has edge items and it matched none of them."""
    records = [Record.from_json({"nodeid": "x::cov", **STATIC})]
    for_edges = kf.Entry(entry(id="edges", case=("edge-probs-at-0", "edge-value-at-0")), "f:1")
    mixed = kf.Entry(entry(id="mixed", case=("cov-other", "edge-value-at-0")), "f:2")
    assert [e.id for e in kf.unmatched([for_edges, mixed], records)[0]] == ["mixed"]
    edge = {**STATIC, "nodeid": "x::edge-value-at-1", "case": "edge-value-at-1"}
    with_edges = [*records, Record.from_json(edge)]
    assert [e.id for e in kf.unmatched([for_edges, mixed], with_edges)[0]] == ["edges", "mixed"]


def test_an_entry_can_exclude_cases_its_globs_would_take() -> None:
    broad = entry(case="cov-value-batch-*")
    assert kf.matches(broad, STATIC)
    assert not kf.matches(entry(case="cov-value-batch-*", exclude_case="*+pad1"), STATIC)
    assert kf.matches(entry(case="cov-value-batch-*", exclude_case=["*+pad2", "x"]), STATIC)
    index = kf.Index([kf.Entry(entry(case="cov-*", exclude_case="*+pad*"), "f:1")])
    assert index.matching(STATIC) == []
    assert index.matching({**STATIC, "case": "cov-value-batch-larger"})


def test_an_entry_can_hold_only_for_valid_inputs_or_only_for_inputs_outside() -> None:
    valid, outside = entry(inputs="valid"), entry(inputs="outside")
    assert kf.matches(valid, STATIC, lambda: True) and not kf.matches(valid, STATIC, lambda: False)
    assert kf.matches(outside, STATIC, lambda: False) and not kf.matches(
        outside, STATIC, lambda: True
    )
    # A record read back has no inputs at hand: the condition is taken to hold (no stale report).
    assert kf.matches(valid, STATIC) and kf.matches(outside, STATIC)
    asked: list[int] = []
    kf.matches(entry(), STATIC, lambda: asked.append(1) or True)
    assert not asked  # "any" never asks the oracle
    with pytest.raises(ValueError):
        entry(inputs="inside")


def test_the_plan_gives_an_inputs_valid_entry_only_the_items_inside_the_support(
    tmp_path: Path,
) -> None:
    from conformance.cases.builtin import builtin_cases
    from conformance.plan.planner import plan
    from conformance.plan.specs import CheckSpec
    from conformance.run.config.settings import Settings, parse_options

    path = write(
        tmp_path,
        "known_failures:\n"
        "  - id: gamma-values\n"
        "    family: Gamma\n"
        "    framework: torch\n"
        '    case: "edge-value-*"\n'
        "    inputs: valid\n"
        "    kind: value\n"
        "    reason: r\n",
    )
    opts, _ = parse_options(
        ["--family=Gamma", "--framework=torch", "--check=log_prob", f"--known-failures={path}"]
    )
    settings = Settings.from_sources(opts, {}, [builtin_cases()])
    specs = [s for s in plan(settings.selection) if isinstance(s, CheckSpec)]
    marked = {s.case.id for s in specs if any(e.id == "gamma-values" for e in s.known_failures)}
    assert {"edge-value-at-0", "edge-value-above-0"} <= marked  # Gamma's support is [0, ∞)
    assert "edge-value-below-0" not in marked
    assert not [c for c in marked if not c.startswith("edge-value-")]


def test_the_bulk_entries_load_only_with_the_bulk() -> None:
    """bulk-edges.yaml names cases only ``--edges=bulk`` generates: a default run loads none of
    its entries (so it never calls them stale), a bulk run loads them all."""
    from conformance.run.config.settings import Settings, parse_options

    def ids(env: dict[str, str]) -> set[str]:
        settings = Settings.from_sources(parse_options([])[0], env)
        return {e.id for e in settings.known_failures}

    bulk_ids = {e.id for e in kf.load([kf.BUILTIN_DIR / kf.BULK_FILE])}
    assert bulk_ids and all("@bulk" in i or i.startswith("torch-") for i in bulk_ids)
    default, with_bulk = ids({}), ids({"CONFORMANCE_EDGES": "bulk"})
    assert not bulk_ids & default
    assert with_bulk == default | bulk_ids
    assert kf.BUILTIN_DIR / kf.BULK_FILE not in kf.builtin_files(bulk=False)
