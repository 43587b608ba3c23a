"""The plan: which items a run has, without pytest.

``plan_file`` turns a case file into item specs — one per framework × dtype × check, plus a
located error spec for a broken case and one unsupported spec where a framework rejects a
case's particular inputs — in the order the run collects them. The pytest plugin wraps each
spec in an item; the bench baseline and the listing read the same specs, so every front agrees
on what exists. A framework that lacks a family or parametrisation has no item for it: the run
says so once, as data (:mod:`~conformance.plan.not_offered`). Nothing is dropped silently, and
one broken case never takes the file's other cases with it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache, partial
from pathlib import Path

import numpy as np

from conformance import reference
from conformance.adapters import Adapter
from conformance.adapters.capabilities import CallingContexts, Cdfs, Icdfs, Summarizes
from conformance.cases.builtin import builtin_cases
from conformance.cases.context_design import CaseShape, design, pinned_context
from conformance.cases.loader import Case, CaseError, find_case_files, load_case_file
from conformance.check_names import CheckName
from conformance.checks import CHECKS, Check
from conformance.contexts import FLOAT32_MODES, CallingContext
from conformance.expect.materialize import CaseInputError, float64_inputs, variant_params
from conformance.plan.derived.edges import EDGE_TAG, edge_file
from conformance.plan.derived.variants import VARIANT_CHECKS, derive_variants
from conformance.plan.quick import quick_selection
from conformance.plan.selection import Selection
from conformance.plan.shards import in_shard, item_id
from conformance.plan.specs import CaseErrorSpec, CheckSpec, ItemSpec, UnsupportedSpec
from conformance.registry import Binding


@dataclass
class _Expansion:
    """What one file's expansion shares: a check that reads the parameters alone runs once
    per file for the same parameters, calling contexts are dealt over a group's cases."""

    selection: Selection
    drawn: set[tuple] = field(default_factory=set)
    #: Each case that may draw calling contexts (by identity) → its family and
    #: parametrization's such cases in the file: the design deals rows to those a framework
    #: can run, in turn.
    groups: dict[int, list[Case]] = field(default_factory=dict)
    #: (id of a group, framework) → the group's cases that framework runs, by identity → slot.
    slots: dict[tuple[int, str], dict[int, tuple[int, int]]] = field(default_factory=dict)

    def slot(self, case: Case, name: str, runs: Callable[[Case], bool]) -> tuple[int, int] | None:
        """``case``'s (index, count) among its group's cases that framework ``name`` runs
        (``runs(case)`` says whether it does), or None where it runs none."""
        group = self.groups[id(case)]
        key = (id(group), name)
        if key not in self.slots:
            eligible = [c for c in group if runs(c)]
            self.slots[key] = {id(c): (i, len(eligible)) for i, c in enumerate(eligible)}
        return self.slots[key].get(id(case))


def plan_file(path: Path, selection: Selection, display: str | None = None) -> list[ItemSpec]:
    """Every item of one case file; ``display`` is the path the ids and messages use."""
    loaded = load_case_file(path, display=display, known=selection.known)
    specs: list[ItemSpec] = []
    names: set[str] = set()
    for error in loaded.errors:
        name = base = error_name(error)
        for n in range(2, len(loaded.errors) + 2):
            if name not in names:
                break
            name = f"{base[:-1]}-{n}]"
        names.add(name)
        specs.append(CaseErrorSpec(name, error))
    expansion = _Expansion(selection)
    # A family the run does not select costs nothing: its edges are not generated (they ask
    # the oracle for every edge point, the largest part of planning a file).
    cases = [c for c in loaded.cases if selection.selects_family(c.family)]
    if selection.edges and cases:
        generated = edge_file(
            loaded.cases,
            loaded.path,
            selects=selection.selects_family,
            bulk=selection.bulk_edges,
        )
        cases = [*cases, *generated.cases]
        specs.extend(_error_spec(e) for e in generated.errors)
    expansion.groups = context_groups(cases)
    for case in cases:
        try:
            specs.extend(_case_specs(expansion, case))
        except Exception as exc:
            message = f"cannot expand the case: {type(exc).__name__}: {exc}"
            specs.append(_error_spec(CaseError(case.file, case.line, case.id, message)))
    selected = quick_selection(specs) if selection.quick else specs
    # Known failures are matched to the items a run keeps, not to those --quick leaves out.
    return [_with_known_failures(s, selection) for s in selected]


