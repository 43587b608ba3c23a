"""Generated edge cases: which points each named domain and support gives, that every built-in
case file's edges load through the loader and plan into items (opt-in, no broadcast variants),
that the oracle decides which partial derivatives a case judges, and the export command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from conformance import reference
from conformance.cases.builtin import builtin_cases
from conformance.cases.loader import find_case_files, load_case_file, load_case_text
from conformance.expect.materialize import float64_inputs
from conformance.plan.derived import array_edges, edges
from conformance.plan.planner import plan
from conformance.plan.specs import CheckSpec
from conformance.run.config.settings import Settings, parse_options

CASES = builtin_cases()


def _points(points: list[edges.EdgePoint]) -> dict[str, float]:
    return {p.label: p.value for p in points}


def test_parameter_points_take_closed_ends_exactly_and_open_ends_just_inside() -> None:
    assert _points(edges.parameter_points("positive")) == {"tiny": 1e-6, "huge": 1e6}
    assert _points(edges.parameter_points("nonnegative")) == {"at-0": 0.0, "huge": 1e6}
    assert _points(edges.parameter_points("unit_interval")) == {"at-0": 0.0, "at-1": 1.0}
    assert _points(edges.parameter_points("open_unit_interval")) == {
        "above-0": 1e-6,
        "below-1": 1 - 1e-6,
    }
    assert _points(edges.parameter_points("half_open:0,1")) == {"at-0": 0.0, "below-1": 1 - 1e-6}
    assert _points(edges.parameter_points("nonnegative_integer")) == {"at-0": 0.0}
    assert edges.parameter_points("real") == []
    assert edges.parameter_points("simplex") == []


def test_value_points_sit_on_inside_and_outside_every_end() -> None:
    assert _points(edges.value_points("nonnegative")) == {
        "at-0": 0.0,
        "above-0": 1e-6,
        "below-0": -1e-6,
    }
    assert _points(edges.value_points("boolean")) == {
        "at-0": 0.0,
        "above-0": 1.0,
        "below-0": -1.0,
        "at-1": 1.0,
        "below-1": 0.0,
        "above-1": 2.0,
    }
    assert edges.value_points("real") == []


def test_no_edge_point_rounds_across_its_end_in_float32() -> None:
    for name in ("positive", "nonnegative", "unit_interval", "open_unit_interval"):
        iv = edges.interval(name)
        assert iv is not None
        for point in [*edges.parameter_points(name), *edges.value_points(name)]:
            rounded = float(np.float32(point.value))
            for end in (iv.lo, iv.hi):
                if point.value != end:
                    assert (rounded - end) * (point.value - end) > 0, (name, point)


def _all_generated() -> dict[str, list]:
    out = {}
    for path in find_case_files(CASES):
        name = path.relative_to(CASES).as_posix()  # kl/normal.yaml beside normal.yaml
        loaded = load_case_file(path, display=f"cases/{name}")
        assert not loaded.errors
        generated = edges.edge_file(loaded.cases, f"cases/{name}")
        out[name] = (loaded, generated)
    return out


def test_every_generated_file_loads_cleanly_with_unique_ids() -> None:
    generated = _all_generated()
    families = set()
    for name, (loaded, gen) in generated.items():
        assert not gen.errors, (name, gen.errors)
        ids = [c.id for c in gen.cases]
        assert len(ids) == len(set(ids)), name
        assert not set(ids) & {c.id for c in loaded.cases}, name
        assert all(c.spec.tags[0] == edges.EDGE_TAG for c in gen.cases)
        # Exactly the cases whose every moved input sits on its point are tagged exact.
        for c in gen.cases:
            exact = edges.EXACT_TAG in c.spec.tags
            near = any(
                w in c.id
                for w in ("-above-", "-below-", "-tiny", "-huge", "-large", "-near-", "-outside-")
            )
            near = near or edges.DTYPE_TAG in c.spec.tags  # float32's edges: see their tests
            near = near or edges.BULK_TAG in c.spec.tags  # a drawn value: see the bulk's tests
            assert exact != near, c.id
        families |= {c.family for c in gen.cases}
    # Every family of the oracle gets edges from the shipped cases (scalar and array inputs).
    anchored = {a.family for loaded, _ in generated.values() for a in edges.anchors(loaded.cases)}
    assert families == anchored == set(reference.family_names())


def test_the_fast_yaml_emitter_writes_the_generated_files_as_the_pure_python_one_does() -> None:
    # The generated files are dumped with libyaml's emitter (collection's hot path); the
    # cases' source text, shown in reports and reproducers, must not depend on it.
    for path in sorted(find_case_files(CASES))[::6]:
        pairs = edges.generated(load_case_file(path).cases)
        if pairs:
            data = {"cases": [c for _, c in pairs]}
            slow = yaml.safe_dump(data, sort_keys=False, width=100)
            assert edges.edge_yaml(load_case_file(path).cases).endswith(slow), path


def test_generated_cases_sit_at_their_anchors_line_and_say_where_they_came_from() -> None:
    loaded = load_case_file(CASES / "gamma.yaml", display="cases/gamma.yaml")
    (anchor,) = edges.anchors(loaded.cases)
    gen = edges.edge_file(loaded.cases, "cases/gamma.yaml")
    assert {c.line for c in gen.cases} == {anchor.line}
    assert {c.file for c in gen.cases} == {"cases/gamma.yaml"}
    assert all("generated from cases/gamma.yaml::scalar" in c.spec.description for c in gen.cases)


def test_the_oracle_picks_the_partials_a_boundary_case_judges() -> None:
    """Gamma(1, rate) at 0: log_prob is log(rate), ∂/∂concentration is −inf (log 0), and the
    other two exist — the generated case judges exactly those, so the −inf hides nothing."""
    loaded = load_case_file(CASES / "gamma.yaml", display="cases/gamma.yaml")
    by_id = {c.id: c for c in edges.edge_file(loaded.cases, "cases/gamma.yaml").cases}
    case = by_id["edge-concentration-at-1-value-at-0"]
    assert case.spec.grad_wrt == ["rate", "value"]
    assert "grad" in case.spec.checks
    family = reference.get_family("Gamma")
    grads = family.elementwise_grad({"concentration": 1.0, "rate": 1.5}, np.float64(0.0))
    assert grads["concentration"] == -np.inf
    assert grads["rate"] == pytest.approx(1 / 1.5) and grads["value"] == -1.5
    # Outside the support log_prob is −inf: no gradient check at all.
    outside = by_id["edge-value-below-0"]
    assert outside.spec.checks == edges.VALUE_CHECKS and outside.spec.grad_wrt is None


def _settings(*args: str) -> Settings:
    opts, rest = parse_options(list(args))
    assert not rest
    return Settings.from_sources(opts, {}, [CASES])


def test_edges_are_on_by_default_and_plan_without_broadcast_variants() -> None:
    selection = ("--family=Gamma", "--framework=torch")
    without = [
        s for s in plan(_settings(*selection, "--edges=off").selection) if isinstance(s, CheckSpec)
    ]
    with_edges = [s for s in plan(_settings(*selection).selection) if isinstance(s, CheckSpec)]
    assert [s.name for s in plan(_settings(*selection, "--edges=on").selection)] == [
        s.name for s in plan(_settings(*selection).selection)
    ]
    edge_items = [s for s in with_edges if s.case.id.startswith(edges.PREFIX)]
    assert not [s for s in without if s.case.id.startswith(edges.PREFIX)]
    assert len(with_edges) == len(without) + len(edge_items)
    assert edge_items and not [s for s in edge_items if s.case.variant]
    assert {s.check.name for s in edge_items} == {"shapes", "log_prob", "grad", "grad_functional"}
    assert {s.dtype for s in edge_items} == {"float32", "float64"}


def test_exported_yaml_is_a_case_file_with_the_same_cases(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "edges", "--family=Beta", "-o", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    (written,) = tmp_path.iterdir()
    assert written.name == "beta.edges.yaml"
    exported = load_case_text(written.read_text(), written.name)
    assert not exported.errors
    loaded = load_case_file(CASES / "beta.yaml", display="cases/beta.yaml")
    planned = edges.edge_file(loaded.cases, "cases/beta.yaml")
    assert [c.id for c in exported.cases] == [c.id for c in planned.cases]
    assert [c.spec for c in exported.cases] == [c.spec for c in planned.cases]
    # An exported file is no anchor of its own: its cases declare their checks.
    assert edges.anchors(exported.cases) == []
    doc = yaml.safe_load(written.read_text())
    assert doc["cases"][0]["id"].startswith(edges.PREFIX)


def test_the_listing_counts_edge_items_per_family() -> None:
    from conformance.commands.listing import summary

    items = [
        {"family": "Gamma", "framework": "torch", "check": "log_prob", "case": "edge-rate-tiny"},
        {"family": "Gamma", "framework": "torch", "check": "grad", "case": "edge-rate-tiny"},
        {"family": "Beta", "framework": "torch", "check": "log_prob", "case": "edge-value-at-0"},
        {"family": "Beta", "framework": "torch", "check": "log_prob", "case": "scalar"},
    ]
    text = summary(items)
    assert "generated edge items (3): Beta 1, Gamma 2" in text
    assert "generated edge items" not in summary(items[3:])
    assert "float32's own edges" not in text
    f32 = {"family": "Gamma", "framework": "torch", "check": "log_prob"}
    text = summary([*items, {**f32, "case": "edge-rate-f32-subnormal"}])
    assert "generated edge items (4): Beta 1, Gamma 3" in text
    assert "of them at float32's own edges (1): Gamma 1" in text


def test_array_edges_sit_on_the_simplex_boundary_and_keep_the_rest() -> None:
    p = np.array([0.2, 0.3, 0.5])
    points = {pt.label: pt for pt in array_edges.simplex_points(p, outside=True)}
    assert points["at-vertex"].array.tolist() == [1.0, 0.0, 0.0]
    face = points["at-face"].array
    assert face[0] == 0.0 and np.isclose(face.sum(), 1.0) and np.isclose(face[1] / face[2], 0.6)
    assert points["near-face"].array[0] == array_edges.NEAR
    assert points["outside-face"].array[0] < 0 and np.isclose(points["outside-face"].array.sum(), 1)
    assert [pt.exact for pt in points.values()] == [True, True, False, False]


def test_count_edges_keep_the_total() -> None:
    points = array_edges.count_points(np.array([2.0, 3.0, 5.0]))
    assert [pt.array.tolist() for pt in points] == [[10, 0, 0], [0, 5, 5], [-1, 6, 5]]
    assert all(pt.array.sum() == 10 for pt in points)


def test_nearly_singular_matrices_are_equally_singular_in_every_parametrization() -> None:
    a = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, 0.2], [0.1, 0.2, 1.5]])
    near = array_edges.nearly_singular(a)
    w = np.linalg.eigvalsh(near)
    assert np.isclose(w[0] / w[-1], array_edges.NEARLY_SINGULAR)
    wa, va = np.linalg.eigh(a)
    assert np.allclose(near, near.T)
    assert np.allclose(near @ va[:, -1], wa[-1] * va[:, -1])  # the other eigenpairs are kept
    tril = np.linalg.cholesky(a)
    w = np.linalg.eigvalsh(
        array_edges.nearly_singular_factor(tril) @ array_edges.nearly_singular_factor(tril).T
    )
    assert 0.1 * array_edges.NEARLY_SINGULAR < w[0] / w[-1] < 10 * array_edges.NEARLY_SINGULAR
    chol = np.array([[1.0, 0, 0], [0.6, 0.8, 0], [0.0, 0.6, 0.8]])
    corr = array_edges.nearly_singular_correlation(chol)
    assert np.allclose((corr**2).sum(-1), 1.0) and np.isclose(
        (corr @ corr.T)[0, 1], 1 - array_edges.NEAR
    )


def test_a_negative_point_keeps_its_sign_in_the_id_and_the_description() -> None:
    """GeneralizedPareto's density changes form at concentration −1: the label once read
    ``at--1`` and the description "concentration at  1"."""
    text = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "edges", "--family=GeneralizedPareto"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    cases = {c["id"]: c for c in yaml.safe_load(text)["cases"]}
    case = cases["edge-concentration-at-minus-1"]
    assert case["params"]["concentration"] == -1.0
    assert case["description"].endswith("concentration at minus 1")
    assert not any("--" in i for i in cases)


def test_a_family_selection_generates_only_its_edges_with_the_full_runs_ids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Planning a file asks the oracle for every edge point of its anchors, so a run that
    selects one family must not generate the others' (a slow oracle elsewhere made every
    ``--family`` run pay for it), and the ids it does generate must be the full run's: a file
    that anchors several families names its edges by family either way."""
    path = tmp_path / "two_families.yaml"
    path.write_text(
        "cases:\n"
        "  - {id: n, family: Normal, params: {loc: 0.5, scale: 2.0}, value: 1.0}\n"
        "  - {id: e, family: Exponential, params: {rate: 1.5}, value: 0.5}\n"
    )
    full = [s for s in plan(_settings().selection, [path]) if isinstance(s, CheckSpec)]
    asked: list[str] = []
    real = edges.edge_cases
    monkeypatch.setattr(
        edges, "edge_cases", lambda a, p, b=False: asked.append(a.family) or real(a, p, b)
    )
    selected = [
        s for s in plan(_settings("--family=Normal").selection, [path]) if isinstance(s, CheckSpec)
    ]
    assert set(asked) == {"Normal"}
    edge_ids = {s.case.id for s in selected if s.case.id.startswith(edges.PREFIX)}
    assert edge_ids and all(i.startswith(f"{edges.PREFIX}Normal-") for i in edge_ids)
    assert [s.name for s in selected] == [s.name for s in full if s.case.family == "Normal"]
    assert {s.case.family for s in full} == {"Normal", "Exponential"}


