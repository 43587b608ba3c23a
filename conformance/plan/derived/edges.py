"""Edge cases generated from the oracle's domains and supports, since hand-written ones are uneven.

Each family's anchor (:func:`anchor_inputs`) moves one input at a time to an edge point. Array
inputs have edges of their own shape (:mod:`conformance.plan.derived.array_edges`). The output
is case-file YAML, read by the ordinary loader, so generated cases get the same validation,
ids, reports and reproducers. The oracle picks the partial derivatives each case judges: those
finite at that point. With ``--edges=bulk``, a family of scalars also gets values where the
density lives (:data:`BULK_TAG`) and pairs of inputs at their edges (:data:`PAIR_TAG`). These
stay opt-in until NumPyro's failures there are triaged. The points: docs/case-format.md,
"Generated edge cases".
"""

from __future__ import annotations

import dataclasses
import math
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import yaml

from conformance import reference
from conformance.cases.case_model import EDGE_ID_PREFIX
from conformance.cases.loader import Case, LoadedFile, load_case_text
from conformance.check_names import CheckName
from conformance.expect.materialize import CaseInputError, float64_inputs
from conformance.plan.derived import array_edges, dtype_edges
from conformance.reference.domains import Interval, interval

#: The id prefix of every generated edge case (``edge-<input>-<point>``), and its tag.
PREFIX = EDGE_ID_PREFIX
EDGE_TAG = "edge"
#: The tag of the generated cases whose every moved input sits exactly on a point (a closed
#: end of a domain, an end of the support, a form change), not near one: the quick preset
#: keeps their items (a compiling framework's values, shapes and gradients only:
#: :func:`conformance.plan.quick.quick_selection`).
EXACT_TAG = "edge-exact"
#: What a generated case checks: shapes, values and gradients (the ``eager`` check follows
#: them), not batch semantics (one point has none; the written cases cover them).
VALUE_CHECKS = [CheckName.SHAPES, CheckName.LOG_PROB]
GRADIENT_CHECKS = [CheckName.GRAD, CheckName.GRAD_FUNCTIONAL]
#: The tag of the cases at float32's own edges (:mod:`conformance.plan.derived.dtype_edges`), which
#: run in float32 only and check values and one gradient path: a shape or a second gradient
#: API sees nothing there that the other edges miss.
DTYPE_TAG = "edge-float32"
DTYPE_VALUE_CHECKS = [CheckName.LOG_PROB]
DTYPE_GRADIENT_CHECKS = [CheckName.GRAD]
#: How far "just inside" and "just outside" sit from an end: representable in float32 next to
#: the ends used here (0 and 1), and far enough that float32 rounding never moves a point
#: across its end.
NEAR = 1e-6
#: A scale or shape parameter far from 1 in both directions.
TINY, HUGE = 1e-6, 1e6
#: A real-valued parameter (a location, a bound) far from 0, and how far all of a family's
#: real-valued parameters move together (their ``shift``): large against every anchor's
#: numbers, yet with float32 steps well below a unit scale (1e6's spacing is 1/16).
LARGE = 1e6
#: The tag of the generated cases whose value sits where the density lives at the moved
#: parameters (its quantiles there), not at the anchor's value.
BULK_TAG = "edge-bulk"
#: Which quantiles of the moved law a bulk case's value takes, and how many of the oracle's
#: draws they are read from (an empirical quantile is a draw: an integer for a count).
BULK_QUANTILES = (0.1, 0.5, 0.9)
BULK_DRAWS = 2001
#: The tag of the generated cases with two inputs at their edges together (a pairwise design,
#: on request with the bulk): two parameters at their extremes with the value at the median
#: there, or one parameter at an extreme with the value at an exact end of its support.
PAIR_TAG = "edge-pair"
#: What a bulk or pair case checks: its value and one gradient path (the eager check follows them);
#: a scalar's shapes and the second gradient API see nothing here the other edges miss.
BULK_VALUE_CHECKS = [CheckName.LOG_PROB]
BULK_GRADIENT_CHECKS = [CheckName.GRAD]


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
    """A label for a number in a case id: ``0``, ``1``, ``1e-06``, ``minus-1`` (a bare minus
    sign would read as a separator: ``at--1``, "at  1" in the description)."""
    text = f"{x:g}".replace("+", "")
    return f"minus-{text[1:]}" if text.startswith("-") else text


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