def _with_known_failures(spec: ItemSpec, selection: Selection) -> ItemSpec:
    """``spec`` with the known-failure entries that match it (check items only)."""
    if not isinstance(spec, CheckSpec):
        return spec
    case = spec.case
    known = tuple(
        selection.known_failures.matching(
            spec.static().to_json(), lambda: _all_valid(case, *float64_inputs(case))
        )
    )
    return dataclasses.replace(spec, known_failures=known) if known else spec


def plan(
    selection: Selection, paths: list[Path] | None = None, root: Path | None = None
) -> list[ItemSpec]:
    """Every item of the case files in ``paths`` (default: the selection's case roots), sharded
    as the selection asks. Ids are :func:`case_file_id`'s; a file outside every case root is
    named relative to ``root`` (default: the current directory)."""
    root = Path.cwd() if root is None else root
    files = [
        f for p in (selection.case_roots if paths is None else paths) for f in find_case_files(p)
    ]
    roots = tuple(selection.case_roots)
    specs: list[ItemSpec] = []
    for f in files:
        file_id = case_file_id(f, roots, root)
        specs += [
            s
            for s in plan_file(f, selection, file_id)
            if selection.shard is None or in_shard(item_id(file_id, s.name), selection.shard)
        ]
    return specs


#: What the shipped cases are called in ids, wherever they are installed.
BUILTIN_ROOT_NAME = "cases"


def case_file_id(path: Path, roots: tuple[Path, ...], fallback_root: Path) -> str:
    """The path a case file's item ids, records and known-failure ``file:`` patterns use:
    ``<root name>/<path inside its case root>``, the shipped root always ``cases``. So an id
    reads the same from any working directory, from a clone or a wheel, and ``conformance
    diff`` of two such runs compares like with like. A file outside every case root (named
    on the command line) is named relative to ``fallback_root`` (pytest's rootdir)."""
    resolved = path.resolve()
    for root, name in _root_names(roots).items():
        if resolved == root:
            return root.name
        if root in resolved.parents:
            return f"{name}/{resolved.relative_to(root).as_posix()}"
    return display_path(path, fallback_root)


@cache
def _builtin_root() -> tuple[Path, ...]:
    """The shipped cases' directory (none in a build without them): named ``cases`` whether
    or not a run lists it as a case root, so a shipped case's id given on the command line
    from anywhere (see :func:`conformance.run.config.arguments.builtin_id_path`) keeps its id."""
    try:
        return (builtin_cases(),)
    except FileNotFoundError:
        return ()


@cache
def _root_names(roots: tuple[Path, ...]) -> dict[Path, str]:
    """Each case root's name in ids, outermost roots first (a file in nested roots is named
    from the outer one). The shipped root is ``cases`` (also when the run does not list it: a
    shipped file named on the command line), unless a root of the run has that name; a root
    whose name is taken is named by its full path, so two roots never give one id."""
    builtin = next(iter(_builtin_root()), None)
    names: dict[Path, str] = {}
    ordered = sorted(set(roots), key=lambda r: (r != builtin, len(r.parts), str(r)))
    ordered += [r for r in _builtin_root() if r not in ordered]
    for root in ordered:
        name = BUILTIN_ROOT_NAME if root == builtin else root.name
        names[root] = root.as_posix() if name in names.values() else name
    return dict(sorted(names.items(), key=lambda kv: len(kv[0].parts)))


def _error_spec(error: CaseError) -> CaseErrorSpec:
    return CaseErrorSpec(error_name(error), error)


