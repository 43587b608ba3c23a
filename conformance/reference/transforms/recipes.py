"""A transform written as data (a name, its parameters, references to a constraint's
attributes) built into an oracle transform, so that what a constraint registry returns can be
kept as data and still be evaluated.

A recipe is a mapping ``{"name": <transform>, <parameter>: <value>, …}``. A value is a number,
a list, a nested recipe, or a string reference: ``"$lower_bound"`` (the constraint's
attribute), ``"$width"`` (upper_bound − lower_bound), ``"$one:base_constraint"`` (the registry's
transform for the constraint in that attribute) or ``"$each:cseq"`` (one for each constraint
in that attribute). A constraint is a pair (name, attributes).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..declarations import OracleError
from .base import Transform
from .registry import make

#: A constraint by name and attributes, as recipes refer to sub-constraints.
Constraint = tuple[str, Mapping[str, Any]]
#: The registry's transform for a sub-constraint.
Resolve = Callable[[str, Mapping[str, Any]], Transform]


def build(recipe: Mapping[str, Any], attrs: Mapping[str, Any], resolve: Resolve) -> Transform:
    """The transform ``recipe`` describes, its references read from ``attrs``."""
    params = {k: _value(v, attrs, resolve) for k, v in recipe.items() if k != "name"}
    return make(recipe["name"], **params)


def names_in(recipe: Any) -> set[str]:
    """Every transform name a recipe uses, nested ones included."""
    if isinstance(recipe, Mapping):
        found = {recipe["name"]}
        for key, value in recipe.items():
            if key != "name":
                found |= names_in(value)
        return found
    if isinstance(recipe, list):
        return set().union(*(names_in(v) for v in recipe)) if recipe else set()
    return set()


def _value(value: Any, attrs: Mapping[str, Any], resolve: Resolve) -> Any:
    if isinstance(value, Mapping):
        return build(value, attrs, resolve)
    if isinstance(value, list):
        return [_value(v, attrs, resolve) for v in value]
    if not (isinstance(value, str) and value.startswith("$")):
        return value
    kind, _, name = value[1:].rpartition(":")
    if kind == "each":
        found: list[Constraint] = list(_attr(attrs, name))
        return [resolve(sub, sub_attrs) for sub, sub_attrs in found]
    if kind == "one":
        sub, sub_attrs = _attr(attrs, name)
        return resolve(sub, sub_attrs)
    if name == "width":
        return _attr(attrs, "upper_bound") - _attr(attrs, "lower_bound")
    return _attr(attrs, name)


def _attr(attrs: Mapping[str, Any], name: str) -> Any:
    try:
        return attrs[name]
    except KeyError:
        raise OracleError(f"this constraint needs its {name!r}") from None
