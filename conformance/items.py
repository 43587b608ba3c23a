"""pytest collectors and items: a case file → one item per framework × dtype × check.

Item names read ``<case-id>[<framework>-<dtype>-<check>]``. A broken case becomes a failing
``[case-error]`` item, a framework that lacks a family one skipped ``[<framework>-unsupported]``
item — nothing is dropped silently, and nothing stops the other cases from running.
"""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import reference
from conformance import known_failures, reproducer, robustness, timing
from conformance.adapters import Adapter
from conformance.checks import CHECKS, Check
from conformance.checks.base import shown
from conformance.loader import Case, CaseError, load_case_file
from conformance.materialize import CaseInputError, expected_for, float64_inputs, inputs_for
from conformance.registry import Binding
from conformance.results import RESULT_KEY, STATIC_KEY
from conformance.settings import Settings
from conformance.subject import FrameworkError, Subject
from conformance.variants import VARIANT_CHECKS, derive_variants

SETTINGS_KEY = pytest.StashKey[Settings]()


class ConformanceProblem(Exception):
    """A failure whose message is the whole story (no harness traceback wanted)."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


class KnownFailureRaised(ConformanceProblem):
    """A failure of the kind a known-failure entry expects: the item's xfail marker takes it."""


class _Item(pytest.Item):
    def _add_static(self, **static: Any) -> None:
        self.user_properties.append((STATIC_KEY, json.dumps(static)))

    def _add_result(self, **result: Any) -> None:
        self.user_properties.append((RESULT_KEY, json.dumps(result, default=str)))

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, ConformanceProblem):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self):
        return self.path, getattr(self, "_line", 1) - 1, self.name


class CaseFile(pytest.File):
    """A YAML case file."""

    def collect(self):
        settings: Settings = self.config.stash[SETTINGS_KEY]
        display = _display_path(self.path, self.config.rootpath)
        loaded = load_case_file(self.path, display=display, known=settings.known)
        names: set[str] = set()
        for error in loaded.errors:
            name = base = _error_name(error)
            for n in range(2, len(loaded.errors) + 2):
                if name not in names:
                    break
                name = f"{base[:-1]}-{n}]"
            names.add(name)
            yield InvalidCaseItem.from_parent(self, name=name, error=error)
        unsupported_seen: set[str] = set()
        for case in loaded.cases:
            if not settings.selects_family(case.family):
                continue
            # Whatever goes wrong with one case stays with that case: an error item, never a
            # collection error that would take the file's other cases with it.
            try:
                items = list(self._case_items(settings, case, unsupported_seen))
            except Exception as exc:
                message = f"cannot expand the case: {type(exc).__name__}: {exc}"
                items = [self._error_item(CaseError(case.file, case.line, case.id, message))]
            yield from items

    def _error_item(self, error: CaseError) -> InvalidCaseItem:
        return InvalidCaseItem.from_parent(self, name=_error_name(error), error=error)

    def _case_items(self, settings: Settings, case: Case, seen: set[str]):
        try:
            params64, value64 = float64_inputs(case)
        except CaseInputError as exc:
            yield self._error_item(CaseError(case.file, case.line, case.id, str(exc)))
            return
        yield from self._expand(settings, case, seen, params64)
        if not (settings.variants and _all_valid(case, params64, value64)):
            return
        variants, problems = derive_variants(case, params64, value64)
        for problem in problems:
            yield self._error_item(CaseError(case.file, case.line, case.id, problem))
        for variant in variants:
            yield from self._expand(settings, variant, seen, float64_inputs(variant)[0])

    def _expand(self, settings: Settings, case: Case, seen: set[str], params64):
        dtypes = settings.selected_dtypes(list(case.spec.dtypes))
        listed = case.spec.checks
        if case.variant:
            checks = [c for c in settings.selected_checks(list(VARIANT_CHECKS)) if c in CHECKS]
        else:
            checks = [
                c
                for c in settings.selected_checks(listed)
                if c in CHECKS and c not in VARIANT_CHECKS
            ]
        for name in settings.selected_frameworks(case.spec.frameworks):
            adapter = settings.adapters[name]
            binding = adapter.binding(case.family, case.parametrization)
            if isinstance(binding, str):
                item_name = f"{case.family}.{case.parametrization}[{name}-unsupported]"
                if item_name not in seen:
                    seen.add(item_name)
                    yield UnsupportedItem.from_parent(
                        self, name=item_name, case=case, framework=adapter, reason=binding
                    )
                continue
            reason = adapter.unsupported_inputs(binding, params64)
            if reason:
                yield UnsupportedItem.from_parent(
                    self,
                    name=f"{case.id}[{name}-unsupported]",
                    case=case,
                    framework=adapter,
                    reason=reason,
                )
                continue
            for dtype in dtypes:
                for check_name in checks:
                    check = CHECKS[check_name]
                    if check.not_applicable(case) or check.unsupported_by(adapter):
                        continue
                    yield ConformanceItem.from_parent(
                        self,
                        name=f"{case.id}[{name}-{dtype}-{check_name}]",
                        case=case,
                        adapter=adapter,
                        binding=binding,
                        dtype=dtype,
                        check=check,
                        device=settings.device,
                    )


