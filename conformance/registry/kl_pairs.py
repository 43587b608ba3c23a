"""The KL divergence rules each framework registers, and the oracle pairs that answer for them,
as data (``kl_pairs.yaml``): which (p, q) class pairs a framework dispatches on, which of the
oracle's (p family, q family) pairs (``reference.kl.kl_pairs()``) hold each to account, or why
none does. ``("Delta", "*")`` stands for every pair the oracle has with p = Delta.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, model_validator

KL_PAIRS_FILE = Path(__file__).parent / "kl_pairs.yaml"


class KLRule(BaseModel):
    """One framework rule: the class pair it dispatches on and the oracle pairs behind it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    p: str
    q: str
    oracle: tuple[tuple[str, str], ...] = ()
    excluded: str = ""
    note: str = ""

    @model_validator(mode="after")
    def _oracle_or_reason(self) -> KLRule:
        if bool(self.oracle) == bool(self.excluded):
            raise ValueError(f"rule ({self.p}, {self.q}) needs oracle pairs or a reason, not both")
        return self


@cache
def kl_rules() -> dict[str, tuple[KLRule, ...]]:
    """framework (its registry name) → its rules, in the file's order."""
    data = yaml.safe_load(KL_PAIRS_FILE.read_text(encoding="utf-8"))
    return {
        framework: tuple(KLRule.model_validate(rule) for rule in rules)
        for framework, rules in data["frameworks"].items()
    }


def serves(pairs: frozenset[tuple[str, str]], p: str, q: str) -> bool:
    """Whether rules whose oracle pairs are ``pairs`` compute KL(p‖q) for a pair the oracle has
    (``(p, "*")`` serves every such q)."""
    return (p, q) in pairs or (p, "*") in pairs


def served_pairs(rule: KLRule, oracle_pairs: list[tuple[str, str]]) -> set[tuple[str, str]]:
    """The oracle's (p family, q family) pairs ``rule`` computes, with ``("Delta", "*")`` read
    as every pair of ``oracle_pairs`` whose p is Delta."""
    return {
        pq
        for p, q in rule.oracle
        for pq in ([pq for pq in oracle_pairs if pq[0] == p] if q == "*" else [(p, q)])
    }
