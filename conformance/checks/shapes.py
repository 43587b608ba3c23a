"""batch_shape, event_shape, and log_prob's shape and dtype, against the oracle (or the case)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from conformance.check_names import CheckName
from conformance.checks.base import Check, CheckResult, Reproducer
from conformance.checks.subject import FrameworkError, Subject
from conformance.kinds import Kind

if TYPE_CHECKING:
    from conformance.reproducers.script import Script


class ShapesCheck(Check):
    name = CheckName.SHAPES
    description = "batch_shape, event_shape, log_prob shape and dtype"

    def evaluate(self, subject: Subject) -> CheckResult:
        exp = subject.expected
        # A variant's shapes are its own: the base case's stated shapes do not apply.
        stated = None if subject.case.variant else subject.case.spec.expect
        want = {
            "batch_shape": exp.batch_shape,
            "event_shape": exp.event_shape,
            "log_prob_shape": exp.log_prob_shape,
        }
        if stated is not None:  # validation already made sure the oracle agrees
            want.update({k: tuple(v) for k, v in stated.model_dump().items() if v is not None})
        expect_error = subject.expects_validation_error
        try:
            dist = subject.build()
        except FrameworkError as exc:
            if expect_error and isinstance(exc.exc, ValueError):
                return CheckResult(
                    True,
                    skip_reason="invalid parameters rejected at construction "
                    "as declared; no shapes to compare (the log_prob item checks the error)",
                )
            raise
        with subject.framework_call("batch_shape/event_shape"):
            got = {
                "batch_shape": tuple(subject.adapter.batch_shape(dist)),
                "event_shape": tuple(subject.adapter.event_shape(dist)),
            }
        try:
            lp = subject.numpy(subject.log_prob(dist))
        except FrameworkError as exc:
            if not (expect_error and isinstance(exc.exc, ValueError)):
                raise
            want.pop("log_prob_shape")
            lp = None
        if lp is not None:
            got["log_prob_shape"] = tuple(lp.shape)
        wrong = [f"{k} {got[k]}, expected {want[k]}" for k in want if got.get(k) != want[k]]
        metrics = {
            "shapes": {k: list(v) for k, v in got.items()},
            "expected_shapes": {k: list(v) for k, v in want.items()},
        }
        if wrong:
            return self.fail(subject, Kind.SHAPE, "; ".join(wrong), metrics)
        want_dtype = np.dtype(subject.dtype)
        if lp is not None and lp.dtype != want_dtype:
            return self.fail(
                subject, Kind.DTYPE, f"log_prob dtype {lp.dtype}, expected {want_dtype}", metrics
            )
        return CheckResult(True, metrics=metrics)

    def reproducer(self, subject: Subject) -> Reproducer:
        return Reproducer(subject, self.name, _script_body)


def _script_body(script: Script) -> list[str]:
    """Shapes and log_prob's dtype against ``EXPECTED_SHAPES`` and the item's dtype."""
    d = script.dialect
    return [
        *(script.compiled_log_prob() if script.compiled else []),
        f"dist = {script.call}",
        f"batch_shape, event_shape = {d.batch_shape.format(d='dist')}, {d.event_shape.format(d='dist')}",
        f"log_prob = {d.to_numpy(script.log_prob_expr())}",
        "actual = {'batch_shape': batch_shape, 'event_shape': event_shape, "
        "'log_prob_shape': tuple(log_prob.shape)}",
        "print('expected shapes:', EXPECTED_SHAPES)",
        "print('actual shapes:  ', actual, 'log_prob dtype', log_prob.dtype)",
        "mismatch = {k: (actual[k], v) for k, v in EXPECTED_SHAPES.items() if tuple(actual[k]) != tuple(v)}",
        f"if not mismatch and log_prob.dtype != np.dtype('{script.dtype}'):",
        f"    mismatch = {{'dtype': (str(log_prob.dtype), '{script.dtype}')}}",
        "report(mismatch, 'shape mismatch: ' + repr(mismatch))",
    ]
