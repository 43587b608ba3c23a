"""The rsample_grad check: which mechanism judges which parameter, and the item's script.

Each differentiable parameter is judged draw by draw where a number is right for one draw's
derivative (:mod:`.by_draw`, :mod:`.vector_map`), in expectation where only a mean is
(:mod:`.in_expectation`), or not at all, with why. Where a judgement fails, the item's script
is the one that mechanism writes; where the pathwise call raised, the call's (:mod:`.call`).
"""

from __future__ import annotations

import contextlib

from conformance.adapters.base import Adapter
from conformance.adapters.capabilities import PathwiseDraws
from conformance.answers.draws import BoundedTests
from conformance.check_names import CheckName
from conformance.checks.base import Check, CheckResult, Reproducer
from conformance.checks.draws import has_rsample
from conformance.checks.rsample_grad.by_draw import by_draw_reproducer, judged_by_draw
from conformance.checks.rsample_grad.call import raised_reproducer
from conformance.checks.rsample_grad.evaluation import Evaluation
from conformance.checks.rsample_grad.in_expectation import (
    expectation_reproducer,
    judged_in_expectation,
)
from conformance.checks.rsample_grad.vector_map import coordinate_weights
from conformance.checks.subject import FrameworkError, Subject
from conformance.operations import Operation