def test_real_valued_parameters_reach_large_magnitudes_on_each_unbounded_side() -> None:
    assert _points(edges.magnitude_points("real")) == {"large": 1e6, "large-negative": -1e6}
    # A half-line from 0 has its tiny and huge values already; a count stays out.
    assert edges.magnitude_points("positive") == []
    assert edges.magnitude_points("nonnegative_integer") == []
    assert edges.magnitude_points("unit_interval") == []
    assert edges.real_line("real") and not edges.real_line("positive")


def _generated_by_id(name: str, bulk: bool = True) -> dict:
    loaded = load_case_file(CASES / name, display=f"cases/{name}")
    return {c.id: c for c in edges.edge_file(loaded.cases, f"cases/{name}", bulk=bulk).cases}


def test_a_location_far_out_is_tested_in_the_tail_and_where_the_density_lives() -> None:
    by_id = _generated_by_id("normal.yaml")
    # The plain edge keeps the anchor's value: the far tail of Normal(1e6, ·).
    tail = by_id["edge-loc-large"]
    assert tail.spec.params["loc"] == 1e6 and edges.BULK_TAG not in tail.spec.tags
    # The bulk: the value at the 10 %, 50 % and 90 % quantiles of the law there, drawn.
    scale = float(tail.spec.params["scale"])
    bulk = [by_id[f"edge-loc-large-value-q{q}"] for q in (10, 50, 90)]
    values = [float(c.spec.value) for c in bulk]
    assert values == sorted(values)
    assert abs(values[1] - 1e6) < 0.2 * scale
    assert abs(values[0] - (1e6 - 1.2816 * scale)) < 0.3 * scale
    for case in bulk:
        assert case.spec.tags == [edges.EDGE_TAG, edges.BULK_TAG]
        assert case.spec.checks == ["log_prob", "grad"]
    # Every real-valued parameter moved together (Normal has one: loc), both ways.
    assert float(by_id["edge-shift-down-value-q50"].spec.params["loc"]) < -0.9e6