def _case_specs(expansion: _Expansion, case: Case) -> Iterator[ItemSpec]:
    try:
        params64, value64 = float64_inputs(case)
    except CaseInputError as exc:
        yield _error_spec(CaseError(case.file, case.line, case.id, str(exc)))
        return
    pinned = pinned_context(case)
    if pinned is not None:
        yield from _context_specs(expansion, case, params64, value64, pinned)
        return
    yield from _expand(expansion, case, params64)
    if id(case) in expansion.groups:
        yield from _context_specs(expansion, case, params64, value64)
    # A generated edge case is one point on purpose: broadcasting it again adds no edge.
    if EDGE_TAG in case.spec.tags:
        return
    if not (expansion.selection.variants and _all_valid(case, params64, value64)):
        return
    if case.kl_q is not None:
        return  # a variant broadcasts a value: a KL case has none it reads
    variants, problems = derive_variants(case, params64, value64)
    for problem in problems:
        yield _error_spec(CaseError(case.file, case.line, case.id, problem))
    for variant in variants:
        yield from _expand(expansion, variant, variant_params(variant))


def checks_for(selection: Selection, case: Case) -> list[CheckName]:
    """The checks selected for ``case``: a broadcast variant runs the variant checks only."""
    if case.variant:
        return [c for c in selection.selected_checks(list(VARIANT_CHECKS)) if c in CHECKS]
    if case.kl_q is not None:  # a KL case: p and q, no value
        return selection.selected_checks([CheckName.KL])
    listed = case.spec.checks
    if listed is not None and CheckName.EAGER not in listed:
        # The eager check re-runs the case's own checks op by op: it comes with any of them.
        listed = [*listed, CheckName.EAGER]
    return [
        c
        for c in selection.selected_checks(listed)
        if c in CHECKS and c not in VARIANT_CHECKS and c is not CheckName.CONTEXT
    ]


def _parameters_key(case: Case, params64, values: bool = True) -> tuple:
    """What the draws of ``case`` depend on: its family, parametrisation and parameters (their
    shapes alone where ``values`` is false)."""
    digest = hashlib.blake2b(digest_size=12)
    for name in sorted(params64):
        array = np.ascontiguousarray(params64[name])
        digest.update(f"{name}{array.shape}{array.dtype}".encode())
        if values:
            digest.update(array.tobytes())
    pdtypes = tuple(sorted(case.spec.param_dtypes.items()))
    return (case.family, case.parametrization, pdtypes, digest.hexdigest())


def _draws_apply(case: Case, params64) -> bool:
    """Whether checks that read the parameters alone run on ``case``: written (not generated)
    cases whose parameters are all inside their domains, of a family with draws to judge
    (``reference.Family.no_draws``)."""
    if EDGE_TAG in case.spec.tags:
        return False
    family = reference.get_family(case.family)
    if family.no_draws:
        return False
    try:
        value = float64_inputs(case)[1]
        return bool(np.all(family.evaluate(params64, value, case.parametrization).params_valid))
    except (ValueError, ArithmeticError, np.linalg.LinAlgError):
        return False


def _applies(check: Check, case: Case, params64, draws_ok: bool) -> bool:
    if not check.draws_only:
        return True
    if not draws_ok:
        return False
    family = reference.get_family(case.family)
    if check.continuous_draws and family.value.discrete:
        return False
    if check.law_kinds is None or (
        check.pathwise_maps and (family.has_pathwise() or family.has_pathwise_moments())
    ):
        return True
    law = family.law(case.parametrization)
    if law == reference.PMF and family.value.event_rank > 0:
        return False  # a discrete vector law without projections (one with: PROJECTIONS)
    return law in check.law_kinds


