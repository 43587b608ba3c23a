"""Why a run collected nothing: the filter that removed every item, and what it left out.

pytest says only "no tests ran" (exit 5, which ``conformance run`` reports as 2). A selection
that names real things can still meet nowhere (``--framework=torch --check=plate``: torch has
no effect handlers), so the run names the culprit: it plans again with one filter lifted at a
time, cheapest first, and reports the first one that lifted gives items, with what they have.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from pathlib import Path

from conformance.cases.loader import find_case_files
from conformance.plan.planner import plan
from conformance.plan.selection import Selection
from conformance.plan.specs import CheckSpec, ItemSpec
from conformance.run.config.settings import Settings

#: A filter: the option that sets it, the selection without it, and what an item has there.
Lift = tuple[str, Callable[[Selection], Selection], Callable[[ItemSpec], str | None]]


def _check(spec: ItemSpec) -> str | None:
    return spec.check.name if isinstance(spec, CheckSpec) else None


def _dtype(spec: ItemSpec) -> str | None:
    return spec.dtype if isinstance(spec, CheckSpec) else None


def _framework(spec: ItemSpec) -> str | None:
    adapter = getattr(spec, "adapter", None)
    return adapter.name if adapter is not None else None


def _family(spec: ItemSpec) -> str | None:
    case = getattr(spec, "case", None)
    return case.family if case is not None else None


def _lifts(s: Settings) -> list[Lift]:
    """The filters this run set, cheapest to plan without first (a family filter lifted plans
    every family)."""
    r = dataclasses.replace
    candidates: list[tuple[bool, Lift]] = [
        (bool(s.checks), (s.option("check"), lambda x: r(x, checks=()), _check)),
        (bool(s.dtypes), (s.option("dtype"), lambda x: r(x, dtypes=()), _dtype)),
        (bool(s.frameworks), (s.option("framework"), lambda x: r(x, frameworks=()), _framework)),
        (s.quick, (s.option("quick"), lambda x: r(x, quick=False), _family)),
        (not s.variants, (f"{s.option('variants')}=off", lambda x: r(x, variants=True), _check)),
        (not s.edges, (f"{s.option('edges')}=off", lambda x: r(x, edges=True), _family)),
        (bool(s.families), (s.option("family"), lambda x: r(x, families=()), _family)),
    ]
    return [lift for chosen, lift in candidates if chosen]


def _listed(values: Iterable[str | None]) -> str:
    names = sorted({v for v in values if v})
    return ", ".join(names[:20]) + (", …" if len(names) > 20 else "")


def why_nothing(
    settings: Settings, files: list[Path], pytest_filters: list[str]
) -> tuple[int, str]:
    """Why a run with ``settings`` over the case ``files`` (and its case roots) collected
    nothing: (how many items its selection has before sharding and pytest's own filters, one
    sentence). ``pytest_filters`` are pytest's selections the run had (``-k 'expr'``)."""
    roots = ", ".join(str(r) for r in settings.case_roots) or "(none)"
    if not settings.case_roots and not files:
        return 0, "no case root (--cases DIR, CONFORMANCE_CASES or the ini value conformance_cases)"
    found = [*files, *(f for r in settings.case_roots for f in find_case_files(r))]
    found = list(dict.fromkeys(found))
    if not found:
        return 0, f"no case files (*.yaml, *.yml) under {roots}"
    planned = dataclasses.replace(settings.selection, shard=None)
    if pytest_filters or settings.shard is not None:  # else collection was this very plan
        specs = plan(planned, paths=found)
        if specs:
            by = " and ".join(pytest_filters) or "the shard"
            return len(specs), f"{by} selected none of the {len(specs)} items the selection has"
    for option, lifted, value in _lifts(settings):
        specs = plan(lifted(planned), paths=found)
        if specs:
            return 0, (
                f"{option} removed all {len(specs)} items the rest of the selection has "
                f"(they have: {_listed(value(s) for s in specs)})"
            )
    chosen = [option for option, _, _ in _lifts(settings)]
    if chosen:
        return 0, f"no item of {roots} matches {', '.join(chosen)} together"
    return 0, f"the case files under {roots} have no cases"