def magnitude_points(domain: str) -> list[EdgePoint]:
    """A real-valued parameter's large magnitudes: :data:`LARGE` (past the lower end, if any)
    on each unbounded side of a domain that :func:`parameter_points` leaves there (it takes
    a tiny and a huge value of a half-line from 0 already; a count stays out)."""
    if real_line(domain):
        return [EdgePoint("large", LARGE), EdgePoint("large-negative", -LARGE)]
    iv = interval(domain)
    if iv is None or iv.integer or math.isfinite(iv.hi) or iv.lo == 0.0:
        return []
    return [EdgePoint("large", max(LARGE, iv.lo + LARGE))]


def real_line(domain: str) -> bool:
    """Whether a parameter may take any real number (a location; the ends of a bound)."""
    return domain == "real"


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


def anchor_inputs(case: Case) -> tuple[dict[str, np.ndarray], np.ndarray] | None:
    """The inputs of a plain case to move from, or None if it is none (a KL case is none):
    every check on, a finite log_prob at every element, and

    - for a family of scalars, literal scalar parameters and value;
    - for a family with an array input, parameters without batch dimensions (literal or
      generated) and a value of one event (or several: then only the parameters move).
    """
    spec = case.spec
    if case.variant or spec.id.startswith(PREFIX) or spec.checks or spec.grad_wrt:
        return None
    if case.kl_q is not None:  # a KL case: its edges are written cases of its own file
        return None
    family = reference.get_family(spec.family)
    info = family.params(case.parametrization)
    if _all_scalar(family, case.parametrization):
        scalars = {k: _scalar(v) for k, v in spec.params.items()}
        params = {k: v for k, v in scalars.items() if v is not None}
        value = _scalar(spec.value)
        if value is None or len(params) < len(scalars):
            return None
        arrays = {k: _point(v) for k, v in params.items()}, _point(value)
    else:
        try:
            arrays = float64_inputs(case)
        except CaseInputError:
            return None
        if any(np.ndim(a) != info[k].event_rank for k, a in arrays[0].items()):
            return None
        if np.ndim(arrays[1]) < family.value.event_rank:
            return None
    with np.errstate(all="ignore"):
        try:
            lp = family.log_prob(*arrays, case.parametrization)
        except Exception:
            return None
    return arrays if bool(np.all(np.isfinite(lp))) else None


def _point(x: float) -> np.ndarray:
    """One scalar input, as the oracle reads every input: a float64 array (0-d)."""
    return np.asarray(x, dtype=np.float64)


def _all_scalar(family: reference.Family, parametrization: str) -> bool:
    info = family.params(parametrization)
    return family.value.event_rank == 0 and all(p.event_rank == 0 for p in info.values())


def is_anchor(case: Case) -> bool:
    """Whether generated edge cases move from this case (:func:`anchor_inputs`)."""
    return anchor_inputs(case) is not None


def anchors(cases: Iterable[Case]) -> list[Case]:
    """The first anchor of each (family, parametrization), in file order."""
    found: dict[tuple[str, str], Case] = {}
    for case in cases:
        key = (case.family, case.parametrization)
        if key not in found and is_anchor(case):
            found[key] = case
    return list(found.values())


def _judged_partials(
    anchor: Case, params: dict[str, np.ndarray], value: np.ndarray, limit: float = math.inf
) -> tuple[bool, list[str]]:
    """Whether log_prob is finite at the point, and which of the anchor's differentiable
    inputs have a partial derivative the oracle gives there as a finite number; ``limit``:
    the largest magnitude that counts as finite (float32's, where the case runs in float32
    only: beyond it the dtype's answer is an infinity, whose derivative means nothing)."""
    family = reference.get_family(anchor.family)

    def finite(x: np.ndarray) -> bool:
        return bool(np.all(np.isfinite(x) & (np.abs(x) <= limit)))

    with np.errstate(all="ignore"):
        evaluation = family.evaluate(params, value, anchor.parametrization)
        if not finite(evaluation.log_prob):
            return False, []
        judged = {k for k, g in evaluation.gradients.items() if finite(g)}
    return True, [k for k in anchor.differentiable_inputs if k in judged]


