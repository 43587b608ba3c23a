"""``--quick``, the pull-request preset: each family × framework × check once, little compiled.

A quick run's cost is what it compiles. It keeps the first item of each family × framework ×
check, in every dtype except for :data:`QUICK_ONE_DTYPE`. Where items compile
(:meth:`Adapter.evaluates_compiled`), each family × framework keeps one transformation and one
sampling check, chosen by its family's name (:func:`chosen`). Edge cases exactly at an end keep
every item, or only values, shapes and gradients where items compile. Seed-bug cases, errors and
unsupported items are always kept. Each file is selected alone, in plan order, so the result is
deterministic and independent of the other files a run reads.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from conformance.check_names import CheckName
from conformance.plan.derived.edges import EXACT_TAG
from conformance.plan.specs import CheckSpec, ItemSpec

#: The tag that keeps a case's every item in a quick run: the cases of the seed bugs.
SEED_TAG = "seed"
#: The checks a quick run keeps in one dtype (the case's first): each calls the framework in
#: another way (a transformation, a broadcast variant, a calling context, op by op) whose bugs
#: are mostly about batching and dispatch, and each compiles programs of its own; the
#: methods (moments, entropy, cdf, icdf) are one item per family × framework, as the methods issue
#: asks, and ``kl`` one per KL file (p family) × framework: its items judge a gradient, which the
#: oracle takes by extrapolation. Values, shapes and gradients keep both dtypes.
QUICK_ONE_DTYPE = frozenset(
    {
        CheckName.EAGER,
        CheckName.BROADCAST,
        CheckName.VMAP,
        CheckName.JIT,
        CheckName.SCAN,
        CheckName.PLATE,
        CheckName.PLATE_IN_SCAN,
        CheckName.GRAD_FUNCTIONAL,
        CheckName.CONTEXT,
        CheckName.MOMENTS,
        CheckName.ENTROPY,
        CheckName.CDF,
        CheckName.ICDF,
        CheckName.KL,
    }
)
#: Where an item compiles, one of these per family × framework (in this order of choice).
TRANSFORMATIONS: tuple[CheckName, ...] = (
    CheckName.EAGER,
    CheckName.BROADCAST,
    CheckName.VMAP,
    CheckName.JIT,
    CheckName.PLATE,
    CheckName.SCAN,
    CheckName.PLATE_IN_SCAN,
    CheckName.GRAD_FUNCTIONAL,
)
#: Where an item compiles, one of these per family × framework.
SAMPLING: tuple[CheckName, ...] = (
    CheckName.SAMPLE_SHAPES,
    CheckName.SAMPLE_FIT,
    CheckName.RSAMPLE_GRAD,
)
#: The checks a compiled framework keeps of a generated edge case exactly at an end.
EXACT_EDGE_CHECKS = frozenset({CheckName.LOG_PROB, CheckName.SHAPES, CheckName.GRAD})


def chosen(family: str, offered: Sequence[CheckName]) -> CheckName:
    """The one of ``offered`` a family takes: by a hash of its name (stable across runs,
    Python builds and the other families a run reads)."""
    digest = hashlib.sha256(family.encode()).digest()
    return offered[int.from_bytes(digest[:8], "big") % len(offered)]


def _group(check: CheckName) -> tuple[CheckName, ...] | None:
    if check in TRANSFORMATIONS:
        return TRANSFORMATIONS
    if check in SAMPLING:
        return SAMPLING
    return None


def quick_selection(specs: list[ItemSpec]) -> list[ItemSpec]:
    """One case file's quick items (see the module's docstring), in plan order. ``specs`` are
    :mod:`conformance.plan.planner`'s specs; only its check specs are thinned."""
    checks = [s for s in specs if isinstance(s, CheckSpec)]
    offered: dict[tuple[str, str, tuple[CheckName, ...]], list[CheckName]] = {}
    for check in checks:
        group = _group(check.check.name)
        if group is not None and check.adapter.evaluates_compiled():
            names = offered.setdefault((check.case.family, check.adapter.name, group), [])
            if check.check.name not in names:
                names.append(check.check.name)
    seen: set[tuple[str, str, str, str]] = set()
    kept: list[ItemSpec] = []
    for spec in specs:
        if not isinstance(spec, CheckSpec):
            kept.append(spec)
            continue
        name, tags = spec.check.name, spec.case.spec.tags
        compiled = spec.adapter.evaluates_compiled()
        if SEED_TAG in tags:
            kept.append(spec)
            continue
        if EXACT_TAG in tags:
            if not compiled or name in EXACT_EDGE_CHECKS:
                kept.append(spec)
            continue
        group = _group(name) if compiled else None
        if group is not None:
            names = offered[(spec.case.family, spec.adapter.name, group)]
            if name != chosen(spec.case.family, sorted(names, key=group.index)):
                continue
        one_dtype = name in QUICK_ONE_DTYPE or group is not None
        key = (spec.case.family, spec.adapter.name, name, "" if one_dtype else spec.dtype)
        if key in seen:
            continue
        seen.add(key)
        kept.append(spec)
    return kept
