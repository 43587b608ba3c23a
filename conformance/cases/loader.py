"""Read a case file into validated :class:`Case` objects and located :class:`CaseError` s.

A broken case never hides the others: every case is validated on its own, and each problem
becomes a :class:`CaseError` naming the file, the line, the case id and what is wrong. The
pytest plugin turns those into failing items; the rest of the file still runs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import ValidationError

from conformance import reference
from conformance.cases import CASE_SUFFIXES
from conformance.cases.case_model import KL_CASE_VALUE, CaseFile, CaseSpec
from conformance.cases.validate import Known, SemanticError, differentiable, resolve_case
from conformance.cases.yaml_source import Located, YamlError, load_located
from conformance.contexts import SEPARATOR, CallingContext


@dataclass(frozen=True)
class CaseError:
    """A problem in a case file, located as precisely as the file allows."""

    file: str
    line: int | None
    case_id: str | None
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        who = f" case {self.case_id!r}:" if self.case_id else ""
        return f"{where}:{who} {self.message}"


@dataclass(frozen=True, eq=False)
class Case:
    """A validated case, ready to expand into items."""

    spec: CaseSpec
    file: str
    line: int
    source: str
    parametrization: str
    batch_shape: tuple[int, ...] = ()
    event_shape: tuple[int, ...] = ()
    log_prob_shape: tuple[int, ...] = ()
    #: For a broadcast variant (see :mod:`conformance.plan.derived.variants`): its name, the case it was
    #: derived from, and how its float64 inputs derive from the base's.
    variant: str = ""
    base: Case | None = None
    derive: Callable | None = None
    #: For a calling-context item (see :mod:`conformance.cases.context_design`): the way the
    #: framework is called; ``base`` is then the case whose inputs and oracle answers it shares.
    context: CallingContext | None = None
    #: For a KL case: q of KL(p‖q), a case of its own (this case's id, file and line) whose
    #: parameters are q's; this case is p.
    kl_q: Case | None = None

    @property
    def id(self) -> str:
        own = f"{self.spec.id}+{self.variant}" if self.variant else self.spec.id
        return f"{own}{SEPARATOR}{self.context.name}" if self.context else own

    @property
    def family(self) -> str:
        return self.spec.family

    @property
    def kl_shape(self) -> tuple[int, ...]:
        """KL(p‖q)'s shape: p's batch shape broadcast against q's (a KL case only)."""
        assert self.kl_q is not None
        return tuple(np.broadcast_shapes(self.batch_shape, self.kl_q.batch_shape))

    @cached_property
    def differentiable_parameters(self) -> tuple[str, ...]:
        """The parameters that are neither integer-valued, static nor declared
        non-differentiable, whatever ``grad_wrt`` chooses for log_prob's gradient (what a
        draw's pathwise derivative may be taken by)."""
        family = reference.get_family(self.family)
        why_not = differentiable(self.spec, family, self.parametrization)
        return tuple(k for k, why in why_not.items() if not why and k != "value")

    @cached_property
    def differentiable_inputs(self) -> tuple[str, ...]:
        """The inputs a gradient check differentiates, in the family's order: the case's
        ``grad_wrt`` if it has one, else every input that is neither integer-valued nor static."""
        family = reference.get_family(self.family)
        why_not = differentiable(self.spec, family, self.parametrization)
        chosen = self.spec.grad_wrt
        return tuple(k for k, why in why_not.items() if not why and (chosen is None or k in chosen))


@dataclass
class LoadedFile:
    path: str
    cases: list[Case] = field(default_factory=list)
    errors: list[CaseError] = field(default_factory=list)


def load_case_file(
    path: str | Path, display: str | None = None, known: Known | None = None
) -> LoadedFile:
    """Load ``path``; ``display`` is the name errors use (defaults to the path as given)."""
    name = display or str(path)
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        return LoadedFile(name, errors=[CaseError(name, None, None, f"cannot read: {exc}")])
    return load_case_text(raw, name, known)


