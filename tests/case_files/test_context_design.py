"""The calling-context items (check ``context``): the covering design over the shipped cases,
their ids, and a case file pinning a context (docs/case-format.md, "Calling contexts")."""

from __future__ import annotations

import dataclasses
from functools import cache
from itertools import product
from pathlib import Path

import pytest

from conformance.cases.context_design import pinned_context
from conformance.cases.loader import load_case_text
from conformance.contexts import FLOAT32_MODES, SEPARATOR, CallingContext
from conformance.plan.planner import plan, plan_file
from conformance.plan.specs import CheckSpec
from conformance.run.config.settings import Settings, parse_options

REPO = Path(__file__).resolve().parents[2]


def _settings(*argv: str) -> Settings:
    return Settings.from_sources(parse_options([f"--cases={REPO / 'cases'}", *argv])[0], {})


@cache
def _items() -> tuple[CheckSpec, ...]:
    specs = plan(_settings("--framework=torch,gpytorch*,numpyro").selection, root=REPO)
    return tuple(s for s in specs if isinstance(s, CheckSpec))


def _contexts() -> list[CheckSpec]:
    return [s for s in _items() if s.check.name == "context"]


def test_every_family_and_framework_with_items_has_context_items() -> None:
    has_items = {(s.case.family, s.adapter.name) for s in _items()}
    has_contexts = {(s.case.family, s.adapter.name) for s in _contexts()}
    assert has_items - has_contexts == set()


def test_ids_name_the_context_and_its_source_pins_it_again() -> None:
    for spec in _contexts():
        context = spec.case.context
        assert context is not None
        assert f"{SEPARATOR}{context.name}[" in spec.name, spec.name
        assert spec.static().context == context.name
        if spec.case.spec.context is not None:
            continue  # a pinned case: its source is the file's own, which pins it already
        # The case's YAML with the item's context: what a user pastes to run exactly this call.
        loaded = load_case_text("cases:\n" + spec.case.source, "cases/pinned.yaml")
        assert not loaded.errors, (spec.name, loaded.errors)
        assert pinned_context(loaded.cases[0]) == context, spec.name


def test_every_level_and_mode_call_pair_the_framework_offers_is_met() -> None:
    for framework in ("torch", "gpytorch", "numpyro"):
        specs = [s for s in _contexts() if s.adapter.name == framework]
        axis = specs[0].adapter.context_axis
        contexts = [s.case.context for s in specs]
        assert {c.mode for c in contexts} == set(axis.modes)
        assert {c.call for c in contexts} == set(axis.calls)
        kinds = {k for c in contexts for _, k in c.kinds}
        offered = set(axis.param_kinds) | set(axis.value_kinds)
        assert kinds == offered - {"native"}, framework
        if framework != "torch":
            continue  # GPyTorch's few families, NumPyro's two rows: every level, not every pair
        offered = {
            (m, c)
            for m, c in product(axis.modes, axis.calls)
            if not axis.offers(CallingContext(m, c))
        }
        assert offered - {(c.mode, c.call) for c in contexts} == set(), framework


def test_float32_modes_run_float32_items_only_and_the_design_is_deterministic() -> None:
    for spec in _contexts():
        if spec.case.context.mode in FLOAT32_MODES:
            assert spec.dtype == "float32", spec.name
    again = plan(_settings("--framework=torch", "--family=Normal,Gamma").selection, root=REPO)
    first = [
        s.name
        for s in _contexts()
        if s.adapter.name == "torch" and s.case.family in ("Normal", "Gamma")
    ]
    assert [
        s.name for s in again if isinstance(s, CheckSpec) and s.check.name == "context"
    ] == first


PINNED = """\
cases:
  - id: pinned
    family: Normal
    params: {loc: [0.5, -1.0], scale: 2.0}
    value: [0.25, 1.5]
    context: {mode: default-float64, call: grad, kinds: {scale: python}}
"""


def test_a_pinned_context_is_the_case_s_only_item_per_framework(tmp_path) -> None:
    path = tmp_path / "pinned.yaml"
    path.write_text(PINNED, encoding="utf-8")
    specs = plan_file(path, _settings("--framework=torch").selection)
    names = [s.name for s in specs]
    # default-float64 is float32 inputs in a float64 process: the float32 item alone.
    assert names == ["pinned:default-float64.grad.scale-python[torch-float32-context]"]


@pytest.mark.parametrize(
    ("context", "error"),
    [
        ("{mode: x65}", "'x65' is no context mode (did you mean 'x64'?)"),
        ("{call: grads}", "'grads' is no context call (did you mean 'grad'?)"),
        ("{kinds: {lco: python}}", "lco"),
        ("{kinds: {loc: tensor}}", "'tensor' is no input kind"),
    ],
)
def test_a_pinned_context_names_known_modes_calls_inputs_and_kinds(context, error) -> None:
    text = PINNED.replace("{mode: default-float64, call: grad, kinds: {scale: python}}", context)
    loaded = load_case_text(text, "cases/pinned.yaml")
    assert loaded.errors and error in str(loaded.errors[0]), loaded.errors


def test_a_derived_context_case_shares_its_base_case_s_inputs() -> None:
    spec = _contexts()[0]
    assert spec.case.base is not None
    assert dataclasses.replace(spec.case, context=None).id == spec.case.base.id
