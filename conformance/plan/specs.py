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

    def static(self) -> dict[str, Any]:
        """The record fields fixed before the item runs (see :mod:`conformance.records.results`)."""
        out = dict(
            _case_and_framework(self.case, self.adapter),
            dtype=self.dtype,
            device=self.device,
            check=self.check.name,
            variant=self.case.variant or None,
        )
        if self.case.context is not None:
            out["context"] = self.case.context.name
        if self.known_failures:
            out["known_failures"] = [
                {
                    "id": e.id,
                    "kind": list(e.failure.kind),
                    "reason": e.failure.reason,
                    "link": e.failure.link,
                }
                for e in self.known_failures
            ]
        return out


@dataclass(frozen=True, eq=False)
class UnsupportedSpec:
    """A framework that does not offer this family, parametrisation or input: skipped, with why."""

    name: str
    case: Case
    adapter: Adapter
    reason: str

    def static(self) -> dict[str, Any]:
        return dict(_case_and_framework(self.case, self.adapter), check=CheckName.UNSUPPORTED)


@dataclass(frozen=True, eq=False)
class CaseErrorSpec:
    """A case (or file) that could not be loaded or expanded: a failing item with the message."""

    name: str
    error: CaseError

    def static(self) -> dict[str, Any]:
        return dict(
            case=self.error.case_id,
            file=self.error.file,
            line=self.error.line,
            check=CheckName.LOAD,
        )


ItemSpec = CheckSpec | UnsupportedSpec | CaseErrorSpec
