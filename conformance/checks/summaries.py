"""What the ``moments`` and ``entropy`` checks share: summaries read from the distribution
built at a case's parameters, each held to the oracle's value, shape and dtype.

Where the oracle says a summary is undefined (NaN) or infinite, the framework must say the
same, or what it declares it returns there (``conformance/registry/summary_conventions.yaml``):
those elements, and only those, may be judged by its convention, and the item's metrics say
which. Where the oracle gives a number, the framework's is held within the answer's tolerance.
"""

from __future__ import annotations

import inspect

import numpy as np

from conformance.checks.base import Check, CheckResult, Reproducer, shown
from conformance.checks.subject import FrameworkError, Subject
from conformance.compare import by_convention, compare_arrays
from conformance.kinds import Kind
from conformance.operations import Operation
from conformance.registry.summary_conventions import declared
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
            conventions = _declared(subject, name)
            if isinstance(got, FrameworkError):
                excused = _raise_declared(answer.value, conventions)
                if excused is None:
                    failures.append((got.kind, str(got)))
                else:
                    metrics[name] = {"convention": excused, "raised": str(got).splitlines()[0]}
                continue
            # The mode is a value: in the value's dtype (a category's index) or the run's.
            dtypes = {np.dtype(subject.dtype)}
            if name == Summary.MODE:
                dtypes.add(np.dtype(subject.inputs.value_dtype))
            judged = _judge(
                name, answer.value, answer.tolerance, got, subject.dtype, dtypes, conventions
            )
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

        conventions = {name: _declared(subject, name) for name in asked}

        def constants(script: Script) -> list[str]:
            lines = [
                line
                for name, answer in answers.items()
                for line in (
                    f"EXPECTED_{name.upper()} = {array_literal(answer.value)}  # float64 oracle",
                    f"TOLERANCE_{name.upper()} = {array_literal(answer.tolerance)}",
                    *(
                        [
                            f"CONVENTION_{name.upper()} = {conventions[name]!r}  # declared where"
                            " the oracle is NaN or ±inf"
                        ]
                        if conventions[name]
                        else []
                    ),
                )
            ]
            if any(conventions.values()):
                # The check's own rule for a declared convention, as source.
                lines += ["", "", *_source(by_convention), ""]
            return lines

        def body(script: Script) -> list[str]:
            lines: list[str] = []
            for name in asked:
                expr = "dist.entropy()" if Summary(name).called else f"dist.{name}"
                declared_here = conventions[name]
                evaluate = script.method(expr, name)
                if "raises" in declared_here.values():
                    evaluate = _raising(evaluate, name, declared_here, allowed[name][0])
                lines += [
                    *evaluate,
                    *compared(name, f"_{name.upper()}", allowed[name], bool(declared_here)),
                ]
            return lines

        return Reproducer(subject, self.name, body, constants)


