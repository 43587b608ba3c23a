"""What each framework returns where a summary is undefined or infinite, as data
(``summary_conventions.yaml``): one declaration per (framework, family, summary, condition).

The oracle keeps mathematics — NaN where a summary is undefined, ±inf where it is infinite —
and the moments and entropy checks hold a framework to exactly that unless it declares here
what it returns instead (:func:`declared`). The rule that applies a declaration to an array is
:func:`conformance.compare.by_convention`.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, field_validator

from conformance.summaries import Summary

SUMMARY_CONVENTIONS_FILE = Path(__file__).parent / "summary_conventions.yaml"

#: Where the oracle says a summary has no number: NaN (undefined) or ±inf (infinite).
Condition = Literal["undefined", "infinite"]
#: What a framework returns there.
Returns = Literal["nan", "inf", "-inf", "finite", "raises"]


class SummaryConvention(BaseModel):
    """One file entry: a family's summaries, a condition, what the framework returns there."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    family: str
    summary: tuple[Summary, ...]
    where: Condition
    returns: Returns
    reason: str

    @field_validator("summary", mode="before")
    @classmethod
    def _one_or_many(cls, value: object) -> object:
        return (value,) if isinstance(value, str) else value

    @field_validator("reason")
    @classmethod
    def _said(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("a convention needs its reason")
        return value


#: (framework, family, summary) → {condition: its declaration}.
Declared = dict[tuple[str, str, str], dict[str, SummaryConvention]]


def load(path: Path = SUMMARY_CONVENTIONS_FILE) -> Declared:
    """Every declaration of ``path``, keyed; a repeated (framework, family, summary, condition)
    or an unknown field is an error, loudly."""
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    out: Declared = {}
    for framework, items in (data.get("conventions") or {}).items():
        for item in items:
            convention = SummaryConvention.model_validate(item)
            for summary in convention.summary:
                key = (framework, convention.family, str(summary))
                found = out.setdefault(key, {})
                if convention.where in found:
                    raise ValueError(f"{path.name} declares {key} {convention.where} twice")
                found[convention.where] = convention
    return out


@cache
def summary_conventions() -> Declared:
    return load()


def declared(framework: str, family: str, summary: str) -> dict[str, str]:
    """condition → what ``framework`` (an adapter's package) returns there for ``family``'s
    ``summary``; empty where it keeps the oracle's NaN and ±inf."""
    found = summary_conventions().get((framework, family, summary), {})
    return {where: convention.returns for where, convention in found.items()}
