"""``conformance triage``: known-failure entries drafted from a run's failing records.

Triage of a new family means one entry per bug, its case lists exact (so an item that starts
to pass is an XPASS, not a silent pass). This groups the failing records by symptom — family,
framework, kind and what the message says went wrong (the exception, the partial derivative,
the mismatch) — and splits each group into entries whose cases share one set of checks and
dtypes, since an entry matches the product of its case, check and dtype lists. The reason is
left for a person to write: a draft says what failed, not why.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

import yaml

from conformance.records.record import Record

#: What a reason says until a person has written it; the loader takes it, a review must not.
DRAFT_REASON = "DRAFT: say why this is a bug (or declare a convention, or fix the suite)"

_RAISED = re.compile(r"raised (\w+(?:Error|Exception|Warning)?): ([^\n]*)")
_PARTIAL = re.compile(r"∂/∂(\w+)")


def symptom(record: Record) -> str:
    """What went wrong, in words that are the same for every item of one bug: the exception
    and its message for a raise, the partial derivatives for a gradient, else the kind."""
    message = record.message
    kind = record.kind or ""
    raised = _RAISED.search(message)
    if raised:
        text = re.sub(r"\d+(\.\d+)?(e[-+]?\d+)?", "N", raised.group(2))[:120]
        return f"{kind}: {raised.group(1)}: {text}"
    partials = sorted(set(_PARTIAL.findall(message)))
    if partials:
        return f"{kind}: ∂/∂{', ∂/∂'.join(partials)}"
    return kind


def _slug(*parts: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", "-".join(parts).lower()).strip("-")


def draft_entries(records: Iterable[Record]) -> list[dict[str, Any]]:
    """One entry per (symptom, set of checks and dtypes), from the failing records."""
    groups: dict[tuple[str, str, str, str], dict[str, set[tuple[str, str]]]] = defaultdict(
        lambda: defaultdict(set)
    )
    versions: dict[tuple[str, str, str, str], str] = {}
    for record in records:
        static = record.static
        if record.outcome != "failed" or record.kind == "case_error":
            continue
        key = (str(static.family), str(static.framework), str(record.kind), symptom(record))
        groups[key][str(static.case)].add((str(static.check), str(static.dtype)))
        package = str(static.package or static.framework)
        version = (static.framework_version or "").partition("+")[0]
        versions[key] = f"{package}<={version}" if version else package
    entries: list[dict[str, Any]] = []
    used: set[str] = set()
    for (family, framework, kind, what), cases in sorted(groups.items()):
        by_shape: dict[tuple[tuple[str, ...], tuple[str, ...], bool], list[str]] = defaultdict(list)
        for case, items in cases.items():
            checks = tuple(sorted({c for c, _ in items}))
            dtypes = tuple(sorted({d for _, d in items}))
            # An entry is a product: a case whose items do not fill it gets an entry per item.
            if len(items) == len(checks) * len(dtypes):
                by_shape[(checks, dtypes, "+" in case)].append(case)
            else:
                for check, dtype in sorted(items):
                    by_shape[((check,), (dtype,), "+" in case)].append(case)
        stem = base = _slug(framework, family, kind)
        for letter in "bcdefghijklmnopqrstuvwxyz":  # another symptom of the same kind
            if base not in used:
                break
            base = f"{stem}-{letter}"
        used.add(base)
        for n, ((checks, dtypes, variants), case_ids) in enumerate(sorted(by_shape.items())):
            suffix = f"-{n + 1}" if len(by_shape) > 1 else ""
            entry_id = f"{base}{'@transforms' if variants else ''}{suffix}"
            entries.append(
                {
                    "id": entry_id,
                    "family": family,
                    "framework": framework,
                    "version": versions[(family, framework, kind, what)],
                    "case": sorted(set(case_ids)),
                    "dtype": list(dtypes),
                    "check": list(checks),
                    "kind": kind,
                    "reason": f"{DRAFT_REASON}. Symptom: {what}",
                }
            )
    return entries


def render(entries: list[dict[str, Any]], source: str) -> str:
    header = (
        f"# Drafted by `conformance triage` from {source}: one entry per symptom and set of\n"
        "# checks × dtypes, case lists exact. Each reason is a draft; write why (with a\n"
        "# framework-only reproducer in docs/findings/) before adding an entry to a file.\n"
    )
    body = yaml.safe_dump(
        {"known_failures": entries}, sort_keys=False, allow_unicode=True, width=100
    )
    return header + body
