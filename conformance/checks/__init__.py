"""The registry of checks, by name."""

from __future__ import annotations

from conformance.checks.base import Check, CheckResult
from conformance.checks.broadcast import BroadcastCheck
from conformance.checks.grad import GradCheck
from conformance.checks.log_prob import LogProbCheck
from conformance.checks.property import PropertyCheck
from conformance.checks.shapes import ShapesCheck
from conformance.checks.transforms import EffectCheck, JitCheck, VmapCheck

CHECKS: dict[str, Check] = {
    c.name: c
    for c in (
        ShapesCheck(),
        LogProbCheck(),
        GradCheck("grad"),
        GradCheck("grad_functional"),
        VmapCheck(),
        JitCheck(),
        EffectCheck("plate"),
        EffectCheck("scan"),
        EffectCheck("plate_in_scan"),
        BroadcastCheck(),
        PropertyCheck(),
    )
}

__all__ = ["CHECKS", "OPT_IN", "Check", "CheckResult"]

#: Checks that run only when asked for (``--property N`` turns on ``property``).
OPT_IN = frozenset({"property"})
