"""What a selection's frameworks do not offer: said once per run, not as a skipped item per case.

A framework that lacks a family or a parametrisation (its binding lookup gives a reason, not a
binding) has no items for it. The run keeps that as data instead: framework → family and
parametrisation → why, which results.json's run header (``run["not_offered"]``), the report's
matrix, ``conformance list`` and ``conformance coverage`` show. It is read from the bindings of
the selected case files' families alone, so any process that knows the selection and the files
(the xdist controller, which plans no items) finds the same answer cheaply.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from conformance.cases.loader import load_case_file
from conformance.plan.selection import Selection


@dataclass(frozen=True, order=True)
class NotOffered:
    """One family and parametrisation a framework lacks, with the adapter's reason."""

    framework: str
    family: str
    parametrization: str
    reason: str

    def to_json(self) -> dict[str, str]:
        return {
            "family": self.family,
            "parametrization": self.parametrization,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class Offers:
    """What the frameworks lack among a selection's cases, sorted (a run's plan of it)."""

    lacking: tuple[NotOffered, ...] = ()
    #: (framework, family) where the framework offers some of the family's parametrisations.
    partly: frozenset[tuple[str, str]] = field(default_factory=frozenset)

    def by_framework(self) -> dict[str, list[dict[str, str]]]:
        """results.json's ``run["not_offered"]``: framework → its sorted entries."""
        out: dict[str, list[dict[str, str]]] = {}
        for entry in self.lacking:
            out.setdefault(entry.framework, []).append(entry.to_json())
        return out

    def names(self) -> dict[str, list[str]]:
        """framework → what it lacks: a family by name where it lacks every parametrisation the
        cases use, else ``Family.parametrization``."""
        named: dict[str, list[str]] = {}
        for e in self.lacking:
            name = e.family
            if (e.framework, e.family) in self.partly:
                name = f"{e.family}.{e.parametrization}"
            names = named.setdefault(e.framework, [])
            if name not in names:
                names.append(name)
        return named

    def lines(self, most: int | None = None) -> list[str]:
        """One line per framework, ``gpytorch lacks Bernoulli, MultivariateNormal.scale_tril``;
        past ``most`` names, the count instead of the rest."""
        out = []
        for fw, names in self.names().items():
            shown = ", ".join(names if most is None else names[:most])
            if most is not None and len(names) > most:
                shown += f", … ({len(names)} in all)"
            out.append(f"{fw} lacks {shown}")
        return out


def not_offered(selection: Selection, files: Iterable[Path]) -> Offers:
    """What the selection's frameworks lack among the selected families of the case ``files``.

    The planner's rule (:func:`conformance.plan.planner.plan_file`): a selected framework whose
    binding lookup for a case's family and parametrisation gives a reason has no item for it.
    Derived cases (variants, generated edges) share their case's family and parametrisation,
    so the written cases decide. A file's load errors are the plan's items, not this answer's.
    """
    lacking: set[NotOffered] = set()
    offered: set[tuple[str, str]] = set()
    for path in files:
        for case in load_case_file(path, known=selection.known).cases:
            if not selection.selects_family(case.family):
                continue
            for name in selection.selected_frameworks(case.spec.frameworks):
                adapter = selection.adapters[name]
                binding = adapter.binding(case.family, case.parametrization)
                if isinstance(binding, str):
                    lacking.add(NotOffered(name, case.family, case.parametrization, binding))
                else:
                    offered.add((name, case.family))
    partly = frozenset((e.framework, e.family) for e in lacking) & offered
    return Offers(tuple(sorted(lacking)), partly)