def load_case_text(raw: str | bytes, name: str, known: Known | None = None) -> LoadedFile:
    out = LoadedFile(name)
    try:
        doc = load_located(raw)
    except YamlError as exc:
        out.errors.append(CaseError(name, exc.line, None, exc.message))
        return out
    text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    if not isinstance(doc.data, dict):
        kind = "empty" if doc.data is None else f"a {type(doc.data).__name__}"
        out.errors.append(
            CaseError(
                name, 1, None, f"a case file is a mapping with a 'cases:' list; this is {kind}"
            )
        )
        return out
    try:
        top = CaseFile.model_validate(doc.data)
    except ValidationError as exc:
        for err in exc.errors():
            out.errors.append(CaseError(name, doc.line_of(err["loc"]), None, _describe(err)))
        return out

    case_lines = [doc.line_of(("cases", i)) or 1 for i in range(len(top.cases))]
    text_lines = text.splitlines()
    seen: dict[str, int] = {}
    for i, raw_case in enumerate(top.cases):
        line = case_lines[i]
        end = case_lines[i + 1] - 1 if i + 1 < len(case_lines) else len(text_lines)
        source = "\n".join(text_lines[line - 1 : end]).rstrip() + "\n"
        case_id = raw_case.get("id") if isinstance(raw_case, dict) else None
        case_id = shown_id(case_id) if isinstance(case_id, str) else None
        result = _load_case(doc, top.defaults, raw_case, i, name, source, known)
        if isinstance(result, Case):
            if result.id in seen:
                out.errors.append(
                    CaseError(
                        name,
                        doc.line_of(("cases", i, "id")),
                        result.id,
                        f"duplicate case id (first defined at line {seen[result.id]})",
                    )
                )
                continue
            seen[result.id] = line
            out.cases.append(result)
        else:
            out.errors.extend(CaseError(name, ln, case_id, msg) for ln, msg in result)
    return out


def _load_case(
    doc: Located,
    defaults: dict[str, Any],
    raw: Any,
    index: int,
    name: str,
    source: str,
    known: Known | None,
) -> Case | list[tuple[int | None, str]]:
    path = ("cases", index)
    if not isinstance(raw, dict):
        return [(doc.line_of(path), f"a case is a mapping, got {type(raw).__name__}")]
    merged = {**defaults, **raw}
    try:
        spec = CaseSpec.model_validate(merged)
    except ValidationError as exc:
        errors = []
        for err in _merge_union_errors(exc.errors()):
            loc = tuple(err["loc"])
            # A key from `defaults:` is wrong there; a missing key is missing from the case.
            from_defaults = loc and loc[0] not in raw and loc[0] in defaults
            root = ("defaults",) if from_defaults else path
            errors.append((doc.line_of(root + _yaml_path(loc)), _describe(err)))
        return errors
    try:
        resolved = resolve_case(spec, known)
    except SemanticError as exc:
        return [(doc.line_of(path + exc.path), exc.message)]
    line = doc.line_of(path) or 1
    case = Case(
        spec,
        name,
        line,
        source,
        resolved.parametrization,
        resolved.batch_shape,
        resolved.event_shape,
        resolved.log_prob_shape,
    )
    if spec.kl is None:
        return case
    try:
        q = _kl_q(case, known)
    except SemanticError as exc:
        return [(doc.line_of((*path, "kl", *exc.path)), exc.message)]
    return dataclasses.replace(case, kl_q=q)