def test_a_huge_shape_parameter_puts_the_value_near_its_mode() -> None:
    by_id = _generated_by_id("gamma.yaml")
    case = by_id["edge-concentration-huge-value-q50"]
    concentration, rate = (float(case.spec.params[k]) for k in ("concentration", "rate"))
    assert concentration == 1e6
    # Gamma(1e6, rate) has its median within a few standard deviations (1e3 / rate) of 1e6 / rate.
    assert abs(float(case.spec.value) - concentration / rate) < 5e3 / rate
    # The anchor's value sits about 1,400 standard deviations away: the plain edge's tail.
    assert "edge-concentration-huge" in by_id


def test_bulk_values_are_the_same_in_every_process() -> None:
    script = (
        "from conformance.plan.derived import edges\n"
        "from conformance.cases.loader import load_case_file\n"
        f"cases = load_case_file({str(CASES / 'student_t.yaml')!r}).cases\n"
        "for _, c in edges.generated(cases, bulk=True):\n"
        "    if edges.BULK_TAG in c['tags']:\n"
        "        print(c['id'], repr(c['value']))\n"
    )
    runs = [
        subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "2")
    ]
    assert runs[0] == runs[1] and runs[0].count("value-q") >= 9


def test_families_with_an_array_input_get_no_bulk_cases() -> None:
    by_id = _generated_by_id("multivariate_normal.yaml")
    assert by_id and not [c for c in by_id.values() if edges.BULK_TAG in c.spec.tags]


