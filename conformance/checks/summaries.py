"""What the ``moments`` and ``entropy`` checks share: summaries read from the distribution
built at a case's parameters, each held to the oracle's value, shape and dtype.

Where the oracle says a summary is undefined (NaN) or infinite, the framework must say the
same; where it gives a number, the framework's is held within the answer's tolerance.
"""

from __future__ import annotations

import numpy as np

from conformance.checks.base import Check, CheckResult, Reproducer, shown
from conformance.checks.subject import FrameworkError, Subject
from conformance.compare import compare_arrays
from conformance.kinds import Kind
from conformance.operations import Operation
from conformance.reproducers.script import Script, array_literal
from conformance.summaries import Summary


class SummariesCheck(Check):
    operation = Operation.SUMMARIES
    #: They read the parameters alone: once per file and parameter set, on valid parameters.
    draws_only = True

    def _asked(self, subject: Subject) -> tuple[str, ...]:
        """The summaries both the oracle and the framework's class have."""
        return tuple(
            s for s in self.methods if subject.expectations.has_summary(s) and subject.implements(s)
        )

    def evaluate(self, subject: Subject) -> CheckResult:
        asked = self._asked(subject)
        if not asked:
            return CheckResult(True, skip_reason="no summary both the oracle and the class have")
        found = subject.summaries(asked)
        # A constructor that is a function builds a class known only now: a summary it lacks
        # altogether is not implemented, not a failure.
        lacking = [n for n in asked if _lacks(found[n], n)]
        asked = tuple(n for n in asked if n not in lacking)
        if not asked:
            return CheckResult(True, skip_reason=f"the built class has none of {lacking}")
        failures: list[tuple[Kind, str]] = []
        metrics: dict = {"summaries": list(asked), **({"lacking": lacking} if lacking else {})}
        arrays: dict = {}
        for name in asked:
            answer = subject.expectations.summary(name)
            got = found[name]
            if isinstance(got, FrameworkError):
                failures.append((got.kind, str(got)))
                continue
            # The mode is a value: in the value's dtype (a category's index) or the run's.
            dtypes = {np.dtype(subject.dtype)}
            if name == Summary.MODE:
                dtypes.add(np.dtype(subject.inputs.value_dtype))
            judged = _judge(name, answer.value, answer.tolerance, got, subject.dtype, dtypes)
            metrics[name] = judged.metrics
            if judged.kind is not None:
                failures.append((judged.kind, judged.message))
                arrays[name] = {
                    "expected": shown(answer.value),
                    "actual": shown(got),
                    "tolerance": shown(answer.tolerance),
                }
        if not failures:
            return CheckResult(True, metrics=metrics)
        metrics["failed"] = len(failures)
        detail = "\n  ".join(message for _, message in failures)
        return self.fail(subject, failures[0][0], detail, metrics, arrays)

    def reproducer(self, subject: Subject) -> Reproducer:
        asked = self._asked(subject)
        answers = {name: subject.expectations.summary(name) for name in asked}
        value_dtype = np.dtype(subject.inputs.value_dtype).name
        allowed = {
            name: (subject.dtype, value_dtype) if name == Summary.MODE else (subject.dtype,)
            for name in asked
        }

        def constants(script: Script) -> list[str]:
            return [
                line
                for name, answer in answers.items()
                for line in (
                    f"EXPECTED_{name.upper()} = {array_literal(answer.value)}  # float64 oracle",
                    f"TOLERANCE_{name.upper()} = {array_literal(answer.tolerance)}",
                )
            ]

        def body(script: Script) -> list[str]:
            lines: list[str] = []
            for name in asked:
                expr = "dist.entropy()" if Summary(name).called else f"dist.{name}"
                lines += [
                    *script.method(expr, name),
                    *compared(name, f"_{name.upper()}", allowed[name]),
                ]
            return lines

        return Reproducer(subject, self.name, body, constants)


def compared(name: str, suffix: str, dtypes: tuple[str, ...]) -> list[str]:
    """A script's lines judging ``actual`` against ``EXPECTED{suffix}`` as :func:`_judge`
    does: shape, dtype, then every element within ``TOLERANCE{suffix}`` (NaN and ±inf
    exactly)."""
    expected, tol = f"EXPECTED{suffix}", f"TOLERANCE{suffix}"
    return [
        f"print('{name}', actual.dtype, actual.shape, 'expected shape', {expected}.shape)",
        f"report(actual.shape != {expected}.shape, '{name} shape')",
        f"report(actual.dtype.name not in {dtypes!r}, '{name} dtype ' + str(actual.dtype))",
        "actual = actual.astype(np.float64)",
        f"finite = np.isfinite({expected})",
        f"same = (actual == {expected}) | (np.isnan(actual) & np.isnan({expected}))",
        f"err = np.where(finite, np.abs(actual - {expected}), np.where(same, 0.0, np.inf))",
        "err = np.where(np.isnan(err), np.inf, err)",
        f"ratio = err_over_tol(err, {tol}, finite)",
        "worst = np.unravel_index(int(np.argmax(ratio)), ratio.shape)",
        f"print('{name}: expected', {expected}[worst], 'actual', actual[worst], "
        f"'tolerance', {tol}[worst])",
        f"report(bool(ratio.max() > 1), f'{name}: {{int((ratio > 1).sum())}} of {{ratio.size}} "
        "elements outside tolerance')",
    ]


def _lacks(found: object, name: str) -> bool:
    """Whether reading ``name`` raised because the distribution has no such attribute."""
    return (
        isinstance(found, FrameworkError)
        and isinstance(found.exc, AttributeError)
        and f"has no attribute '{name}'" in str(found.exc)
    )


class _Judged:
    def __init__(self, kind: Kind | None, message: str, metrics: dict) -> None:
        self.kind, self.message, self.metrics = kind, message, metrics


def _judge(
    name: str,
    expected: np.ndarray,
    tol: np.ndarray,
    actual: np.ndarray,
    dtype: str,
    dtypes: set[np.dtype],
) -> _Judged:
    """One summary: its shape, then its dtype, then its values."""
    if actual.shape != expected.shape:
        return _Judged(
            Kind.SHAPE, f"{name} has shape {actual.shape}, expected {expected.shape}", {}
        )
    if actual.dtype not in dtypes:
        wanted = " or ".join(sorted(d.name for d in dtypes))
        return _Judged(Kind.DTYPE, f"{name} has dtype {actual.dtype}, expected {wanted}", {})
    result = compare_arrays(expected, actual, tol, dtype)
    if result.ok:
        return _Judged(None, "", result.metrics)
    return _Judged(result.kind or Kind.VALUE, f"{name}: {result.detail}", result.metrics)
