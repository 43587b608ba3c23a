"""The item specs a plan is made of: what one conformance item is, before pytest wraps it.

Apart from :mod:`conformance.plan.planner` so that what reads specs (the quick selection, the
session, the bench baseline) needs not import the planner, and the planner can import them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from conformance.adapters import Adapter
from conformance.cases.loader import Case, CaseError
from conformance.check_names import CheckName
from conformance.checks import Check
from conformance.known_failures.entries import Entry
from conformance.records.record import ItemStatic, KnownFailureRef, float_name
from conformance.registry import Binding


def _case_and_framework(case: Case, adapter: Adapter) -> dict[str, Any]:
    """The record fields that say which case ran in which framework."""
    return dict(
        case=case.id,
        file=case.file,
        line=case.line,
        family=case.family,
        parametrization=case.parametrization,
        framework=adapter.name,
        package=adapter.package,
        framework_version=adapter.version(),
    )


@dataclass(frozen=True, eq=False)
class CheckSpec:
    """One check of one case in one framework and dtype: a conformance item."""

    name: str
    case: Case
    adapter: Adapter
    binding: Binding
    dtype: str
    check: Check
    device: str
    #: The known-failure entries that match this item (the run expects it to fail so).
    known_failures: tuple[Entry, ...] = ()

    def static(self) -> ItemStatic:
        """The record fields fixed before the item runs (see :mod:`conformance.records.record`)."""
        return ItemStatic(
            **_case_and_framework(self.case, self.adapter),
            dtype=float_name(self.dtype),
            device=self.device,
            check=self.check.name,
            variant=self.case.variant or None,
            context=None if self.case.context is None else self.case.context.name,
            known_failures=tuple(
                KnownFailureRef(e.id, tuple(e.failure.kind), e.failure.reason, e.failure.link)
                for e in self.known_failures
            ),
        )


@dataclass(frozen=True, eq=False)
class UnsupportedSpec:
    """A framework that has the family but rejects this case's particular inputs (or its pinned
    calling context): skipped, with why. A family it lacks has no item (see
    :mod:`conformance.plan.not_offered`)."""

    name: str
    case: Case
    adapter: Adapter
    reason: str

    def static(self) -> ItemStatic:
        return ItemStatic(
            **_case_and_framework(self.case, self.adapter), check=CheckName.UNSUPPORTED
        )


@dataclass(frozen=True, eq=False)
class CaseErrorSpec:
    """A case (or file) that could not be loaded or expanded: a failing item with the message."""

    name: str
    error: CaseError

    def static(self) -> ItemStatic:
        return ItemStatic(
            case=self.error.case_id,
            file=self.error.file,
            line=self.error.line,
            check=CheckName.LOAD,
        )


ItemSpec = CheckSpec | UnsupportedSpec | CaseErrorSpec
