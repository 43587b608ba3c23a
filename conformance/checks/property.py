"""Property-based batch shapes (hypothesis), opt-in with ``--property N``.

From each case, hypothesis draws a batch shape per parameter and one for the value, jointly
broadcastable (as TFP's testlib does), bounded to 3 dims of size ≤ 3 each; each array keeps the
case's event shape, and its elements are picked from the case's own (valid) elements. The
value is drawn from the oracle. Shapes and log_prob are checked as usual. On a failure
hypothesis shrinks to a minimal failing shape, which the failure message gives as a case in
YAML, ready to paste into ``cases/``.
"""

from __future__ import annotations

from conformance.check_names import CheckName
from conformance.checks.base import Check, CheckResult
from conformance.checks.log_prob import LogProbCheck
from conformance.checks.shapes import ShapesCheck
from conformance.checks.subject import FrameworkError, Subject
from conformance.kinds import Kind

MAX_DIMS = 3
MAX_SIDE = 3


class PropertyFailure(AssertionError):
    pass


class PropertyCheck(Check):
    name = CheckName.PROPERTY
    description = "hypothesis-drawn broadcastable batch shapes, shrunk to a minimal failure"

    def evaluate(self, subject: Subject) -> CheckResult:
        # Imported here: hypothesis costs ~0.3 s to import, and property mode is opt-in.
        from hypothesis import HealthCheck, Phase, given, settings
        from hypothesis.extra.numpy import mutually_broadcastable_shapes

        if not subject.expected.all_valid:
            return CheckResult(True, skip_reason="property mode runs on cases with valid inputs")
        arrays = subject.expectations.array_params
        parts = (ShapesCheck(), LogProbCheck())
        tried: list[int] = [0]
        failing: dict = {}

        strategy = mutually_broadcastable_shapes(
            num_shapes=len(arrays) + 1, max_dims=MAX_DIMS, min_side=1, max_side=MAX_SIDE
        )

        @settings(
            max_examples=max(subject.property_examples, 1),
            deadline=None,
            database=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
            phases=(Phase.generate, Phase.shrink),
        )
        @given(shapes=strategy)
        def prop(shapes) -> None:
            tried[0] += 1
            sub = subject.derived(shapes.input_shapes)
            for part in parts:
                try:
                    result = part.evaluate(sub)
                except FrameworkError as exc:
                    result = part.fail(sub, exc.kind, str(exc))
                if not result.passed:
                    failing.update(subject=sub, result=result, shapes=shapes.input_shapes)
                    raise PropertyFailure(result.message)

        try:
            prop()
        except PropertyFailure:
            result = failing["result"]
            snippet = failing["subject"].expectations.case_yaml(subject.adapter.name)
            metrics = {
                "examples_tried": tried[0],
                "minimal_shapes": [list(s) for s in failing["shapes"]],
                "minimal_case_yaml": snippet,
            }
            detail = (
                f"hypothesis found a failing batch-shape combination after {tried[0]} calls and "
                f"shrank it to {dict(zip([*arrays, 'value'], failing['shapes'], strict=True))}:\n"
                f"  {result.message.strip()}\n  minimal case, ready to paste into cases/:\n"
                + "\n".join("    " + ln for ln in snippet.splitlines())
            )
            return self.fail(subject, result.kind or Kind.VALUE, detail, metrics)
        return CheckResult(True, metrics={"examples_tried": tried[0], "compared": tried[0]})