#: A move: its label, the parameters it sets, the value it sets (None: the anchor's), and
#: whether every input it moves sits exactly on its point.
Move = tuple[str, dict[str, np.ndarray], "np.ndarray | None", bool]


def _moves(
    anchor: Case, base: dict[str, np.ndarray], value: np.ndarray, bulk: bool = False
) -> list[Move]:
    """Every edge point of one anchor: each parameter alone, the value alone, and each point
    where the density changes form together with each exact end of the value's support;
    with ``bulk``, real-valued parameters at large magnitudes too (:func:`magnitude_points`)."""
    family = reference.get_family(anchor.family)
    info = family.params(anchor.parametrization)
    moves: list[Move] = []
    forms: list[tuple[str, dict[str, np.ndarray]]] = []
    for name, pinfo in info.items():
        if pinfo.static:
            continue
        changes = [EdgePoint(f"at-{_fmt(x)}", x) for x in pinfo.form_changes]
        if pinfo.event_rank == 0:
            large = magnitude_points(pinfo.domain) if bulk else []
            points = [*parameter_points(pinfo.domain), *large, *changes]
            moves += [(f"{name}-{p.label}", {name: _point(p.value)}, None, p.exact) for p in points]
            forms += [(f"{name}-{p.label}", {name: _point(p.value)}) for p in changes]
            continue
        array_points = array_edges.parameter_points(pinfo.domain, base[name], parameter_points)
        moves += [(f"{name}-{p.label}", {name: p.array}, None, p.exact) for p in array_points]
        for p in changes:
            moved = array_edges.with_first(base[name], p.value)
            moves.append((f"{name}-first-{p.label}", {name: moved}, None, True))
            forms.append((f"{name}-first-{p.label}", {name: moved}))
    ends: list[tuple[str, np.ndarray]] = []
    if np.ndim(value) == 0:
        points = value_points(
            family.value.support, *family.support_ends(base, anchor.parametrization)
        )
        moves += [(f"value-{p.label}", {}, _point(p.value), p.exact) for p in points]
        ends = [(p.label, _point(p.value)) for p in points if p.exact]
    elif np.ndim(value) == family.value.event_rank:
        vpoints = array_edges.value_points(family.value.support, family.value.discrete, value)
        moves += [(f"value-{p.label}", {}, p.array, p.exact) for p in vpoints]
        ends = [(p.label, p.array) for p in vpoints if p.exact]
    # Where the density changes form, it does so at the support's ends: both at once.
    moves += [
        (f"{label}-value-{end}", moved, end_value, True)
        for label, moved in forms
        for end, end_value in ends
    ]
    return moves


def _extremes(
    family: reference.Family, parametrization: str, value: np.ndarray
) -> dict[str, list[EdgePoint]]:
    """Each non-static parameter's extreme points (:func:`parameter_points` and
    :func:`magnitude_points`) where the bulk and the pairs apply: a family of scalars with
    draws in the oracle (none otherwise)."""
    if np.ndim(value) != 0 or family.no_draws or not _all_scalar(family, parametrization):
        return {}
    return {
        name: [*parameter_points(pinfo.domain), *magnitude_points(pinfo.domain)]
        for name, pinfo in family.params(parametrization).items()
        if not pinfo.static
    }


def _bulk_moves(anchor: Case, base: dict[str, np.ndarray], value: np.ndarray) -> list[Move]:
    """Where the density lives at each moved parameter of a family of scalars: every edge
    point and large magnitude of each parameter alone, and all real-valued parameters
    shifted by ±:data:`LARGE` together, each with the value at the :data:`BULK_QUANTILES` of
    the law there. Families with an array input, or without draws in the oracle, have none."""
    family = reference.get_family(anchor.family)
    par = anchor.parametrization
    extremes = _extremes(family, par, value)
    settings = [
        (f"{name}-{p.label}", {name: _point(p.value)})
        for name, points in extremes.items()
        for p in points
    ]
    info = family.params(par)
    real = [name for name in extremes if real_line(info[name].domain)]
    if real:
        settings += [
            (label, {n: _point(float(base[n]) + offset) for n in real})
            for label, offset in (("shift-up", LARGE), ("shift-down", -LARGE))
        ]
    moves: list[Move] = []
    for label, moved in settings:
        params = {**base, **moved}
        if not _params_valid(family, params, value, par):
            continue
        for q, x in _quantiles(family, params, par, f"{anchor.family}|{par}|{label}"):
            moves.append((f"{label}-value-q{round(100 * q)}", moved, _point(x), False))
    return moves