def test_the_bulk_comes_only_on_request() -> None:
    plain, bulk = _generated_by_id("normal.yaml", bulk=False), _generated_by_id("normal.yaml")
    assert set(plain) < set(bulk)
    added = [bulk[i] for i in set(bulk) - set(plain)]
    assert all("-large" in c.id or edges.BULK_TAG in c.spec.tags for c in added)
    assert not [c for c in plain.values() if edges.BULK_TAG in c.spec.tags]


def test_edges_bulk_is_a_setting_that_plans_the_bulk_cases() -> None:
    def ids(*args: str) -> set[str]:
        settings = _settings("--family=Normal", "--framework=torch", *args)
        return {s.case.id for s in plan(settings.selection) if isinstance(s, CheckSpec)}

    default, bulk = ids(), ids("--edges=bulk")
    assert "edge-loc-large-value-q50" in bulk and "edge-loc-large-value-q50" not in default
    assert default < bulk
    assert Settings.from_sources(parse_options([])[0], {"CONFORMANCE_EDGES": "bulk"}, []).bulk_edges


def test_two_inputs_sit_at_their_edges_together_on_request() -> None:
    by_id = _generated_by_id("gamma.yaml")
    # Every pair of parameters at every pair of their extremes, the value at the median there.
    pairs = {i for i in by_id if "-rate-" in i and i.startswith("edge-concentration-")}
    assert pairs == {
        f"edge-concentration-{c}-rate-{r}-value-q50"
        for c in ("tiny", "huge")
        for r in ("tiny", "huge")
    }
    both = by_id["edge-concentration-huge-rate-tiny-value-q50"]
    assert both.spec.params == {"concentration": 1e6, "rate": 1e-6}
    # Gamma(1e6, 1e-6) has its median near 1e12.
    assert abs(float(both.spec.value) / 1e12 - 1) < 0.01
    assert both.spec.tags == [edges.EDGE_TAG, edges.PAIR_TAG]
    # A parameter at an extreme with the value at an end of the support: the density there
    # (+inf for a tiny concentration) is what such a case checks, without a gradient.
    end = by_id["edge-concentration-tiny-value-at-0"]
    assert float(end.spec.value) == 0.0 and end.spec.checks == ["log_prob"]
    plain = _generated_by_id("gamma.yaml", bulk=False)
    assert not [c for c in plain.values() if edges.PAIR_TAG in c.spec.tags]
    assert "edge-concentration-tiny-value-at-0" not in plain


