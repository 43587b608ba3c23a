"""The registry of checks, by name."""

from __future__ import annotations

from conformance.check_names import NON_CHECK_ITEMS, CheckName
from conformance.checks.base import Check, CheckResult
from conformance.checks.broadcast import BroadcastCheck
from conformance.checks.cdf import CdfCheck
from conformance.checks.context import ContextCheck
from conformance.checks.eager import EagerCheck
from conformance.checks.entropy import EntropyCheck
from conformance.checks.grad import GradCheck
from conformance.checks.icdf import IcdfCheck
from conformance.checks.kl import KLCheck
from conformance.checks.log_prob import LogProbCheck
from conformance.checks.moments import MomentsCheck
from conformance.checks.property import PropertyCheck
from conformance.checks.rsample_grad import RsampleGradCheck
from conformance.checks.sample_fit import SampleFitCheck
from conformance.checks.sample_shapes import SampleShapesCheck
from conformance.checks.shapes import ShapesCheck
from conformance.checks.transforms import EffectCheck, JitCheck, VmapCheck
from conformance.operations import Operation


def _registry(*checks: Check) -> dict[CheckName, Check]:
    """The checks by name; a name that is no :class:`CheckName` member is refused here, at
    import, not when an item or a known-failure entry first names it."""
    for check in checks:
        if not isinstance(check.name, CheckName):
            raise TypeError(
                f"check {type(check).__name__} is named {check.name!r}, not a CheckName: "
                "declare it in conformance/check_names.py"
            )
    return {check.name: check for check in checks}


CHECKS: dict[CheckName, Check] = _registry(
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
    SampleShapesCheck(),
    SampleFitCheck(),
    RsampleGradCheck(),
    ContextCheck(),
    MomentsCheck(),
    EntropyCheck(),
    CdfCheck(),
    IcdfCheck(),
    KLCheck(),
)

__all__ = ["CHECKS", "NON_CHECK_ITEMS", "OPT_IN", "Check", "CheckName", "CheckResult"]

#: Checks that run only when asked for: ``--property N`` turns on ``property``, and ``--check``
#: naming one exactly turns it on. The methods' checks stay opt-in until what they find on the
#: pinned releases is triaged (docs/findings/methods.md).
OPT_IN = frozenset(
    {CheckName.PROPERTY, CheckName.MOMENTS, CheckName.ENTROPY, CheckName.CDF, CheckName.ICDF}
)