def _pair_moves(anchor: Case, base: dict[str, np.ndarray], value: np.ndarray) -> list[Move]:
    """Two inputs of a family of scalars at their edges together: every pair of parameters at
    every pair of their extreme points (:func:`parameter_points`, :func:`magnitude_points`)
    with the value at the median of the law there, and each parameter at each of its points
    with the value at each exact end of the support those parameters give."""
    family = reference.get_family(anchor.family)
    par = anchor.parametrization
    points = _extremes(family, par, value)
    names = [n for n in points if points[n]]
    moves: list[Move] = []
    for i, first in enumerate(names):
        for second in names[i + 1 :]:
            for p in points[first]:
                for q in points[second]:
                    label = f"{first}-{p.label}-{second}-{q.label}"
                    moved = {first: _point(p.value), second: _point(q.value)}
                    params = {**base, **moved}
                    if not _params_valid(family, params, value, par):
                        continue
                    seed = f"{anchor.family}|{par}|{label}"
                    median = dict(_quantiles(family, params, par, seed)).get(0.5)
                    if median is not None:
                        moves.append((f"{label}-value-q50", moved, _point(median), False))
    support = family.value.support
    for name in names:
        for p in points[name]:
            moved = {name: _point(p.value)}
            params = {**base, **moved}
            if not _params_valid(family, params, value, par):
                continue
            for end in value_points(support, *family.support_ends(params, par)):
                if end.exact:
                    label = f"{name}-{p.label}-value-{end.label}"
                    moves.append((label, moved, _point(end.value), False))
    return moves


def _quantiles(
    family: reference.Family, params: dict[str, np.ndarray], parametrization: str, seed: str
) -> list[tuple[float, float]]:
    """The :data:`BULK_QUANTILES` of the law at ``params``, as (quantile, draw) from
    :data:`BULK_DRAWS` of the oracle's draws (seeded by ``seed``: the same in every process);
    none where the oracle cannot draw there (most draws NaN). A quantile that is infinite, or
    that rounded onto an open end of the support (a sigmoid of loc = 1e6 is 1.0) is not where
    the density lives, nor a valid value: it is left out."""
    rng = np.random.default_rng(zlib.crc32(seed.encode()))
    try:
        with np.errstate(all="ignore"):
            draws = np.asarray(family.sample(params, (BULK_DRAWS,), rng, parametrization), float)
    except (ValueError, ArithmeticError, reference.OracleError):
        return []
    # A draw that overflowed to ±inf still sits above (below) every finite one: dropping it
    # would move every quantile (a LogNormal of scale 1e6 overflows half its draws). NaN is a
    # draw the oracle could not make.
    draws = draws[~np.isnan(draws)]
    if draws.size * 2 < BULK_DRAWS:
        return []
    found = np.quantile(draws, BULK_QUANTILES, method="inverted_cdf")
    with np.errstate(all="ignore"):
        inside = np.isfinite(found) & np.asarray(
            family.in_support(params, found, parametrization), bool
        )
    return [(q, float(x)) for q, x, ok in zip(BULK_QUANTILES, found, inside, strict=True) if ok]


