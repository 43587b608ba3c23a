"""The registry of checks, by name."""

from __future__ import annotations

from conformance.checks.base import Check, CheckResult
from conformance.checks.broadcast import BroadcastCheck
from conformance.checks.eager import EagerCheck
from conformance.checks.grad import GradCheck
from conformance.checks.log_prob import LogProbCheck
from conformance.checks.property import PropertyCheck
from conformance.checks.shapes import ShapesCheck
from conformance.checks.transforms import EffectCheck, JitCheck, VmapCheck
from conformance.operations import Operation

CHECKS: dict[str, Check] = {
    c.name: c
    for c in (
        ShapesCheck(),
        LogProbCheck(),
        GradCheck(Operation.GRAD),
        GradCheck(Operation.GRAD_FUNCTIONAL),
        VmapCheck(),
        JitCheck(),
        EagerCheck(),
        EffectCheck(Operation.PLATE),
        EffectCheck(Operation.SCAN),
        EffectCheck(Operation.PLATE_IN_SCAN),
        BroadcastCheck(),
        PropertyCheck(),
    )
}

__all__ = ["CHECKS", "OPT_IN", "Check", "CheckResult"]

#: Checks that run only when asked for (``--property N`` turns on ``property``).
OPT_IN = frozenset({"property"})

#: The ``check`` of items that run no check: a case that could not be loaded, and a family a
#: framework lacks (known-failure entries and filters may name them too).
LOAD_CHECK, UNSUPPORTED_CHECK = "load", "unsupported"
NON_CHECK_ITEMS = frozenset({LOAD_CHECK, UNSUPPORTED_CHECK})