def _expand(expansion: _Expansion, case: Case, params64) -> Iterator[ItemSpec]:
    selection = expansion.selection
    dtypes = selection.selected_dtypes(list(case.spec.dtypes))
    checks = checks_for(selection, case)
    drawn_keys: dict[bool, tuple | None] = {True: None, False: None}
    if any(CHECKS[c].draws_only for c in checks):
        draws_ok = _draws_apply(case, params64)
        checks = [c for c in checks if _applies(CHECKS[c], case, params64, draws_ok)]
        if draws_ok:
            drawn_keys = {v: _parameters_key(case, params64, values=v) for v in (True, False)}
    for name in selection.selected_frameworks(case.spec.frameworks):
        adapter = selection.adapters[name]
        binding = adapter.binding(case.family, case.parametrization)
        if isinstance(binding, str):
            continue  # the framework lacks the family: see conformance.plan.not_offered
        if case.kl_q is not None and not _divides(case, checks, adapter, binding, selection):
            continue  # no rule for the pair: see conformance coverage
        reason = adapter.unsupported_inputs(binding, params64) or _q_unsupported(case, adapter)
        if reason:
            yield UnsupportedSpec(f"{case.id}[{name}-unsupported]", case, adapter, reason)
            continue
        for dtype in dtypes:
            for check_name in checks:
                check = CHECKS[check_name]
                if check.not_applicable(case) or check.unsupported_by(adapter, selection.opted_in):
                    continue
                if not _shares_methods(check, case, adapter, binding):
                    continue
                if check.offered(case, adapter, binding) is not None:
                    continue
                if check.single_dtype and dtype != _one_dtype(dtypes, check.single_dtype):
                    continue
                if check.draws_only:
                    key = (drawn_keys[not check.draws_by_shape], name, dtype, check_name)
                    if key in expansion.drawn:
                        continue  # an earlier case of this file has the same parameters
                    expansion.drawn.add(key)
                spec = CheckSpec(
                    f"{case.id}[{name}-{dtype}-{check_name}]",
                    case,
                    adapter,
                    binding,
                    dtype,
                    check,
                    selection.device,
                )
                yield spec


def _q_unsupported(case: Case, adapter: Adapter) -> str | None:
    """Why ``adapter`` cannot take q's parameters of a KL case (None: it can, or no KL case)."""
    q = case.kl_q
    if q is None:
        return None
    binding = adapter.binding(q.family, q.parametrization)
    if isinstance(binding, str):
        return binding
    reason = adapter.unsupported_inputs(binding, float64_inputs(q)[0])
    return f"q: {reason}" if reason else None


def _divides(
    case: Case, checks: list[CheckName], adapter: Adapter, binding: Binding, selection: Selection
) -> bool:
    """Whether ``adapter`` runs a check of this KL case (it registers a rule for the pair)."""
    return any(
        CHECKS[c].unsupported_by(adapter, selection.opted_in) is None
        and CHECKS[c].offered(case, adapter, binding) is None
        for c in checks
    )


def _shares_methods(check: Check, case: Case, adapter: Adapter, binding: Binding) -> bool:
    """Whether the oracle and the framework's class have a method the check reads in common
    (True for a check that reads none a class may lack)."""
    if not check.methods:
        return True
    family = reference.get_family(case.family)
    return isinstance(adapter, Summarizes | Cdfs | Icdfs) and any(
        family.has_method(m) and adapter.implements(binding, m) for m in check.methods
    )


def _one_dtype(dtypes: list[str], which: str) -> str:
    """``first``, ``last``, or a dtype named (then no item where the case lacks it)."""
    if which == "first":
        return dtypes[0]
    return dtypes[-1] if which == "last" else which


def context_groups(cases: list[Case]) -> dict[int, list[Case]]:
    """The cases of one file that may draw calling contexts, by identity → every such case of
    their family and parametrization, in file order: written cases (no edge, no variant, no
    ``checks:`` of their own, no pinned context, no KL case) whose inputs are all valid."""
    groups: dict[tuple[str, str], list[Case]] = {}
    for case in cases:
        if case.spec.checks is not None or case.spec.context is not None or case.variant:
            continue
        if case.kl_q is not None:
            continue
        if EDGE_TAG in case.spec.tags:
            continue
        try:
            params64, value64 = float64_inputs(case)
        except CaseInputError:
            continue
        if _all_valid(case, params64, value64):
            groups.setdefault((case.family, case.parametrization), []).append(case)
    return {id(case): group for group in groups.values() for case in group}


