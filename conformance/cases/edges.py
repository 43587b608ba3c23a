"""Edge cases by construction: each family's parameters at the ends of their domains and its
value at the ends of its support, generated from the oracle's declarations.

Hand-written boundary cases are uneven (some families have none at a closed end, many take no
gradient there). Here the oracle's named domains and supports are walked instead, the way
array-api-tests derives its special cases from the specification. Each family's *anchor* — the
first case of a case file with scalar parameters and value inside the support — is moved one
input at a time to an edge point; everything else stays at the anchor's ordinary values.

The result is case-file YAML (the format a user pastes), loaded through the same loader as
hand-written cases, so generated cases get the same validation, ids, reports and reproducers.
Which partial derivatives each case judges (``grad_wrt``) is decided by the oracle: those that
exist and are finite at that point, each on its own; a case with no finite log_prob or no
finite partial takes no gradient check.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import yaml

from conformance import reference
from conformance.cases.loader import Case, LoadedFile, load_case_text
from conformance.reference.domains import Interval, interval

#: The id prefix of every generated edge case (``edge-<input>-<point>``), and its tag.
PREFIX = "edge-"
EDGE_TAG = "edge"
#: The tag of the generated cases whose every moved input sits exactly on a point (a closed
#: end of a domain, an end of the support, a form change), not near one: the quick preset
#: keeps all of their items (:func:`conformance.run.plan.quick_selection`).
EXACT_TAG = "edge-exact"
#: What a generated case checks: shapes, values and gradients (the ``eager`` check follows
#: them), not batch semantics (one point has none; the written cases cover them).
VALUE_CHECKS = ["shapes", "log_prob"]
GRADIENT_CHECKS = ["grad", "grad_functional"]
#: How far "just inside" and "just outside" sit from an end: representable in float32 next to
#: the ends used here (0 and 1), and far enough that float32 rounding never moves a point
#: across its end.
NEAR = 1e-6
#: A scale or shape parameter far from 1 in both directions.
TINY, HUGE = 1e-6, 1e6


@dataclass(frozen=True)
class EdgePoint:
    """One point of a domain or support: its label in the case id, and the number."""

    label: str
    value: float

    @property
    def exact(self) -> bool:
        """On the point itself (a closed end, a support's end, a form change), not near it."""
        return self.label.startswith("at-")


def _fmt(x: float) -> str:
    """A label for a number in a case id: ``0``, ``1``, ``1e-06``."""
    return f"{x:g}".replace("+", "")


def parameter_points(domain: str) -> list[EdgePoint]:
    """A parameter's edges inside its domain: each closed end exactly, each open end just
    inside, and for a half-line from 0 a tiny and a huge value."""
    iv = interval(domain)
    if iv is None:
        return []
    step = 1.0 if iv.integer else NEAR
    points: list[EdgePoint] = []
    if math.isfinite(iv.lo):
        if iv.lo_closed:
            points.append(EdgePoint(f"at-{_fmt(iv.lo)}", iv.lo))
        elif iv.lo == 0.0 and not math.isfinite(iv.hi):
            points.append(EdgePoint("tiny", TINY))
        else:
            points.append(EdgePoint(f"above-{_fmt(iv.lo)}", iv.lo + step))
    if math.isfinite(iv.hi):
        if iv.hi_closed:
            points.append(EdgePoint(f"at-{_fmt(iv.hi)}", iv.hi))
        else:
            points.append(EdgePoint(f"below-{_fmt(iv.hi)}", iv.hi - step))
    elif not iv.integer and iv.lo == 0.0:
        points.append(EdgePoint("huge", HUGE))
    return points


def value_points(
    support: str, lower: float | None = None, upper: float | None = None
) -> list[EdgePoint]:
    """A value's edges: every finite end of the support exactly, just inside and just outside
    (one count away for a discrete support). ``lower``/``upper`` are ends the parameters set
    (:meth:`~conformance.reference.Family.support_ends`), labelled by side, not by number."""
    iv = interval(support) or Interval(-math.inf, math.inf, False, False)
    ends = [
        ("lower", iv.lo if lower is None else lower, lower is not None, +1.0),
        ("upper", iv.hi if upper is None else upper, upper is not None, -1.0),
    ]
    points: list[EdgePoint] = []
    for side, end, by_params, inward in ends:
        if not math.isfinite(end):
            continue
        step = 1.0 if iv.integer else NEAR * max(1.0, abs(end))
        name = side if by_params else _fmt(end)
        inside, outside = ("above", "below") if inward > 0 else ("below", "above")
        points += [
            EdgePoint(f"at-{name}", end),
            EdgePoint(f"{inside}-{name}", end + inward * step),
            EdgePoint(f"{outside}-{name}", end - inward * step),
        ]
    return points


def _scalar(raw: object) -> float | None:
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        return None
    return float(raw)


def is_anchor(case: Case) -> bool:
    """A plain case to move from: literal scalar parameters and value, every check on, and
    log_prob finite there."""
    spec = case.spec
    if case.variant or spec.id.startswith(PREFIX) or spec.checks or spec.grad_wrt:
        return False
    params = {k: _scalar(v) for k, v in spec.params.items()}
    value = _scalar(spec.value)
    if value is None or any(v is None for v in params.values()):
        return False
    family = reference.get_family(spec.family)
    with np.errstate(all="ignore"):
        try:
            lp = family.log_prob(params, np.float64(value), case.parametrization)
        except Exception:
            return False
    return bool(np.all(np.isfinite(lp)))


def anchors(cases: Iterable[Case]) -> list[Case]:
    """The first anchor of each (family, parametrization), in file order."""
    found: dict[tuple[str, str], Case] = {}
    for case in cases:
        key = (case.family, case.parametrization)
        if key not in found and is_anchor(case):
            found[key] = case
    return list(found.values())


def _judged_partials(
    anchor: Case, params: dict[str, float], value: float
) -> tuple[bool, list[str]]:
    """Whether log_prob is finite at the point, and which of the anchor's differentiable
    inputs have a partial derivative the oracle gives there as a finite number."""
    family = reference.get_family(anchor.family)
    with np.errstate(all="ignore"):
        lp = family.log_prob(params, np.float64(value), anchor.parametrization)
        if not np.all(np.isfinite(lp)):
            return False, []
        grads = family.elementwise_grad(params, np.float64(value), anchor.parametrization)
    finite = {k for k, g in grads.items() if np.all(np.isfinite(g))}
    return True, [k for k in anchor.differentiable_inputs if k in finite]


def edge_cases(anchor: Case, prefix: str = PREFIX) -> list[dict]:
    """The generated cases of one anchor, as case-file mappings; ids start with ``prefix``."""
    spec = anchor.spec
    family = reference.get_family(spec.family)
    info = family.params(anchor.parametrization)
    base = {k: float(v) for k, v in spec.params.items()}
    value = float(spec.value)
    scalar = {k: p for k, p in info.items() if p.event_rank == 0 and not p.static}
    # (label, the parameters moved, the value moved to or None, exactly on the points?)
    moves: list[tuple[str, dict[str, float], float | None, bool]] = [
        (f"{name}-{point.label}", {name: point.value}, None, point.exact)
        for name, pinfo in scalar.items()
        for point in [
            *parameter_points(pinfo.domain),
            *(EdgePoint(f"at-{_fmt(x)}", x) for x in pinfo.form_changes),
        ]
    ]
    ends: list[EdgePoint] = []
    if family.value.event_rank == 0:
        points = value_points(
            family.value.support, *family.support_ends(base, anchor.parametrization)
        )
        moves += [(f"value-{p.label}", {}, p.value, p.exact) for p in points]
        ends = [p for p in points if p.exact]
    # Where the density changes form, it does so at the support's ends: both at once.
    moves += [
        (f"{name}-at-{_fmt(x)}-value-{end.label}", {name: x}, end.value, True)
        for name, pinfo in scalar.items()
        for x in pinfo.form_changes
        for end in ends
    ]
    out: list[dict] = []
    seen: set[tuple] = set()
    for label, moved, moved_value, exact in moves:
        params = {**base, **moved}
        val = value if moved_value is None else moved_value
        if not _params_valid(family, params, val, anchor.parametrization):
            continue  # an end the domain's name includes but the family rejects (Geometric p = 0)
        point_key = (*sorted(params.items()), val)
        if (params == base and val == value) or point_key in seen:
            continue  # the anchor already sits there, or an earlier point did (discrete ends)
        seen.add(point_key)
        finite, partials = _judged_partials(anchor, params, val)
        case: dict = {
            "id": f"{prefix}{label}",
            "family": spec.family,
        }
        if spec.parametrization is not None:
            case["parametrization"] = spec.parametrization
        case["params"] = {k: _number(v, info[k].integer) for k, v in params.items()}
        case["value"] = _number(val, family.value.discrete)
        if spec.param_dtypes:
            case["param_dtypes"] = dict(spec.param_dtypes)
        if spec.value_dtype != "float":
            case["value_dtype"] = spec.value_dtype
        if spec.frameworks is not None:
            case["frameworks"] = list(spec.frameworks)
        if not finite or not partials:
            case["checks"] = list(VALUE_CHECKS)
        else:
            case["checks"] = [*VALUE_CHECKS, *GRADIENT_CHECKS]
            if len(partials) < len(anchor.differentiable_inputs):
                case["grad_wrt"] = partials
        case["description"] = f"generated from {anchor.file}::{spec.id}: {label.replace('-', ' ')}"
        case["tags"] = [EDGE_TAG, EXACT_TAG] if exact else [EDGE_TAG]
        out.append(case)
    return out


def _params_valid(
    family: reference.Family, params: dict[str, float], value: float, parametrization: str
) -> bool:
    with np.errstate(all="ignore"):
        return bool(np.all(family.params_valid(params, np.float64(value), parametrization)))


def _number(x: float, integer: bool) -> float | int:
    return int(x) if integer and float(x).is_integer() else float(x)


def _prefixes(anchors_: Sequence[Case]) -> list[str]:
    """Id prefixes that keep one file's generated ids apart: the family where a file anchors
    several, the parametrization where it anchors several of one family."""
    families = {a.family for a in anchors_}
    out = []
    for a in anchors_:
        parts = [PREFIX.rstrip("-")]
        if len(families) > 1:
            parts.append(a.family)
        if sum(b.family == a.family for b in anchors_) > 1:
            parts.append(a.parametrization)
        out.append("-".join(parts) + "-")
    return out


def generated(cases: Sequence[Case]) -> list[tuple[Case, dict]]:
    """Every generated case of the anchors among ``cases``, with the anchor it moved from."""
    found = anchors(cases)
    return [
        (anchor, case)
        for anchor, prefix in zip(found, _prefixes(found), strict=True)
        for case in edge_cases(anchor, prefix)
    ]


def edge_yaml(cases: Sequence[Case]) -> str:
    """The generated cases of the anchors among ``cases`` as one case file (paste-ready YAML);
    empty when none of them is an anchor."""
    return _as_yaml(generated(cases))


def _as_yaml(pairs: Sequence[tuple[Case, dict]]) -> str:
    if not pairs:
        return ""
    sources = ", ".join(dict.fromkeys(f"{a.file}::{a.spec.id}" for a, _ in pairs))
    header = (
        "# Edge cases generated by `conformance edges` from the oracle's domains and supports.\n"
        f"# Anchors: {sources}\n"
    )
    return header + yaml.safe_dump({"cases": [c for _, c in pairs]}, sort_keys=False, width=100)


def edge_file(cases: Sequence[Case], display: str) -> LoadedFile:
    """The generated cases of a loaded file, loaded as a case file of their own through the
    same loader (so they are validated like written ones), each placed at its anchor's line
    so reports point at the case it moved from."""
    pairs = generated(cases)
    if not pairs:
        return LoadedFile(display)
    loaded = load_case_text(_as_yaml(pairs), display)
    line_of = {c["id"]: a.line for a, c in pairs}
    loaded.cases = [dataclasses.replace(c, line=line_of.get(c.id, c.line)) for c in loaded.cases]
    return loaded
