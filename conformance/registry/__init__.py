"""Family registry: how each framework spells each family, as data.

The oracle (``reference/``) owns the mathematics — parameter names, event ranks, domains. The
registry owns the frameworks' side, one YAML file per family in ``registry/families/``: which
constructor builds the family in which parametrisation, what each parameter is called there,
adapter options, and declared conventions where frameworks differ by design. Adapters read it;
nothing else hard-codes a framework's naming.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator

FAMILY_DIR = Path(__file__).parent / "families"


#: The kinds of a binding argument (see :attr:`Binding.args`).
ARG_KINDS = frozenset({"param", "literal", "call", "max_of"})


class Binding(BaseModel):
    """How one framework builds one family for some of its parametrisations."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    constructor: str = Field(description="Dotted path of the class or function to call.")
    rename: dict[str, str] = Field(default_factory=dict, description="oracle name → keyword")
    args: dict[str, Any] | None = Field(
        default=None,
        description="Explicit keyword arguments, replacing 'every parameter by (renamed) "
        "keyword'. Each value is {param: NAME} (a parameter's array), {literal: X} (a constant), "
        "or {call: DOTTED.PATH, args: {...}} (a nested constructor, e.g. Independent's base), "
        "or {max_of: NAME} (the largest value of a parameter's input as a Python int, read "
        "before any trace: NumPyro's total_count_max, which drawing under jax.jit needs), or "
        "a list of those (TransformedDistribution's transforms).",
    )
    parametrizations: tuple[str, ...] | None = Field(
        default=None, description="Parametrisations this binding covers (default: all)."
    )
    options: dict[str, str] = Field(default_factory=dict, description="Adapter-specific options.")
    oracle: dict[str, Any] = Field(
        default_factory=dict,
        description="Declared convention: options the oracle evaluates this framework against.",
    )
    validation: Literal["all", "params", "none"] | None = Field(
        default=None,
        description="What this binding raises ValueError for by default: invalid parameters and "
        "out-of-support values (all), invalid parameters only (params), nothing (none). "
        "Default: the adapter's framework-wide behaviour.",
    )
    tolerance: dict[str, float] = Field(
        default_factory=dict,
        description="A declared tolerance for a path that is approximate by design, e.g. {rtol: "
        "0.1}: log_prob and gradients are then held to rtol relative, and results say so.",
    )
    structure: dict[str, str] = Field(
        default_factory=dict,
        description="Per-input gradient structure where this binding only reads part of a matrix "
        "(e.g. {covariance_matrix: diagonal} for a DiagLinearOperator).",
    )
    value_dtypes: tuple[Literal["float", "int32", "int64", "bool"], ...] | None = Field(
        default=None,
        description="Declared convention: the value dtypes this binding accepts (a case's "
        "value_dtype). For a case with another value dtype every check holds the binding to "
        "raising TypeError from log_prob (e.g. NumPyro's Categorical gathers with the value "
        "and needs integer indices). Default: every value dtype.",
    )
    note: str = ""

    def accepts_value_dtype(self, value_dtype: str) -> bool:
        return self.value_dtypes is None or value_dtype in self.value_dtypes

    def covers(self, parametrization: str) -> bool:
        return self.parametrizations is None or parametrization in self.parametrizations

    def keyword(self, param: str) -> str:
        return self.rename.get(param, param)


class FamilyEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    family: str
    #: Bindings that differ from a framework's naming convention (``torch.distributions.<family>``,
    #: see :attr:`Adapter.family_module`) — or of frameworks that have no such convention.
    frameworks: dict[str, tuple[Binding, ...]] = Field(default_factory=dict)
    #: Frameworks with a naming convention that do not offer this family → why.
    unsupported: dict[str, str] = Field(default_factory=dict)
    notes: str = ""

    @field_validator("frameworks", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return {} if value is None else value


Bindings = Mapping[str, tuple[Binding, ...]]


@cache
def entries() -> dict[str, FamilyEntry]:
    """Every family file, validated; a broken registry file is a programming error, loudly."""
    out: dict[str, FamilyEntry] = {}
    for path in sorted(FAMILY_DIR.glob("*.yaml")):
        try:
            entry = FamilyEntry.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
        except Exception as exc:
            raise RuntimeError(f"registry file {path.name} is invalid: {exc}") from exc
        if entry.family in out:
            raise RuntimeError(f"registry file {path.name} repeats family {entry.family}")
        out[entry.family] = entry
    return out


@cache
def bindings_for(
    framework: str, family_module: str | None = None
) -> dict[str, tuple[Binding, ...]]:
    """family → bindings for one framework (its registry name).

    With ``family_module`` every registered family the file neither binds nor declares
    unsupported for this framework gets the convention's binding, ``<family_module>.<family>``.
    """
    out: dict[str, tuple[Binding, ...]] = {}
    for name, e in entries().items():
        if framework in e.frameworks:
            out[name] = e.frameworks[framework]
        elif family_module is not None and framework not in e.unsupported:
            out[name] = (Binding(constructor=f"{family_module}.{name}"),)
    return out


def find_binding(bindings: Bindings, family: str, parametrization: str) -> Binding | str:
    """The binding for ``family`` in ``parametrization``, or the reason there is none."""
    options = bindings.get(family)
    if not options:
        return f"has no {family}"
    for binding in options:
        if binding.covers(parametrization):
            return binding
    offered = sorted({p for b in options for p in (b.parametrizations or ())})
    return f"offers {family} by {', '.join(offered)} only, not by {parametrization}"