class ConformanceItem(_Item):
    def __init__(
        self,
        *,
        case: Case,
        adapter: Adapter,
        binding: Binding,
        dtype: str,
        check: Check,
        device: str,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.case, self.adapter, self.binding = case, adapter, binding
        self.dtype, self.check, self.device = dtype, check, device
        self._line = case.line
        self.extra_keyword_matches.update({adapter.name, dtype, check.name, case.family})
        static = dict(
            case=case.id,
            file=case.file,
            line=case.line,
            family=case.family,
            parametrization=case.parametrization,
            framework=adapter.name,
            package=adapter.package,
            framework_version=adapter.version(),
            dtype=dtype,
            device=device,
            check=check.name,
            variant=case.variant or None,
        )
        settings: Settings = self.config.stash[SETTINGS_KEY]
        self.known = settings.known_failure_index.matching(static)
        if self.known:
            static["known_failures"] = [
                {
                    "id": e.id,
                    "kind": list(e.failure.kind),
                    "reason": e.failure.reason,
                    "link": e.failure.link,
                }
                for e in self.known
            ]
            self.add_marker(
                pytest.mark.xfail(
                    reason=known_failures.describe(self.known),
                    raises=KnownFailureRaised,
                    strict=settings.strict_known_failures
                    and not any(e.failure.flaky for e in self.known),
                )
            )
        self._add_static(**static)
        if settings.item_timeout and self.config.pluginmanager.hasplugin("timeout"):
            # Read by pytest-timeout, whose timer hook the plugin implements for case items.
            self.add_marker(pytest.mark.timeout(settings.item_timeout))
        elif settings.item_timeout:  # pytest-timeout switched off (-p no:timeout): ours alone
            in_worker = hasattr(self.config, "workerinput")
            setattr(self, robustness.TIMER_ATTR, (settings.item_timeout, in_worker))

    def runtest(self) -> None:
        reason = _cached_unavailable(self.adapter) or _cached_device(self.adapter, self.device)
        if reason:
            pytest.skip(reason)
        # Set by the plugin's pytest-timeout hook; armed only now, after the first import of
        # the framework, which is slow and not the framework's call hanging.
        timeout, hard = getattr(self, robustness.TIMER_ATTR, (None, False))
        try:
            with robustness.time_limit(timeout, hard):
                self._runtest()
        except robustness.ItemTimeout as exc:
            message = f"{self.case.file}::{self.name}: {exc}"
            self._add_result(kind="timeout", message=message)
            raise ConformanceProblem(message, "timeout") from None

    def _runtest(self) -> None:
        try:
            inputs = inputs_for(self.case, self.dtype)
            expected = expected_for(
                self.case, self.dtype, tuple(sorted(self.binding.oracle.items()))
            )
        except CaseInputError as exc:
            message = f"{self.case.file}:{self.case.line}: case {self.case.id!r}: {exc}"
            self._add_result(kind="case_error", message=message)
            raise ConformanceProblem(message, "case_error") from exc
        subject = Subject(
            self.case, self.adapter, self.binding, self.dtype, self.device, inputs, expected
        )
        try:
            result = self._run_check(subject)
        except Exception as exc:
            self._add_result(kind="harness_error", message=f"{type(exc).__name__}: {exc}")
            raise
        extra = {} if result.passed else self._failure_context(subject, result)
        notes = self.adapter.notes(self.binding, subject.inputs.params)
        if notes:
            extra["framework_notes"] = notes
        self._add_result(
            kind=result.kind, message=result.message, metrics=result.metrics, extra=extra
        )
        if result.skip_reason:
            pytest.skip(result.skip_reason)
        if not result.passed:
            kind = result.kind or "value"
            expected = {k for e in self.known for k in e.failure.kind}
            if kind in expected:
                raise KnownFailureRaised(result.message, kind)
            if self.known:
                raise ConformanceProblem(
                    f"{result.message}\n  known failure {', '.join(e.id for e in self.known)} "
                    f"expects kind {sorted(expected)}, but this failure is of kind {kind!r}",
                    kind,
                )
            raise ConformanceProblem(result.message, kind)

    def _failure_context(self, subject: Subject, result) -> dict:
        """What a report shows beside a failure: the case's YAML, its inputs, small arrays."""
        inputs = {}
        for name, array in {
            **subject.inputs.framework_params(),
            "value": subject.inputs.framework_value(),
        }.items():
            inputs[name] = {
                "shape": list(array.shape),
                "dtype": str(array.dtype),
                "values": shown(array),
            }
        try:
            script = reproducer.render(subject, self.check.name, result.message)
        except Exception as exc:  # a reproducer is a courtesy; never let it cost the result
            # Every line a comment: the exception's text must not become code.
            text = f"no reproducer: {type(exc).__name__}: {exc}"
            script = "".join(f"# {line}\n" for line in text.splitlines())
        return {
            "reproducer": script,
            "source": self.case.source,
            "inputs": inputs,
            "arrays": result.arrays,
            "expected_shapes": {
                "batch_shape": list(subject.expected.batch_shape),
                "event_shape": list(subject.expected.event_shape),
                "log_prob_shape": list(subject.expected.log_prob_shape),
            },
        }

    def _run_check(self, subject: Subject):
        with contextlib.ExitStack() as stack:
            try:
                stack.enter_context(self.adapter.precision(self.dtype))
            except Exception as exc:
                return self.check.fail(subject, "raises", str(FrameworkError("set precision", exc)))
            return self.check.run(subject)


class InvalidCaseItem(_Item):
    """A case (or file) that could not be loaded: fails with the located message."""

    def __init__(self, *, error: CaseError, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.error = error
        self._line = error.line or 1
        self._add_static(case=error.case_id, file=error.file, line=error.line, check="load")

    def runtest(self) -> None:
        self._add_result(kind="case_error", message=str(self.error), extra={"source": ""})
        raise ConformanceProblem(str(self.error), "case_error")


class UnsupportedItem(_Item):
    """A framework that does not offer this family/parametrisation/input: skipped with why."""

    def __init__(self, *, case: Case, framework: Adapter, reason: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.reason = reason
        self._line = case.line
        self._add_static(
            case=case.id,
            file=case.file,
            line=case.line,
            family=case.family,
            parametrization=case.parametrization,
            framework=framework.name,
            package=framework.package,
            framework_version=framework.version(),
            check="unsupported",
        )
        self.add_marker(pytest.mark.skip(reason=reason))

    def runtest(self) -> None:  # pragma: no cover - always skipped by its marker
        pytest.skip(self.reason)


_UNAVAILABLE: dict[str, str | None] = {}
_DEVICE: dict[tuple[str, str], str | None] = {}


def _cached_unavailable(adapter: Adapter) -> str | None:
    if adapter.name not in _UNAVAILABLE:
        with timing.phase("imports"):
            _UNAVAILABLE[adapter.name] = adapter.unavailable()
    return _UNAVAILABLE[adapter.name]


def _cached_device(adapter: Adapter, device: str) -> str | None:
    key = (adapter.name, device)
    if key not in _DEVICE:
        try:
            _DEVICE[key] = adapter.device_unavailable(device)
        except Exception as exc:
            _DEVICE[key] = (
                f"{adapter.name} cannot query device {device!r}: {type(exc).__name__}: {exc}"
            )
    return _DEVICE[key]


def _all_valid(case: Case, params64, value64) -> bool:
    """Variants are derived only from cases whose inputs are all inside support and domain."""
    family = reference.get_family(case.family)
    try:
        ok = family.in_support(params64, value64, case.parametrization) & family.params_valid(
            params64, value64, case.parametrization
        )
    except (ValueError, ArithmeticError):
        return False
    return bool(np.all(ok))


_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")


def _error_name(error: CaseError) -> str:
    # An invalid id can hold "::", "[", "/" or spaces, which would make a nodeid that selects
    # or reads as something else; the message still quotes it.
    if error.case_id is None:
        who = "<file>"
    else:
        who = error.case_id if _SAFE_ID.match(error.case_id) else "<invalid-id>"
    return f"{who}[case-error-line{error.line or 0}]"


def _display_path(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)