def _context_specs(
    expansion: _Expansion,
    case: Case,
    params64,
    value64,
    pinned: CallingContext | None = None,
) -> Iterator[ItemSpec]:
    """The calling-context items of ``case``: the pinned context in each of its dtypes, or the
    design's rows for each framework (see :mod:`conformance.cases.context_design`)."""
    selection = expansion.selection
    check = CHECKS[CheckName.CONTEXT]
    if not selection.selected_checks([CheckName.CONTEXT]):
        return
    shape = CaseShape.of(case, params64, value64)
    for name in selection.selected_frameworks(case.spec.frameworks):
        adapter = selection.adapters[name]
        binding = adapter.binding(case.family, case.parametrization)
        axis = adapter.context_axis
        why = check.unsupported_by(adapter, selection.opted_in)
        if isinstance(binding, str) or axis is None or why:
            # Not offered: the family (see conformance.plan.not_offered), or the check, as any
            # check a framework does not offer has no item; a pinned context changes neither.
            continue
        assert isinstance(adapter, CallingContexts)  # the check's operation is offered
        runs = partial(_takes, adapter, binding)
        if not runs(case):
            continue
        if pinned is not None:
            refused = axis.offers(pinned)
            if refused:
                yield UnsupportedSpec(
                    f"{case.id}[{name}-unsupported]", case, adapter, f"{name} {refused}"
                )
                continue
            rows: list[tuple[CallingContext, str]] = [
                (pinned, d)
                for d in case.spec.dtypes
                if d == "float32" or pinned.mode not in FLOAT32_MODES
            ]
        else:
            slot = expansion.slot(case, name, runs)
            rows = design(case, shape, name, adapter, slot) if slot else []
        for context, dtype in rows:
            if not selection.selected_dtypes([dtype]):
                continue
            derived = dataclasses.replace(
                case,
                context=context,
                base=case if pinned is None else None,
                source=context_source(case, context) if pinned is None else case.source,
            )
            spec = CheckSpec(
                f"{derived.id}[{name}-{dtype}-{check.name}]",
                derived,
                adapter,
                binding,
                dtype,
                check,
                selection.device,
            )
            yield spec


def _takes(adapter: Adapter, binding: Binding, case: Case) -> bool:
    """Whether the framework takes ``case``'s inputs through ``binding``."""
    params64 = float64_inputs(case)[0]
    return not adapter.unsupported_inputs(binding, params64) and binding.accepts_value_dtype(
        case.spec.value_dtype
    )


def context_source(case: Case, context: CallingContext) -> str:
    """The case's YAML with the ``context:`` that pins this item's call: what a user pastes to
    run exactly this call again (with its family, where the file's ``defaults:`` gave it)."""
    pinned = context.as_yaml()
    line = f"    context: {{mode: {pinned['mode']}, call: {pinned['call']}"
    if "kinds" in pinned:
        line += ", kinds: {" + ", ".join(f"{k}: {v}" for k, v in pinned["kinds"].items()) + "}"
    lines = [line + "}"]
    if not re.search(r"^\s*(- )?family:", case.source, re.MULTILINE):
        lines.insert(0, f"    family: {case.family}")
    return case.source.rstrip("\n") + "\n" + "\n".join(lines) + "\n"


#: Each case's answer to :func:`_all_valid`, while the case lives.
_VALIDITY: weakref.WeakKeyDictionary[Case, bool] = weakref.WeakKeyDictionary()


def _all_valid(case: Case, params64, value64) -> bool:
    """Variants and calling contexts are derived only from cases whose inputs are all inside
    support and domain (asked once per case: ``params64`` and ``value64`` are its own)."""
    found = _VALIDITY.get(case)
    if found is None:
        family = reference.get_family(case.family)
        try:
            found = bool(np.all(family.evaluate(params64, value64, case.parametrization).valid))
        except (ValueError, ArithmeticError):
            found = False
        _VALIDITY[case] = found
    return found


_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")


def error_name(error: CaseError) -> str:
    """The item name of a case error. An invalid id can hold "::", "[", "/" or spaces, which
    would make a nodeid that selects or reads as something else; the message still quotes it."""
    if error.case_id is None:
        who = "<file>"
    else:
        who = error.case_id if _SAFE_ID.match(error.case_id) else "<invalid-id>"
    return f"{who}[case-error-line{error.line or 0}]"


def display_path(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)