def _dtype_moves(anchor: Case, base: dict[str, np.ndarray], value: np.ndarray) -> list[Move]:
    """The float32 edges of one anchor's scalar inputs (:mod:`conformance.plan.derived.dtype_edges`):
    each parameter alone, then the value. Array inputs have none here."""
    family = reference.get_family(anchor.family)
    par = anchor.parametrization
    moves: list[Move] = []
    for name, pinfo in family.params(par).items():
        if pinfo.static or pinfo.event_rank != 0:
            continue
        moves += [
            (f"{name}-{p.label}", {name: _point(p.value)}, None, False)
            for p in dtype_edges.range_points(pinfo.domain)
        ]
    if np.ndim(value) != 0 or family.value.event_rank != 0:
        return moves
    lower, upper = family.support_ends(base, par)
    support = family.value.support
    if lower is None and upper is None:
        points = dtype_edges.range_points(support)
    else:  # an end the parameters set is no float32 limit; an unbounded one still is
        points = [
            p for p in dtype_edges.range_points(support) if p.end == "upper" and upper is None
        ]

    def log_prob(x: float) -> float:
        with np.errstate(all="ignore"):
            return float(family.log_prob(base, _point(x), par))

    points += dtype_edges.underflow_points(
        log_prob, float(value), support, family.value.discrete, lower, upper
    )
    moves += [(f"value-{p.label}", {}, _point(p.value), False) for p in points]
    return moves


def edge_cases(anchor: Case, prefix: str = PREFIX, bulk: bool = False) -> list[dict]:
    """The generated cases of one anchor, as case-file mappings; ids start with ``prefix``;
    ``bulk``: with the large magnitudes and the values where the density lives."""
    spec = anchor.spec
    family = reference.get_family(spec.family)
    info = family.params(anchor.parametrization)
    inputs = anchor_inputs(anchor)
    assert inputs is not None, f"{anchor.id} is not an anchor"
    base, value = inputs
    out: list[dict] = []
    seen: set[bytes] = set()
    every = [
        *((m, EDGE_TAG) for m in _moves(anchor, base, value, bulk)),
        *((m, DTYPE_TAG) for m in _dtype_moves(anchor, base, value)),
        *((m, BULK_TAG) for m in (_bulk_moves(anchor, base, value) if bulk else [])),
        *((m, PAIR_TAG) for m in (_pair_moves(anchor, base, value) if bulk else [])),
    ]
    for (label, moved, moved_value, exact), kind in every:
        float32_only = kind == DTYPE_TAG
        params = {**base, **moved}
        val = value if moved_value is None else moved_value
        if not _params_valid(family, params, val, anchor.parametrization):
            continue  # an end the domain's name includes but the family rejects (Geometric p = 0)
        point_key = _key(params, val) + (b"f32" if float32_only else b"")
        if point_key == _key(base, value) or point_key in seen:
            continue  # the anchor already sits there, or an earlier point did (discrete ends)
        limit = dtype_edges.LARGEST if float32_only else math.inf
        finite, partials = _judged_partials(anchor, params, val, limit)
        if kind in (DTYPE_TAG, BULK_TAG) and not finite:
            # float32's answer is an infinity there: no float32 arithmetic is tested; a draw
            # at a support's end (a degenerate law) is no bulk: the plain edges have it.
            continue
        seen.add(point_key)
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
        if float32_only:
            case["dtypes"] = [dtype_edges.DTYPE]
        if spec.frameworks is not None:
            case["frameworks"] = list(spec.frameworks)
        values, gradients = {
            EDGE_TAG: (VALUE_CHECKS, GRADIENT_CHECKS),
            DTYPE_TAG: (DTYPE_VALUE_CHECKS, DTYPE_GRADIENT_CHECKS),
            BULK_TAG: (BULK_VALUE_CHECKS, BULK_GRADIENT_CHECKS),
            PAIR_TAG: (BULK_VALUE_CHECKS, BULK_GRADIENT_CHECKS),
        }[kind]
        # Plain strings: the case is written as YAML (a str enum is no YAML scalar).
        if not finite or not partials or (kind != EDGE_TAG and _on_a_kink(family, params, val)):
            case["checks"] = [c.value for c in values]
        else:
            case["checks"] = [c.value for c in (*values, *gradients)]
            if len(partials) < len(anchor.differentiable_inputs):
                case["grad_wrt"] = partials
        case["description"] = f"generated from {anchor.file}::{spec.id}: {label.replace('-', ' ')}"
        tags = [EDGE_TAG, EXACT_TAG] if exact else [EDGE_TAG]
        case["tags"] = tags if kind == EDGE_TAG else [*tags, kind]
        out.append(case)
    return out


