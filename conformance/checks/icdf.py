"""icdf(q) against the oracle: values, shape (log_prob's) and dtype, at the probabilities of the
case's values; and icdf(cdf(value)) = value where the class defines both.

The probabilities come from the case: q = F(value) by the oracle, rounded to the run's dtype,
wherever the value is inside the support and the parameters in their domains (the case files'
far-tail values give tail probabilities; ½ elsewhere, not judged). The framework's icdf(q) is
held to the oracle's F⁻¹ at that same rounded q, relatively (``expect.summaries.icdf_answer``);
q = 0 and 1 are held to the support's ends exactly. The round trip starts from the value
itself: where the framework's own cdf(value) is right (within the cdf check's tolerance) and
strictly inside (0, 1), its icdf must give the value back within the icdf's tolerance plus
the cdf's through dx/dq. A wrong cdf is the cdf check's finding, not repeated here.
"""

from __future__ import annotations

import numpy as np

from conformance.check_names import CheckName
from conformance.checks.base import Check, CheckResult, Reproducer, shown
from conformance.checks.subject import FrameworkError, Subject
from conformance.checks.summaries import compared
from conformance.compare import compare_arrays
from conformance.kinds import Kind
from conformance.operations import Operation
from conformance.reproducers.script import Script, array_literal
from conformance.summaries import CDF, ICDF


class IcdfCheck(Check):
    name = CheckName.ICDF
    description = "icdf values vs the float64 oracle, and icdf(cdf(x)) = x"
    operation = Operation.ICDF
    methods = (ICDF,)

    def evaluate(self, subject: Subject) -> CheckResult:
        exp = subject.expected
        if exp.log_prob.size == 0:
            return CheckResult(
                True, skip_reason=f"nothing to compare: icdf shape {exp.log_prob_shape}"
            )
        answer = subject.expectations.icdf
        try:
            got = subject.icdf(answer.q)
        except FrameworkError as exc:
            if isinstance(exc.exc, ValueError) and not bool(np.all(exp.params_valid)):
                return CheckResult(
                    True, metrics={"validation_error": str(exc).splitlines()[0][:500]}
                )
            raise
        if got.shape != exp.log_prob_shape:
            return self.fail(
                subject, Kind.SHAPE, f"icdf shape {got.shape}, expected {exp.log_prob_shape}"
            )
        if got.dtype != np.dtype(subject.dtype):
            return self.fail(
                subject, Kind.DTYPE, f"icdf dtype {got.dtype}, expected {subject.dtype}"
            )
        judged = answer.judged
        result = compare_arrays(
            np.where(judged, answer.value, 0.0),
            np.where(judged, got, 0.0),
            answer.tolerance,
            subject.dtype,
        )
        metrics = {**result.metrics, "compared": int(np.count_nonzero(judged))}
        arrays = {
            "q": shown(answer.q),
            "expected": shown(answer.value),
            "actual": shown(got),
            "tolerance": shown(answer.tolerance),
        }
        if not result.ok:
            return self.fail(subject, result.kind or Kind.VALUE, result.detail, metrics, arrays)
        return self._round_trip(subject, metrics)

    def _round_trip(self, subject: Subject, metrics: dict) -> CheckResult:
        """icdf(cdf(value)) = value, where the class defines cdf and it is right there."""
        if not subject.implements(CDF):
            return CheckResult(True, metrics={**metrics, "round_trip": "no cdf of its own"})
        answer, cdf = subject.expectations.icdf, subject.expectations.cdf
        try:
            q = subject.cdf()
        except FrameworkError as exc:  # the cdf check's finding
            return CheckResult(True, metrics={**metrics, "round_trip": str(exc)[:200]})
        if q.shape != answer.q.shape:
            return CheckResult(True, metrics={**metrics, "round_trip": f"cdf shape {q.shape}"})
        q64 = q.astype(np.float64)
        with np.errstate(invalid="ignore"):
            right = np.abs(q64 - cdf.value) <= cdf.tolerance
        trip = answer.judged & right & (q64 > 0.0) & (q64 < 1.0)
        probs = np.where(trip, q64, 0.5)
        back = subject.icdf(probs)
        value = np.broadcast_to(subject.inputs.value, answer.q.shape)
        result = compare_arrays(
            np.where(trip, value, 0.0),
            np.where(trip, back, 0.0),
            answer.round_trip_tolerance,
            subject.dtype,
        )
        metrics = {**metrics, "round_trip_compared": int(np.count_nonzero(trip))}
        if result.ok:
            return CheckResult(True, metrics=metrics)
        metrics.update({f"round_trip_{k}": v for k, v in result.metrics.items()})
        arrays = {
            "cdf": shown(q),
            "expected": shown(value),
            "actual": shown(back),
            "tolerance": shown(answer.round_trip_tolerance),
        }
        detail = f"icdf(cdf(value)) is not value: {result.detail}"
        return self.fail(subject, result.kind or Kind.VALUE, detail, metrics, arrays)

    def reproducer(self, subject: Subject) -> Reproducer:
        answer, cdf = subject.expectations.icdf, subject.expectations.cdf
        expected = np.where(answer.judged, answer.value, 0.0)  # 0 where not judged

        def constants(script: Script) -> list[str]:
            return [
                f"Q = {array_literal(answer.q.astype(subject.dtype))}  # oracle F(value), rounded",
                f"EXPECTED_ICDF = {array_literal(expected)}  # float64 oracle (0 where not judged)",
                f"TOLERANCE_ICDF = {array_literal(answer.tolerance)}",
                f"JUDGED = {array_literal(answer.judged)}  # value in support, parameters valid",
                f"EXPECTED_CDF = {array_literal(cdf.value)}  # the cdf the round trip trusts",
                f"TOLERANCE_CDF = {array_literal(cdf.tolerance)}",
                f"VALUE_RT = {array_literal(subject.inputs.value)}  # the value, float64",
                f"TOLERANCE_RT = {array_literal(answer.round_trip_tolerance)}",
            ]

        def body(script: Script) -> list[str]:
            return [
                f"q = {script.dialect.array('Q')}",
                *script.method("dist.icdf(q)", "icdf", takes_value=True, argument="q"),
                "if actual.shape == JUDGED.shape:  # not judged: outside the support, invalid",
                "    actual = np.where(JUDGED, actual, 0.0)",
                *compared("icdf", "_ICDF", (script.dtype,)),
                *(round_trip(script) if subject.implements(CDF) else []),
            ]

        def round_trip(script: Script) -> list[str]:
            return [
                "# icdf(cdf(value)) = value where the framework's cdf is right and in (0, 1)",
                *script.method("dist.cdf(value)", "cdf", takes_value=True),
                "q_back = actual.astype(np.float64)",
                "trip = JUDGED & (np.abs(q_back - EXPECTED_CDF) <= TOLERANCE_CDF)",
                "trip = trip & (q_back > 0.0) & (q_back < 1.0)",
                f"q = {script.dialect.array(f'np.where(trip, q_back, 0.5).astype({script.dtype!r})')}",
                *script.method("dist.icdf(q)", "icdf_of_cdf", takes_value=True, argument="q"),
                "actual = np.where(trip, actual, 0.0)",
                "EXPECTED_RT = np.where(trip, np.broadcast_to(VALUE_RT, trip.shape), 0.0)",
                *compared("icdf(cdf(value))", "_RT", (script.dtype,)),
            ]

        return Reproducer(subject, self.name, body, constants)
