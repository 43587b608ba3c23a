"""Coverage by class and method: of each shipped class's summaries (mean, variance, stddev,
mode, entropy) and cdf, which the class defines and which items of the default run test.

A (class, method) pair is *tested* when an item of a check that reads the method builds the
class where the oracle has the method; *not implemented* when the class leaves it to its
framework's base (which raises); *excluded* with the reason in
``conformance/registry/method_coverage.yaml``; *missing* otherwise (the class has it, no item
tests it yet).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from conformance import reference
from conformance.adapters.base import Adapter, import_dotted
from conformance.adapters.summaries import defines
from conformance.summaries import METHODS

MethodStatus = Literal["tested", "not implemented", "excluded", "missing"]
#: (class, method) pairs no item tests on purpose, by package, each with its reason.
METHOD_EXCLUSIONS_PATH = Path(__file__).resolve().parents[1] / "registry" / "method_coverage.yaml"


@dataclass
class MethodCoverage:
    """One framework's (class, method) pairs, by status."""

    status: dict[tuple[str, str], MethodStatus] = field(default_factory=dict)
    reasons: dict[tuple[str, str], str] = field(default_factory=dict)

    def count(self, status: MethodStatus) -> int:
        return sum(1 for s in self.status.values() if s == status)

    @property
    def implemented(self) -> int:
        return len(self.status) - self.count("not implemented")

    @property
    def percent(self) -> float:
        return 100.0 * self.count("tested") / self.implemented if self.implemented else 100.0

    def summary(self) -> str:
        return (
            f"  methods: {self.count('tested')} of {self.implemented} (class, method) pairs "
            f"the classes define tested ({self.percent:.0f}%), {self.count('excluded')} "
            f"excluded, {self.count('missing')} missing; {self.count('not implemented')} "
            "left to the base class"
        )

    def as_json(self) -> dict[str, Any]:
        return {
            "tested": self.count("tested"),
            "implemented": self.implemented,
            "excluded": self.count("excluded"),
            "missing": self.count("missing"),
            "percent_tested": round(self.percent, 1),
            "pairs": {
                f"{cls}.{method}": {"status": status, **_reason(self.reasons, (cls, method))}
                for (cls, method), status in sorted(self.status.items())
            },
        }


def _reason(reasons: dict[tuple[str, str], str], key: tuple[str, str]) -> dict[str, str]:
    return {"reason": reasons[key]} if key in reasons else {}


def load_method_exclusions(path: Path = METHOD_EXCLUSIONS_PATH) -> dict[str, dict[str, str]]:
    """package → ``Class.method`` → the reason no item tests it."""
    if not path.is_file():
        return {}
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return {package: dict(pairs or {}) for package, pairs in data.items()}


def tested_pairs(specs: Iterable[Any], classes_of: Any) -> set[tuple[type, str]]:
    """(class, method) for every item that reads a method the oracle has of a class it builds;
    ``classes_of(spec)`` gives the classes an item builds."""
    from conformance.plan.specs import CheckSpec

    found: set[tuple[type, str]] = set()
    for spec in specs:
        if not isinstance(spec, CheckSpec) or not spec.check.methods:
            continue
        family = reference.get_family(spec.case.family)
        bases = tuple(map(import_dotted, spec.adapter.distribution_bases))
        for cls in classes_of(spec):
            for method in spec.check.methods:
                if family.has_method(method) and defines(cls, bases, method):
                    found.add((cls, method))
    return found


def method_coverage(
    adapter: Adapter,
    classes: dict[str, type],
    tested: set[tuple[type, str]],
    exclusions: dict[str, str],
) -> MethodCoverage:
    """The (class, method) table of one framework's shipped ``classes``."""
    bases = tuple(map(import_dotted, adapter.distribution_bases))
    out = MethodCoverage()
    for name, cls in sorted(classes.items()):
        for method in METHODS:
            key = (name, method)
            if not defines(cls, bases, method):
                out.status[key] = "not implemented"
            elif (cls, method) in tested:
                out.status[key] = "tested"
            elif f"{name}.{method}" in exclusions:
                out.status[key] = "excluded"
                out.reasons[key] = str(exclusions[f"{name}.{method}"]).strip()
            else:
                out.status[key] = "missing"
    return out