def test_a_quantile_that_rounded_onto_an_open_end_is_left_out() -> None:
    """A sigmoid of loc = 1e6 draws 1.0 every time: the bulk's quantiles there would be an end
    of the open support (0, 1), neither where the density lives nor a valid value."""
    by_id = _generated_by_id("transformed_distribution.yaml")
    sigmoid = reference.get_family("TransformedDistribution")
    bulk = [c for c in by_id.values() if edges.BULK_TAG in c.spec.tags]
    assert bulk
    for case in bulk:
        params, value = float64_inputs(case)
        assert sigmoid.in_support(params, value, case.parametrization), case.id
    # loc at 1e6 (or a huge scale) keeps no quantile there; a tiny scale keeps all three.
    assert not [
        i for i in by_id if i.startswith(("edge-loc-large-value-q", "edge-scale-huge-value-q"))
    ]
    assert {f"edge-scale-tiny-value-q{q}" for q in (10, 50, 90)} <= set(by_id)


class _StubLaw:
    """A law whose draws are given: 30 % of them overflowed to +inf."""

    def __init__(self, draws: np.ndarray) -> None:
        self.draws = draws

    def sample(self, params, shape, rng, parametrization):
        return self.draws

    def in_support(self, params, value, parametrization):
        return np.isfinite(value) & (value > 0)


