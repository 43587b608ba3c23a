"""``conformance coverage``: every distribution class the frameworks ship, with what tests it.

Built from the real frameworks and the default run's plan; docs/coverage.md is its rendering
and must not drift.
"""

from __future__ import annotations

import json
import subprocess
import sys
from functools import cache

import pytest

from conformance.adapters import all_adapters
from conformance.cases.builtin import builtin_cases
from conformance.commands.coverage import (
    DOC_PATH,
    coverage,
    load_exclusions,
    method_plan,
    readme_line,
    render_markdown,
    shipped_classes,
)
from conformance.plan.planner import plan
from conformance.plan.specs import CheckSpec
from conformance.run.config.settings import Settings, parse_options

pytest.importorskip("numpyro")
pytest.importorskip("gpytorch")


@cache
def _specs() -> tuple:
    settings = Settings.from_sources(parse_options([f"--cases={builtin_cases()}"])[0], {})
    return tuple(plan(settings.selection))


@cache
def _method_specs() -> tuple:
    return tuple(method_plan(builtin_cases()))


def _coverage(specs=None, exclusions=None):
    return coverage(
        all_adapters(),
        _specs() if specs is None else specs,
        load_exclusions() if exclusions is None else exclusions,
        method_specs=_method_specs() if specs is None else None,
    )


def test_checked_in_page_and_the_readme_line_are_current() -> None:
    found = _coverage()
    assert DOC_PATH.read_text(encoding="utf-8") == render_markdown(found), (
        "docs/coverage.md is stale: run "
        "`conformance coverage --format=markdown --output=docs/coverage.md`"
    )
    readme = (DOC_PATH.parent.parent / "README.md").read_text(encoding="utf-8")
    assert readme_line(found) in readme, f"README.md should say: {readme_line(found)}"


def test_each_framework_lists_what_it_ships_and_what_builds_it() -> None:
    found = _coverage()
    torch, numpyro, gpytorch = found["torch"], found["numpyro"], found["gpytorch"]
    # The count of public classes with their own log_prob, on the pinned releases.
    assert (len(torch.classes), len(numpyro.classes), len(gpytorch.classes)) == (41, 100, 7)
    normal = torch.classes["Normal"]
    assert normal.status == "covered" and "Normal" in normal.families
    assert {"log_prob", "grad"} <= normal.checks and normal.items > 100
    # Bases and priors that only run Prior.log_prob over a torch distribution are not listed.
    assert "Distribution" not in torch.classes and "NormalPrior" not in gpytorch.classes
    assert "HorseshoePrior" in gpytorch.classes
    for fw in found.values():
        for name, entry in fw.classes.items():
            assert entry.status in ("covered", "excluded", "missing")
            assert (entry.status == "covered") == (entry.items > 0), name
            assert entry.status == "covered" or entry.reason, name
        assert fw.stale_exclusions == [], fw.package


def test_a_function_constructor_covers_the_classes_it_returns() -> None:
    """NumPyro's TruncatedNormal is a function: the classes it returns for the cases' inputs
    (by which bounds are given) are what its items test."""
    numpyro = _coverage()["numpyro"]
    for name in ("LeftTruncatedDistribution", "TwoSidedTruncatedDistribution"):
        assert numpyro.classes[name].status == "covered"
        assert set(numpyro.classes[name].families) == {"TruncatedNormal"}


def test_a_class_no_item_builds_is_missing_and_an_exclusion_needs_its_reason() -> None:
    dropped = {"Pareto", "Delta"}  # a plan without these families' items
    specs = [s for s in _specs() if not (isinstance(s, CheckSpec) and s.case.family in dropped)]
    found = _coverage(specs, {"numpyro": {"Unit": "not a density of its value"}})
    assert found["torch"].classes["Pareto"].status == "missing"
    assert found["numpyro"].classes["Unit"].status == "excluded"
    assert found["numpyro"].classes["Unit"].reason == "not a density of its value"
    assert found["numpyro"].classes["Delta"].status == "missing"


def test_an_exclusion_that_no_longer_holds_is_reported() -> None:
    found = _coverage(exclusions={"torch": {"Normal": "covered anyway", "Nonexistent": "gone"}})
    assert found["torch"].stale_exclusions == ["Nonexistent", "Normal"]
    assert found["torch"].classes["Normal"].status == "covered"


def test_an_adapter_without_distribution_modules_lists_nothing() -> None:
    class Bare(type(all_adapters()["torch"])):
        distribution_modules = ()

    assert shipped_classes(Bare()) == {}


def test_cli_json_has_every_class_with_its_status() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "coverage", "--format=json"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    data = json.loads(done.stdout)
    torch = data["frameworks"]["torch"]
    assert torch["Normal"]["status"] == "covered" and "Normal" in torch["Normal"]["family"]
    assert data["frameworks"]["numpyro"]["Unit"]["status"] == "excluded"
    assert data["summary"]["torch"]["classes"] == 41


def test_each_adapter_names_the_suites_families_it_does_not_offer() -> None:
    """A family an adapter lacks has no item (no placeholder): coverage names it instead."""
    from conformance.cases.loader import find_case_files
    from conformance.commands.coverage import render_text
    from conformance.plan.not_offered import not_offered

    settings = Settings.from_sources(parse_options([f"--cases={builtin_cases()}"])[0], {})
    offers = not_offered(settings.selection, find_case_files(builtin_cases()))
    lacking = offers.names()
    assert "Bernoulli" in lacking["gpytorch"] and "Normal" in lacking["gpytorch"]
    assert "MultivariateNormal.scale_tril" in lacking["gpytorch"]  # it offers covariance_matrix
    assert [e for e in offers.lacking if e.framework == "gpytorch" and e.family == "Bernoulli"]
    assert list(offers.lacking) == sorted(offers.lacking)
    text = render_text(coverage(all_adapters(), [], {}, lacking))
    line = f"  not offered by gpytorch: {', '.join(lacking['gpytorch'])}"
    assert line in text.splitlines()
