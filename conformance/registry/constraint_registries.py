"""What each framework's constraint registry (``biject_to``, torch's ``transform_to``) returns
for each constraint, as data (``constraint_registries.yaml``), and the oracle transform that
computes the same map, so that a check can hold a registry's answer to the oracle."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict

from conformance.reference import OracleError
from conformance.reference.transforms import Transform, build

CONSTRAINT_REGISTRIES_FILE = Path(__file__).parent / "constraint_registries.yaml"


class Registration(BaseModel):
    """One registry entry: the constraint class it is keyed by, the transform its factory
    returns (an oracle recipe, ``reference.transforms.recipes``), the attributes an instance
    constraint has fixed, and a note."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: str
    transform: dict[str, Any]
    defaults: dict[str, Any] = {}
    note: str = ""


@cache
def constraint_registries() -> dict[str, dict[str, dict[str, Registration]]]:
    """framework → registry (``biject_to``, ``transform_to``) → constraint → its entry."""
    data = yaml.safe_load(CONSTRAINT_REGISTRIES_FILE.read_text(encoding="utf-8"))
    return {
        framework: {
            registry: {c: Registration.model_validate(e) for c, e in entries.items()}
            for registry, entries in registries.items()
        }
        for framework, registries in data["registries"].items()
    }


def registration(constraint: str, framework: str, registry: str = "biject_to") -> Registration:
    """The entry for ``constraint``; :class:`OracleError` where the registry has none."""
    table = constraint_registries().get(framework, {}).get(registry)
    if table is None:
        raise OracleError(f"no registry {registry!r} for {framework!r}")
    try:
        return table[constraint]
    except KeyError:
        raise OracleError(
            f"{framework}'s {registry} has nothing for {constraint!r}; it has "
            f"{', '.join(sorted(table))}"
        ) from None


def registered_transform(
    constraint: str, framework: str, registry: str = "biject_to", **attrs: Any
) -> Transform:
    """The oracle transform for what ``framework``'s ``registry`` returns for ``constraint``
    with attributes ``attrs`` (``lower_bound``, ``upper_bound``, ``event_dim``, ``dim``,
    ``lengths``; ``base_constraint`` and ``cseq`` as (name, attributes) pairs)."""
    entry = registration(constraint, framework, registry)

    def resolve(sub: str, sub_attrs: Mapping[str, Any]) -> Transform:
        return registered_transform(sub, framework, registry, **dict(sub_attrs))

    return build(entry.transform, {**entry.defaults, **attrs}, resolve)