def compared(
    name: str, suffix: str, dtypes: tuple[str, ...], convention: bool = False
) -> list[str]:
    """A script's lines judging ``actual`` against ``EXPECTED{suffix}`` as :func:`_judge`
    does: shape, dtype, then every element within ``TOLERANCE{suffix}`` (NaN and ±inf
    exactly, or as ``CONVENTION{suffix}`` declares where ``convention``)."""
    expected, tol = f"EXPECTED{suffix}", f"TOLERANCE{suffix}"
    declared_lines = [
        f"conventional = by_convention({expected}, actual, CONVENTION{suffix})",
        f"print('{name}: judged by the declared convention', CONVENTION{suffix}, 'at',"
        " np.argwhere(conventional).tolist())",
        f"actual = np.where(conventional, {expected}, actual)",
    ]
    return [
        f"print('{name}', actual.dtype, actual.shape, 'expected shape', {expected}.shape)",
        f"report(actual.shape != {expected}.shape, '{name} shape')",
        f"report(actual.dtype.name not in {dtypes!r}, '{name} dtype ' + str(actual.dtype))",
        "actual = actual.astype(np.float64)",
        *(declared_lines if convention else []),
        f"finite = np.isfinite({expected})",
        f"same = (actual == {expected}) | (np.isnan(actual) & np.isnan({expected}))",
        "with np.errstate(invalid='ignore'):  # inf - inf where the oracle is ±inf",
        f"    err = np.where(finite, np.abs(actual - {expected}), np.where(same, 0.0, np.inf))",
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


def _declared(subject: Subject, name: str) -> dict[str, str]:
    """What the subject's framework declares it returns for this family's summary where the
    oracle's is NaN (``undefined``) or ±inf (``infinite``)."""
    return declared(subject.adapter.package, subject.case.spec.family, name)


def _raise_declared(expected: np.ndarray, conventions: dict[str, str]) -> dict | None:
    """The metrics of a raise the conventions excuse: every element of the oracle's summary in
    a condition declared ``raises`` (and at least one element); else None."""
    raising = [where for where, says in conventions.items() if says == "raises"]
    if not raising or expected.size == 0:
        return None
    covered = np.zeros(expected.shape, dtype=bool)
    if "undefined" in raising:
        covered |= np.isnan(expected)
    if "infinite" in raising:
        covered |= np.isinf(expected)
    if not covered.all():
        return None
    return {where: {"returns": "raises", "elements": int(expected.size)} for where in raising}


def _raising(lines: list[str], name: str, conventions: dict[str, str], dtype: str) -> list[str]:
    """``lines`` (which leave ``actual``) in a try: a raise the conventions declare for every
    element exits 0 as the item passes; any other raises on."""
    raising = [where for where, says in conventions.items() if says == "raises"]
    tests = " | ".join(
        f"np.is{'nan' if where == 'undefined' else 'inf'}(EXPECTED_{name.upper()})"
        for where in raising
    )
    return [
        "try:",
        *(f"    {line}" if line else "" for line in lines),
        "except Exception as exc:",
        f"    if EXPECTED_{name.upper()}.size == 0 or not np.all({tests}):",
        "        raise",
        f"    print('{name}: raised as declared ({raising}):', exc)",
        f"    actual = EXPECTED_{name.upper()}.astype({dtype!r})",
    ]


def _source(function: object) -> list[str]:
    return inspect.getsource(function).rstrip("\n").splitlines()  # type: ignore[arg-type]


def _by_element(mask: np.ndarray) -> list:
    """The indices of ``mask``'s True elements, for the metrics (the first 50)."""
    return [list(i) for i in np.argwhere(mask)[:50].tolist()]


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
    conventions: dict[str, str] | None = None,
) -> _Judged:
    """One summary: its shape, then its dtype, then its values, the elements where the oracle
    is NaN or ±inf judged by a declared convention (``conventions``: condition → what the
    framework returns there) where one applies."""
    if actual.shape != expected.shape:
        return _Judged(
            Kind.SHAPE, f"{name} has shape {actual.shape}, expected {expected.shape}", {}
        )
    if actual.dtype not in dtypes:
        wanted = " or ".join(sorted(d.name for d in dtypes))
        return _Judged(Kind.DTYPE, f"{name} has dtype {actual.dtype}, expected {wanted}", {})
    judged_by: dict = {}
    if conventions:
        conventional = by_convention(expected, actual, conventions)
        for where, condition in (("undefined", np.isnan), ("infinite", np.isinf)):
            here = conventional & condition(expected)
            if here.any():
                judged_by[where] = {
                    "returns": conventions[where],
                    "count": int(here.sum()),
                    "elements": _by_element(here),
                }
        if conventional.any():
            actual = np.where(conventional, expected, actual.astype(np.float64))
    result = compare_arrays(expected, actual, tol, dtype)
    metrics = {**result.metrics, **({"convention": judged_by} if judged_by else {})}
    if result.ok:
        return _Judged(None, "", metrics)
    return _Judged(result.kind or Kind.VALUE, f"{name}: {result.detail}", metrics)
