"""Coverage of the KL rules each framework registers: a rule is *tested* when an item of the
default run computes KL for a pair of the oracle's families it serves (``kl_pairs.yaml``),
*excluded* with the reason that file gives, *missing* otherwise."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from conformance.check_names import CheckName
from conformance.reference.kl import kl_pairs
from conformance.registry.kl_pairs import kl_rules, served_pairs

RuleStatus = Literal["tested", "excluded", "missing"]


@dataclass
class KLCoverage:
    """One framework's KL rules by status, and the items that test each."""

    status: dict[tuple[str, str], RuleStatus] = field(default_factory=dict)
    reasons: dict[tuple[str, str], str] = field(default_factory=dict)
    #: rule → the oracle pairs the default run's items compute through it.
    pairs: dict[tuple[str, str], list[str]] = field(default_factory=dict)

    def count(self, status: RuleStatus) -> int:
        return sum(1 for s in self.status.values() if s == status)

    @property
    def percent(self) -> float:
        return 100.0 * self.count("tested") / len(self.status) if self.status else 100.0

    def summary(self) -> str:
        return (
            f"  KL rules: {self.count('tested')} of {len(self.status)} tested "
            f"({self.percent:.0f}%), {self.count('excluded')} excluded, "
            f"{self.count('missing')} missing"
        )

    def as_json(self) -> dict[str, Any]:
        return {
            "tested": self.count("tested"),
            "rules": len(self.status),
            "excluded": self.count("excluded"),
            "missing": self.count("missing"),
            "percent_tested": round(self.percent, 1),
            "by_rule": {
                f"{p}‖{q}": {
                    "status": status,
                    **({"reason": self.reasons[p, q]} if (p, q) in self.reasons else {}),
                    **({"pairs": self.pairs[p, q]} if self.pairs.get((p, q)) else {}),
                }
                for (p, q), status in sorted(self.status.items())
            },
        }


def tested_kl_pairs(specs: Iterable[Any]) -> dict[str, set[tuple[str, str]]]:
    """Framework (its ``kl_rules`` name) → the (p family, q family) pairs the ``kl`` items of
    ``specs`` compute."""
    from conformance.plan.specs import CheckSpec

    found: dict[str, set[tuple[str, str]]] = {}
    for spec in specs:
        if not isinstance(spec, CheckSpec) or spec.check.name != CheckName.KL:
            continue
        q = spec.case.kl_q
        rules = getattr(spec.adapter, "kl_rules", None)
        if q is not None and rules:
            found.setdefault(rules, set()).add((spec.case.family, q.family))
    return found


def kl_coverage(framework: str, tested: set[tuple[str, str]]) -> KLCoverage:
    """The rules ``framework`` registers (``kl_pairs.yaml``), each tested, excluded or missing."""
    oracle = kl_pairs()
    out = KLCoverage()
    for rule in kl_rules().get(framework, ()):
        key = (rule.p, rule.q)
        served = served_pairs(rule, oracle)
        hit = sorted(f"{p}‖{q}" for p, q in served & tested)
        if hit:
            out.status[key] = "tested"
            out.pairs[key] = hit
        elif rule.excluded:
            out.status[key] = "excluded"
            out.reasons[key] = rule.excluded.strip()
        else:
            out.status[key] = "missing"
    return out