def test_draws_that_overflowed_still_count_toward_the_quantiles() -> None:
    """An infinite draw still sits above every finite one: dropping it would move the median
    to the 35 % point of what is left (a LogNormal of scale 1e6 overflows half its draws)."""
    finite = np.linspace(1.0, 2.0, 1400)
    draws = np.concatenate([finite, np.full(edges.BULK_DRAWS - finite.size, np.inf)])
    found = dict(edges._quantiles(_StubLaw(draws), {}, "p", "seed"))
    assert found[0.5] == np.quantile(draws, 0.5, method="inverted_cdf")
    assert found[0.5] > np.quantile(finite, 0.5)
    assert 0.9 not in found  # that quantile is +inf: no value


def test_a_bulk_point_on_a_kink_keeps_its_value_checks_only() -> None:
    """Laplace's median is its loc, which float32 reaches from a draw 2e-8 away: |x − loc| has
    no derivative there (JAX's subgradient of abs at 0 is 1, torch's 0), so the point is
    judged on its value only, as laplace.yaml::at-loc is."""
    laplace = reference.get_family("Laplace")
    assert laplace.value.kink_at == ("loc",)
    on_kink = []
    for case in _generated_by_id("laplace.yaml").values():
        if not {edges.BULK_TAG, edges.PAIR_TAG} & set(case.spec.tags):
            continue
        params, value = float64_inputs(case)
        if np.float32(value) == np.float32(params["loc"]):
            on_kink.append(case.id)
            assert case.spec.checks == ["log_prob"], case.id
        else:
            assert "grad" in case.spec.checks, case.id
    assert "edge-loc-large-value-q50" in on_kink


def test_the_truncated_gamma_bulk_sits_where_its_mass_is() -> None:
    """Where the normaliser underflows (the whole mass within 1e-6 of ``low``, or of ``high``
    at a concentration of 1e6) the oracle's sampler inverts its own CDF: the bulk's values are
    the law's quantiles there, not the lower end scipy's inversion left."""
    family = reference.get_family("TruncatedGamma")
    by_id = _generated_by_id("truncated_gamma.yaml")
    for stem in ("left_truncated-rate-huge", "two_sided-rate-huge", "two_sided-concentration-huge"):
        cases = [by_id[f"edge-{stem}-value-q{q}"] for q in (10, 50, 90)]
        values = [float(float64_inputs(c)[1]) for c in cases]
        params = float64_inputs(cases[0])[0]
        assert values == sorted(values) and len(set(values)) == 3, stem
        levels = family.cdf(params, np.array(values), cases[0].parametrization)
        # 2,001 draws: each quantile within 0.05 of its level (DKW, failure rate 2e-4).
        np.testing.assert_allclose(levels, [0.1, 0.5, 0.9], atol=0.05, err_msg=stem)