class RsampleGradCheck(Check):
    name = CheckName.RSAMPLE_GRAD
    _last: Evaluation | None = None
    operation = Operation.SAMPLE
    description = (
        "pathwise gradients of rsample draws against the implicit-reparameterisation identity"
    )
    draws_only = True
    single_dtype = "float32"
    law_kinds = frozenset({"cdf"})
    pathwise_maps = True
    continuous_draws = True  # a discrete law's draws (Delta's point mass) have no derivative

    def unsupported_by(
        self, adapter: Adapter, opted_in: frozenset[Operation] = frozenset()
    ) -> str | None:
        if not isinstance(adapter, PathwiseDraws):
            return f"{adapter.name} offers no pathwise derivatives of draws"
        return super().unsupported_by(adapter, opted_in)

    def _names(self, subject: Subject) -> tuple[list[str], dict[str, str]]:
        """The parameters judged, and those not judged, with why: the adapter's exempt ones,
        and a multivariate family's whose derivative its declared map does not give."""
        adapter = subject.adapter
        assert isinstance(adapter, PathwiseDraws)
        family = subject.law.facts
        exempt = dict(adapter.pathwise_exempt(family.name))
        if family.event_rank > 0:
            exempt.update(family.pathwise_without)
        names = [k for k in subject.case.differentiable_parameters if k not in exempt]
        return names, exempt

    def evaluate(self, subject: Subject) -> CheckResult:
        names, exempt = self._names(subject)
        if not has_rsample(subject):
            return CheckResult(True, skip_reason=f"{subject.adapter.name} has no rsample here")
        family = subject.law.facts
        multivariate = family.event_rank > 0
        # A vector sampler of the adapter's own (GPyTorch's root decompositions) follows no map
        # the oracle declares: its derivatives agree with any map's only in expectation.
        own_map = getattr(subject.adapter, "pathwise_own_map", "") if multivariate else ""
        if own_map and not family.has_pathwise_moments:
            return CheckResult(True, skip_reason=own_map)
        # Judged in expectation (pathwise_moments): every parameter of a multivariate family
        # no declared map reads the noise back for (or whose adapter draws by a map of its
        # own), and the exempt parameters (several noises) of a family whose draws' moments
        # the oracle knows.
        if multivariate and (own_map or not family.has_pathwise):
            expected, names = names, []
        elif family.has_pathwise_moments or family.has_bounded_pathwise:
            differentiable = subject.case.differentiable_parameters
            expected = [k for k in exempt if k in differentiable]
        else:
            expected = []
        unjudged = ""
        bounded: BoundedTests | None = None
        if expected and not family.has_pathwise_moments:  # no moments: bounded g instead
            bounded = subject.law.bounded_pathwise(
                coordinate_weights(subject), tuple(subject.expected.batch_shape), expected
            )
            unjudged = bounded.unjudged
        elif expected:
            unjudged = subject.law.moments_unjudged()
        if unjudged:
            expected = []
        # Why each parameter judged in expectation is not judged draw by draw (several noises).
        because = {k: v for k, v in exempt.items() if k in expected}
        exempt = {k: v for k, v in exempt.items() if k not in expected}
        if not names and not expected:
            why = (
                f"not judged in expectation: {unjudged}"
                if unjudged
                else (f"no parameter judged draw by draw (exempt: {exempt})")
            )
            return CheckResult(True, skip_reason=why)
        info = family.parameters
        if shaped := [k for k, p in info.items() if p.shape_only]:
            # ExpandedDistribution's batch is expand_to's shape: parameters copied per draw,
            # (n, *batch), cannot expand to it, so the per-draw derivatives cannot be asked for.
            return CheckResult(
                True,
                skip_reason=f"{', '.join(shaped)} sets the batch by its shape: the parameters "
                "cannot be copied per draw against it",
            )
        adapter = subject.adapter
        if multivariate and not getattr(adapter, "pathwise_event_draws", False):
            why = getattr(adapter, "pathwise_event_note", "") or (
                f"{adapter.name}'s pathwise draws copy parameters per draw for univariate "
                "draws only"
            )
            return CheckResult(True, skip_reason=why)
        # What a univariate item's script would embed, kept for its reproducer.
        last = self._last = Evaluation(subject, None if multivariate else {})
        try:
            return self._judged(subject, names, exempt, expected, because, unjudged, bounded)
        except FrameworkError:
            last.raised = True  # by the call last made: its script makes it again
            raise

    def _judged(
        self,
        subject: Subject,
        names: list[str],
        exempt: dict[str, str],
        expected: list[str],
        because: dict[str, str],
        unjudged: str,
        bounded: BoundedTests | None,
    ) -> CheckResult:
        """``names`` judged draw by draw, then ``expected`` in expectation."""
        last = self._last
        assert last is not None
        result = judged_by_draw(self, subject, names, exempt, last) if names else None
        last.by_draw_failed = result is not None and not result.passed
        if result is not None and not result.passed:
            return result
        if result is not None and unjudged:
            result.metrics["not_judged_in_expectation"] = unjudged
        if expected:
            judged = judged_in_expectation(self, subject, expected, exempt, last, bounded)
            if because:
                judged.metrics["not_by_draw_because"] = because
            last.in_expectation_failed = not judged.passed
            if result is None or not judged.passed:
                return judged
            result.metrics["in_expectation"] = judged.metrics
        assert result is not None
        return result

    def reproducer(self, subject: Subject) -> Reproducer | None:
        """The item's script, by how it was judged: its draws held to the identity's
        derivatives at the item's own draws (:func:`.by_draw.by_draw_reproducer`), or, where
        the item failed in expectation, the means of its tests' terms to the oracle's
        (:func:`.in_expectation.expectation_reproducer`). Where the draws raised, the call
        that raised, vector draws included (:func:`.call.raised_reproducer`); otherwise
        univariate draws only (a declared map's derivatives and a vector's copies per draw
        need the oracle's structure)."""
        names, _ = self._names(subject)
        if self._last is None or self._last.subject is not subject:  # evaluate it again
            # A raise is recorded: the script's draws raise as the item's did.
            with subject.adapter.precision(subject.dtype), contextlib.suppress(FrameworkError):
                self.evaluate(subject)
        last = self._last
        if last is None or last.subject is not subject:
            return None  # skipped before any draw
        if last.raised and last.call is not None:
            return raised_reproducer(self, subject, last.call)
        kept = last.kept
        if kept is None:
            return None  # a vector draw, or skipped before any draw
        if last.in_expectation_failed and not last.by_draw_failed:
            # Judged in expectation: the oracle's expected means embedded (a univariate draw;
            # not where rsample((n,))'s summed gradient alone failed, which needs the
            # parameters' broadcast bookkeeping).
            expectation = last.expectation
            if expectation is None or not expectation["script_sees"]:
                return None
            return expectation_reproducer(self, subject, expectation)
        if not names or "draws" not in kept:
            return None  # the draws' shape failed: sample_shapes' script shows it
        return by_draw_reproducer(self, subject, names, kept)