def _on_a_kink(family: reference.Family, params: dict[str, np.ndarray], value: np.ndarray) -> bool:
    """Whether the value sits, in float64 or once rounded to float32, on a kink of the density
    (Laplace's median is its ``loc``, which float32 reaches from a draw 2e-8 away): no
    derivative to compare there, so the point keeps its value checks only, as a case at a kink
    does (``laplace.yaml::at-loc``)."""
    x = np.asarray(value, np.float64)
    return any(
        bool(np.any((x == params[p]) | (x.astype(np.float32) == np.float32(params[p]))))
        for p in family.value.kink_at
    )


def _key(params: dict[str, np.ndarray], value: np.ndarray) -> bytes:
    arrays = [np.asarray(params[k], np.float64) for k in sorted(params)]
    return b"|".join(a.tobytes() for a in [*arrays, np.asarray(value, np.float64)])


def _params_valid(
    family: reference.Family, params: dict[str, np.ndarray], value: np.ndarray, parametrization: str
) -> bool:
    with np.errstate(all="ignore"):
        return bool(np.all(family.params_valid(params, value, parametrization)))


def _number(x: np.ndarray | float, integer: bool) -> object:
    """An input as case-file YAML: a number or nested lists, integers where the input is."""
    array = np.asarray(x, dtype=np.float64)
    # Only where int64 holds it exactly: a float32 edge of a real-valued parameter the oracle
    # never differentiates (Delta's atom, 3.4e38) is integral but no int64.
    if integer and np.all((array == np.round(array)) & (np.abs(array) < 2.0**53)):
        return array.astype(np.int64).tolist()
    return array.tolist()


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


def generated(
    cases: Sequence[Case], selects: Callable[[str], bool] | None = None, bulk: bool = False
) -> list[tuple[Case, dict]]:
    """Every generated case of the anchors among ``cases``, with the anchor it moved from;
    with ``selects``, only those of the families it selects (their ids are the same either
    way: the prefixes come from every anchor of the file); ``bulk``: see :func:`edge_cases`."""
    found = anchors(cases)
    return [
        (anchor, case)
        for anchor, prefix in zip(found, _prefixes(found), strict=True)
        if selects is None or selects(anchor.family)
        for case in edge_cases(anchor, prefix, bulk)
    ]


def edge_yaml(cases: Sequence[Case], bulk: bool = False) -> str:
    """The generated cases of the anchors among ``cases`` as one case file (paste-ready YAML);
    empty when none of them is an anchor; ``bulk``: see :func:`edge_cases`."""
    return _as_yaml(generated(cases, bulk=bulk))


#: libyaml's emitter where PyYAML has it: the same text as the pure-Python one for every
#: generated file (checked on all 96), in a fifth of the time, once per file and worker.
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def _as_yaml(pairs: Sequence[tuple[Case, dict]]) -> str:
    if not pairs:
        return ""
    sources = ", ".join(dict.fromkeys(f"{a.file}::{a.spec.id}" for a, _ in pairs))
    header = (
        "# Edge cases generated by `conformance edges` from the oracle's domains and supports.\n"
        f"# Anchors: {sources}\n"
    )
    data = {"cases": [c for _, c in pairs]}
    return header + yaml.dump(data, Dumper=_DUMPER, sort_keys=False, width=100)


def edge_file(
    cases: Sequence[Case],
    display: str,
    selects: Callable[[str], bool] | None = None,
    bulk: bool = False,
) -> LoadedFile:
    """The generated cases of a loaded file, loaded as a case file of their own through the
    same loader (so they are validated like written ones), each placed at its anchor's line
    so reports point at the case it moved from; ``selects``, ``bulk``: see :func:`generated`."""
    pairs = generated(cases, selects, bulk)
    if not pairs:
        return LoadedFile(display)
    loaded = load_case_text(_as_yaml(pairs), display)
    line_of = {c["id"]: a.line for a, c in pairs}
    loaded.cases = [dataclasses.replace(c, line=line_of.get(c.id, c.line)) for c in loaded.cases]
    return loaded
