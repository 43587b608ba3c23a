"""``conformance list``: what a run would collect, without running it.

Collection goes through the real pytest plugin (same selection options, same case roots), and
the items are summarised as family × framework counts and per-check totals — or listed by id —
followed by what the frameworks do not offer (no item says it: see
:mod:`conformance.plan.not_offered`).
"""

from __future__ import annotations

import contextlib
import io
import json
from collections import Counter
from typing import Any

import pytest

from conformance.plan.derived.dtype_edges import is_float32_edge
from conformance.run.config.options import ShortSpelling


class _Collected(ShortSpelling):
    """The items' metadata; as :class:`ShortSpelling`, messages name ``list``'s options."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []
        self.not_offered: list[str] = []

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        from conformance.records.results import STATIC_KEY
        from conformance.run.session.case_files import run_not_offered
        from conformance.run.session.items import SETTINGS_KEY

        if SETTINGS_KEY in session.config.stash:  # (a run without case files has no plugin)
            self.not_offered = run_not_offered(session.config).lines()

        for item in session.items:
            static: dict[str, Any] = next(
                (json.loads(str(v)) for k, v in item.user_properties if k == STATIC_KEY), {}
            )
            self.items.append({"nodeid": item.nodeid, **static})


def collect(pytest_args: list[str]) -> tuple[int, list[dict[str, Any]], str, list[str]]:
    """(pytest exit code, items' static metadata, pytest's own output, one line per framework
    of what it does not offer)."""
    collected = _Collected()
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = pytest.main(
            [*pytest_args, "--collect-only", "-q", "--conformance-no-results"], plugins=[collected]
        )
    return int(code), collected.items, buffer.getvalue(), collected.not_offered


def not_offered_section(lines: list[str]) -> str:
    """``not offered:`` and a line per framework (``gpytorch lacks Bernoulli, …``); "" if none."""
    return "".join(["not offered:\n", *(f"  {line}\n" for line in lines)]) if lines else ""


def summary(items: list[dict[str, Any]]) -> str:
    frameworks = sorted({str(i["framework"]) for i in items if i.get("framework")})
    families = sorted({str(i["family"]) for i in items if i.get("family")})
    cells = Counter((i.get("family"), i.get("framework")) for i in items)
    width = max([len("family"), *(len(f) for f in families)]) + 2
    cols = [max(len(f), 6) + 2 for f in frameworks]
    lines = [
        "family".ljust(width) + "".join(f.rjust(c) for f, c in zip(frameworks, cols, strict=True))
    ]
    for family in families:
        row = family.ljust(width)
        for fw, c in zip(frameworks, cols, strict=True):
            n = cells.get((family, fw), 0)
            row += (str(n) if n else ".").rjust(c)
        lines.append(row)
    checks = Counter(i.get("check") for i in items)
    lines.append("")
    lines.append("checks: " + ", ".join(f"{k} {v}" for k, v in sorted(checks.items(), key=str)))
    edges = Counter(i.get("family") for i in items if str(i.get("case") or "").startswith("edge-"))
    if edges:
        lines.append(
            f"generated edge items ({sum(edges.values())}): "
            + ", ".join(f"{k} {v}" for k, v in sorted(edges.items()))
        )
    float32 = Counter(i.get("family") for i in items if is_float32_edge(str(i.get("case") or "")))
    if float32:
        lines.append(
            f"of them at float32's own edges ({sum(float32.values())}): "
            + ", ".join(f"{k} {v}" for k, v in sorted(float32.items()))
        )
    errors = sum(1 for i in items if i.get("check") == "load")
    unsupported = checks.get("unsupported", 0)
    lines.append(
        f"{len(items)} items: {len(families)} families × {len(frameworks)} frameworks; "
        f"{errors} case errors, {unsupported} unsupported inputs"
    )
    return "\n".join(lines)
