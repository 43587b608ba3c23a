"""float32's own edges (conformance.plan.derived.dtype_edges): the points each domain gives, the value
found where float32's density underflows, and the cases generated from them — float32 only, at
points where float32's answer is a finite number, judging only partials float32 can hold."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conformance import reference
from conformance.cases.builtin import builtin_cases
from conformance.cases.loader import find_case_files, load_case_file
from conformance.plan.derived import dtype_edges, edges
from conformance.plan.planner import plan
from conformance.plan.specs import CheckSpec
from conformance.run.config.settings import Settings, parse_options

CASES = builtin_cases()
F32 = np.finfo(np.float32)


def _points(domain: str) -> dict[str, float]:
    return {p.label: p.value for p in dtype_edges.range_points(domain)}


def test_range_points_follow_the_domain() -> None:
    assert _points("positive") == {
        "f32-smallest-normal": float(F32.smallest_normal),
        "f32-subnormal": 2.0**-140,
        "f32-largest": float(F32.max),
    }
    assert _points("unit_interval") == {
        "f32-smallest-normal": float(F32.smallest_normal),
        "f32-subnormal": 2.0**-140,
    }
    assert _points("real") == {"f32-largest": float(F32.max)}
    assert _points("nonnegative_integer") == {"f32-exact-counts": 2.0**24}
    assert _points("integer_interval:0,10") == {}
    assert _points("circular") == {} and _points("simplex") == {}
    # Each number is exactly a float32, and the subnormal one really is subnormal.
    for domain in ("positive", "real", "nonnegative_integer"):
        for value in _points(domain).values():
            assert float(np.float32(value)) == value
    assert 0 < 2.0**-140 < F32.smallest_normal


def _normal(x: float) -> float:
    return float(reference.get_family("Normal").log_prob({"loc": 0.3, "scale": 1.7}, np.float64(x)))


def test_the_underflow_value_is_the_first_float32_past_the_level() -> None:
    level = dtype_edges.UNDERFLOW_LEVEL
    upper = dtype_edges.underflow_value(_normal, -0.4, math.inf, discrete=False)
    lower = dtype_edges.underflow_value(_normal, -0.4, -math.inf, discrete=False)
    for found, toward in ((upper, np.inf), (lower, -np.inf)):
        assert found is not None and float(np.float32(found)) == found
        assert _normal(found) <= level
        previous = float(np.nextafter(np.float32(found), np.float32(-toward)))
        assert _normal(previous) > level
    # Below log of float32's smallest subnormal: the density itself is 0 in float32.
    assert np.float32(math.exp(_normal(upper))) == 0 and level < math.log(2.0**-149)


def test_the_underflow_value_of_a_count_and_toward_a_finite_end() -> None:
    poisson = reference.get_family("Poisson")

    def pmf(k: float) -> float:
        return float(poisson.log_prob({"rate": 3.5}, np.float64(k)))

    k = dtype_edges.underflow_value(pmf, 2.0, math.inf, discrete=True)
    assert k == int(k) and pmf(k) <= -110 < pmf(k - 1)
    gamma = reference.get_family("Gamma")

    def density(x: float) -> float:
        return float(gamma.log_prob({"concentration": 3.0, "rate": 1.0}, np.float64(x)))

    x = dtype_edges.underflow_value(density, 1.0, 0.0, discrete=False)
    assert x is not None and 0 < x < 1e-20 and density(x) <= -110
    # A log density that never falls that low inside float32's range gives no point.
    assert dtype_edges.underflow_value(lambda t: -math.log(t), 1.0, math.inf, False) is None
    assert dtype_edges.underflow_value(lambda t: 0.0, 1.0, 0.0, False) is None


def _float32_cases() -> list:
    out = []
    for path in find_case_files(CASES):
        loaded = load_case_file(path, display=path.name)
        out += [
            c
            for c in edges.edge_file(loaded.cases, path.name).cases
            if dtype_edges.is_float32_edge(c.id)
        ]
    return out


def test_float32_cases_run_in_float32_where_its_answer_is_a_number() -> None:
    cases = _float32_cases()
    families = {c.family for c in cases}
    assert len(families) >= 30, families
    for c in cases:
        assert c.spec.dtypes == ["float32"], c.id
        assert c.spec.tags == [edges.EDGE_TAG, edges.DTYPE_TAG], c.id
        assert set(c.spec.checks) <= {"log_prob", "grad"} and "log_prob" in c.spec.checks
        family = reference.get_family(c.family)
        params = {k: np.asarray(v, np.float32).astype(float) for k, v in c.spec.params.items()}
        value = np.asarray(c.spec.value, np.float32).astype(float)
        with np.errstate(all="ignore"):
            lp = family.log_prob(params, value, c.parametrization)
            grads = family.elementwise_grad(params, value, c.parametrization)
        assert np.all(np.isfinite(lp) & (np.abs(lp) <= F32.max)), (c.id, lp)
        judged = c.spec.grad_wrt or (c.differentiable_inputs if "grad" in c.spec.checks else [])
        for name in judged:
            g = grads[name]
            assert np.all(np.isfinite(g) & (np.abs(g) <= F32.max)), (c.id, name)


def test_float32_items_plan_in_float32_only() -> None:
    opts, rest = parse_options(["--family=Cauchy", "--framework=torch"])
    assert not rest
    specs = [
        s
        for s in plan(Settings.from_sources(opts, {}, [CASES]).selection)
        if isinstance(s, CheckSpec)
    ]
    f32 = [s for s in specs if dtype_edges.is_float32_edge(s.case.id)]
    assert {s.case.id for s in f32} >= {
        "edge-value-f32-density-underflow-upper",
        "edge-scale-f32-subnormal",
        "edge-loc-f32-largest",
    }
    assert {s.dtype for s in f32} == {"float32"}
    assert {s.check.name for s in f32} == {"log_prob", "grad"}


@pytest.mark.parametrize("case_id", ["edge-rate-f32-subnormal", "edge-value-f32-largest"])
def test_float32_edge_ids_are_recognised(case_id: str) -> None:
    assert dtype_edges.is_float32_edge(case_id)
    assert not dtype_edges.is_float32_edge("edge-rate-tiny")
    assert not dtype_edges.is_float32_edge("scalar-f32-largest")