def _kl_q(p: Case, known: Known | None) -> Case:
    """q of a KL case, validated as a case of its own family, and the pair's checks: the oracle
    has KL for the two families in these parametrisations, their batch shapes broadcast and
    their event shapes agree. A :class:`SemanticError`'s path is below the case's ``kl:``."""
    kl = p.spec.kl
    assert kl is not None
    q_spec = CaseSpec.model_validate(
        {
            **kl.model_dump(exclude_none=True),
            "id": p.spec.id,
            "value": KL_CASE_VALUE,
            "dtypes": p.spec.dtypes,
        }
    )
    resolved = resolve_case(q_spec, known)
    try:
        pair = reference.kl_pair(p.family, q_spec.family)
    except reference.OracleError as exc:
        raise SemanticError(("family",), str(exc)) from None
    for side, key, accepted in (
        ("p", p.parametrization, pair.p_parametrizations),
        ("q", resolved.parametrization, pair.q_parametrizations),
    ):
        if key not in accepted:
            where = ("parametrization",) if side == "q" else ()
            raise SemanticError(
                where,
                f"the oracle's KL({p.family} ‖ {q_spec.family}) takes {side} by "
                f"{', '.join(accepted)}, not {key}",
            )
    try:
        np.broadcast_shapes(p.batch_shape, resolved.batch_shape)
    except ValueError:
        raise SemanticError(
            ("params",),
            f"q's batch shape {resolved.batch_shape} does not broadcast against p's "
            f"{p.batch_shape}",
        ) from None
    if resolved.event_shape != p.event_shape:
        raise SemanticError(
            ("params",),
            f"q's event shape {resolved.event_shape} is not p's {p.event_shape}",
        )
    return Case(
        q_spec,
        p.file,
        p.line,
        p.source,
        resolved.parametrization,
        resolved.batch_shape,
        resolved.event_shape,
        resolved.log_prob_shape,
    )


#: Longest case id an error message repeats; ids are at most 120 characters when valid.
_MAX_SHOWN_ID = 120


def shown_id(raw: str) -> str:
    """A case id as errors and item names may show it: printable, bounded, never a surrogate.

    An invalid id is still the best name for its case, but it may hold anything YAML can
    spell (newlines, NULs, lone surrogates that no file encoding can write).
    """
    out = "".join(
        c if c.isprintable() and not 0xD800 <= ord(c) <= 0xDFFF else ascii(c)[1:-1] for c in raw
    )
    return out if len(out) <= _MAX_SHOWN_ID else out[: _MAX_SHOWN_ID - 1] + "…"


_TAG_PARTS = {"literal", "generator", "sample", "float", "int", "bool", "str"}


def _yaml_path(loc: tuple) -> tuple:
    """Drop pydantic's union-member tags (``literal``, ``normal``…) to get a path into the YAML."""
    out = []
    for part in loc:
        if isinstance(part, str) and (part in _TAG_PARTS or part.startswith(("list[", "union["))):
            continue
        out.append(part)
    return tuple(out)


def _merge_union_errors(errors: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Collapse "not a float / not an int / not a list" triples into one readable error."""
    out: list[Mapping[str, Any]] = []
    seen: set[tuple] = set()
    for err in errors:
        loc = tuple(err["loc"])
        if "literal" in loc:
            base = loc[: loc.index("literal")]
            if base in seen:
                continue
            seen.add(base)
            out.append(
                {
                    **err,
                    "loc": base,
                    "msg": "expected a number, a nested list of numbers, or a mapping with "
                    "'generator:' (or 'sample:' for the value)",
                }
            )
        else:
            out.append(err)
    return out


def _describe(err: Mapping[str, Any]) -> str:
    loc = ".".join(str(p) for p in _yaml_path(tuple(err["loc"])))
    msg = err["msg"]
    if err.get("type") == "extra_forbidden":
        msg = "unknown key (not part of case format v1)"
    elif err.get("type") == "missing":
        msg = "required key is missing"
    value = err.get("input")
    shown = ""
    if err.get("type") not in ("missing", "extra_forbidden") and isinstance(
        value, str | int | float
    ):
        shown = f" (got {value!r})"
    return f"{loc}: {msg}{shown}" if loc else f"{msg}{shown}"


def find_case_files(root: str | Path) -> list[Path]:
    """Every ``*.yaml``/``*.yml`` below ``root`` (or ``root`` itself), sorted for stable ids."""
    root = Path(root)
    if root.is_file():
        return [root]
    return sorted(p for p in root.rglob("*") if p.suffix in CASE_SUFFIXES and p.is_file())
