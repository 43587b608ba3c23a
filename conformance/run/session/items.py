"""pytest collectors and items: the plan's specs (see :mod:`conformance.plan.planner`) as pytest items.

Item names read ``<case-id>[<framework>-<dtype>-<check>]``. A broken case becomes a failing
``[case-error]`` item, a framework that rejects a case's particular inputs a skipped
``[<framework>-unsupported]`` item — nothing is dropped silently, and nothing stops the other
cases from running (a family a framework lacks is the run header's ``not_offered``). An item
gets its subject from the run's :class:`~conformance.run.subject_factory.SubjectFactory`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance import timing
from conformance.adapters import Adapter
from conformance.checks.base import shown
from conformance.checks.subject import FrameworkError, Subject
from conformance.expect.materialize import CaseInputError
from conformance.kinds import Kind
from conformance.known_failures import entries as known_failures
from conformance.plan.planner import case_file_id, plan_file
from conformance.plan.specs import CaseErrorSpec, CheckSpec, UnsupportedSpec
from conformance.records.record import Attachments, ItemResult, ItemStatic
from conformance.records.results import RESULT_KEY, STATIC_KEY
from conformance.reproducers import render as reproducer
from conformance.run.config.settings import Settings
from conformance.run.session import project_fixtures
from conformance.run.subject_factory import SubjectFactory
from conformance.run.worker import robustness

SETTINGS_KEY = pytest.StashKey[Settings]()
FACTORY_KEY = pytest.StashKey[SubjectFactory]()


class ConformanceProblem(Exception):
    """A failure whose message is the whole story (no harness traceback wanted)."""

    def __init__(self, message: str, kind: Kind) -> None:
        super().__init__(message)
        self.kind = kind


class KnownFailureRaised(ConformanceProblem):
    """A failure of the kind a known-failure entry expects: the item's xfail marker takes it."""


class CaseItem(pytest.Item):
    """Every item of a case file: its record's fields travel as JSON properties (see
    :mod:`conformance.records.results`)."""

    def _add_static(self, static: ItemStatic) -> None:
        self.user_properties.append((STATIC_KEY, json.dumps(static.to_json())))

    def _add_result(self, result: ItemResult) -> None:
        self.user_properties.append((RESULT_KEY, json.dumps(result.to_json(), default=str)))

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, ConformanceProblem):
            # The kind first: pytest's one-line summary then shows what a known-failure
            # entry for this item would name ("FAILED ...[torch-float32-grad] - [grad] ...").
            return f"[{excinfo.value.kind}] {excinfo.value}"
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self):
        return self.path, getattr(self, "_line", 1) - 1, self.name


class CaseFileCollector(pytest.File):
    """A YAML case file: its items are the plan's specs (see :mod:`conformance.plan.planner`)."""

    @classmethod
    def for_file(cls, parent: pytest.Collector, path: Path) -> CaseFileCollector:
        """The collector of ``path``, its node id :func:`~conformance.plan.planner.case_file_id`'s
        (not pytest's rootdir-relative path), so ids survive a change of directory or install."""
        settings: Settings = parent.config.stash[SETTINGS_KEY]
        file_id = case_file_id(path, tuple(settings.case_roots), parent.config.rootpath)
        return cls.from_parent(parent, path=path, nodeid=file_id)

    def collect(self):
        settings: Settings = self.config.stash[SETTINGS_KEY]
        item_class = {
            CheckSpec: ConformanceItem,
            UnsupportedSpec: UnsupportedItem,
            CaseErrorSpec: InvalidCaseItem,
        }
        for spec in plan_file(self.path, settings.selection, self.nodeid):
            yield item_class[type(spec)].from_parent(
                self, name=spec.name, spec=spec, **_item_id(self, spec.name)
            )


def _item_id(parent: pytest.Collector, name: str) -> dict[str, Any]:
    """pytest 9 reads a cached or given node id's trailing ``[...]`` as parameters (as for a
    parametrized function), so an item named ``case[torch-float32-log_prob]`` must carry its
    id in that shape too, or ``--lf``/``--ff`` never find it. pytest 8's ids are strings,
    built from the name as they are."""
    parent_id = getattr(parent, "id", None)
    base, bracket, params = name.partition("[")
    if not bracket or parent_id is None or not hasattr(parent_id, "with_params"):
        return {}
    return {"nodeid": parent_id.child(base).with_params(params.removesuffix("]"))}


@contextlib.contextmanager
def _caught_warnings() -> Iterator[list[warnings.WarningMessage]]:
    """Keep the warnings an item's framework raises for the item's own record, under Python's
    default filters whatever the calling project's ``filterwarnings`` says (``error`` above
    all): a warning never becomes the item's failure, and never reaches the run's summary,
    where it would be read as the suite's own. Validation the suite checks for is an
    exception, not a warning."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.resetwarnings()
        warnings.simplefilter("default")
        yield caught


def warning_records(caught: list[warnings.WarningMessage]) -> list[dict[str, str]] | None:
    """The warnings as a record keeps them: category, message and where, each once, the path
    from the installed package on (so a record does not depend on the machine)."""
    out: list[dict[str, str]] = []
    for w in caught:
        where = f"{_from_package(w.filename)}:{w.lineno}"
        entry = {"category": w.category.__name__, "message": str(w.message), "where": where}
        if entry not in out:
            out.append(entry)
    return out or None


def _from_package(filename: str) -> str:
    path = Path(filename)
    for marker in ("site-packages", "dist-packages"):
        if marker in path.parts:
            return "/".join(path.parts[path.parts.index(marker) + 1 :])
    if "conformance" in path.parts:
        return "/".join(path.parts[len(path.parts) - path.parts[::-1].index("conformance") - 1 :])
    return path.name


class ConformanceItem(CaseItem):
    """One :class:`~conformance.plan.specs.CheckSpec` run by pytest."""

    def __init__(self, *, spec: CheckSpec, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.spec = spec
        self.case, self.adapter, self.binding = spec.case, spec.adapter, spec.binding
        self.dtype, self.check, self.device = spec.dtype, spec.check, spec.device
        self.expected_failures = spec.known_failures  # the known-failure entries it matches
        self._line = spec.case.line
        self.extra_keyword_matches.update({self.adapter.name, self.dtype, self.check.name})
        self.extra_keyword_matches.add(self.case.family)
        settings: Settings = self.config.stash[SETTINGS_KEY]
        if self.expected_failures:
            self.add_marker(
                pytest.mark.xfail(
                    reason=known_failures.describe(self.expected_failures),
                    raises=KnownFailureRaised,
                    strict=settings.strict_known_failures
                    and not any(e.failure.flaky for e in self.expected_failures),
                    run=all(e.failure.run for e in self.expected_failures),
                )
            )
        self._add_static(spec.static())
        if settings.item_timeout and self.config.pluginmanager.hasplugin("timeout"):
            # Read by pytest-timeout, whose timer hook the plugin implements for case items.
            self.add_marker(pytest.mark.timeout(settings.item_timeout))
        elif settings.item_timeout:  # pytest-timeout switched off (-p no:timeout): ours alone
            in_worker = hasattr(self.config, "workerinput")
            setattr(self, robustness.TIMER_ATTR, (settings.item_timeout, in_worker))

    def setup(self) -> None:
        project_fixtures.fill(self)

    def _add_result(self, result: ItemResult) -> None:
        caught = warning_records(getattr(self, "_warnings", []))
        if caught:
            attachments = dataclasses.replace(result.attachments, warnings=caught)
            result = dataclasses.replace(result, attachments=attachments)
        super()._add_result(result)

    def runtest(self) -> None:
        reason = _cached_unavailable(self.adapter) or _cached_device(self.adapter, self.device)
        if reason:
            pytest.skip(reason)
        # Set by the plugin's pytest-timeout hook; armed only now, after the first import of
        # the framework, which is slow and not the framework's call hanging.
        timeout, hard = getattr(self, robustness.TIMER_ATTR, (None, False))
        try:
            with robustness.time_limit(timeout, hard), _caught_warnings() as self._warnings:
                self._runtest()
        except robustness.ItemTimeout as exc:
            message = f"{self.case.file}::{self.name}: {exc}"
            self._add_result(ItemResult(kind=Kind.TIMEOUT, message=message))
            raise ConformanceProblem(message, Kind.TIMEOUT) from None

    def _runtest(self) -> None:
        factory: SubjectFactory = self.config.stash[FACTORY_KEY]
        try:
            subject = factory.subject(self.case, self.adapter, self.binding, self.dtype)
        except CaseInputError as exc:
            message = f"{self.case.file}:{self.case.line}: case {self.case.id!r}: {exc}"
            self._add_result(ItemResult(kind=Kind.CASE_ERROR, message=message))
            raise ConformanceProblem(message, Kind.CASE_ERROR) from exc
        try:
            result = self._run_check(subject)
        except Exception as exc:
            self._add_result(
                ItemResult(kind=Kind.HARNESS_ERROR, message=f"{type(exc).__name__}: {exc}")
            )
            raise
        context = Attachments() if result.passed else self._failure_context(subject, result)
        notes = self.adapter.notes(self.binding, subject.inputs.params)
        attachments = dataclasses.replace(context, framework_notes=notes or None)
        self._add_result(ItemResult(result.kind, result.message, result.metrics, attachments))
        if result.skip_reason:
            pytest.skip(result.skip_reason)
        if not result.passed:
            kind = result.kind or Kind.VALUE
            expected = {k for e in self.expected_failures for k in e.failure.kind}
            if kind in expected:
                raise KnownFailureRaised(result.message, kind)
            if self.expected_failures:
                # The kinds as plain strings: a str enum's repr is not what the YAML says.
                raise ConformanceProblem(
                    f"{result.message}\n  known failure {', '.join(e.id for e in self.expected_failures)} "
                    f"expects kind {sorted(map(str, expected))}, but this failure is of kind "
                    f"{str(kind)!r}",
                    kind,
                )
            raise ConformanceProblem(result.message, kind)

    def _failure_context(self, subject: Subject, result) -> Attachments:
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
            script = reproducer.render(subject, self.check, result.message)
        except Exception as exc:  # a reproducer is a courtesy; never let it cost the result
            # Every line a comment: the exception's text must not become code.
            text = f"no reproducer: {type(exc).__name__}: {exc}"
            script = "".join(f"# {line}\n" for line in text.splitlines())
        return Attachments(
            of_failure=True,
            reproducer=script,
            source=self.case.source,
            inputs=inputs,
            arrays=result.arrays,
            expected_shapes={
                "batch_shape": list(subject.expected.batch_shape),
                "event_shape": list(subject.expected.event_shape),
                "log_prob_shape": list(subject.expected.log_prob_shape),
            },
        )

    def _run_check(self, subject: Subject):
        with contextlib.ExitStack() as stack:
            try:
                stack.enter_context(self.adapter.precision(self.dtype))
            except Exception as exc:
                return self.check.fail(
                    subject, Kind.RAISES, str(FrameworkError("set precision", exc))
                )
            return self.check.run(subject)


class InvalidCaseItem(CaseItem):
    """A case (or file) that could not be loaded: fails with the located message."""

    def __init__(self, *, spec: CaseErrorSpec, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.error = spec.error
        self._line = spec.error.line or 1
        self._add_static(spec.static())

    def runtest(self) -> None:
        self._add_result(
            ItemResult(Kind.CASE_ERROR, str(self.error), attachments=Attachments(source=""))
        )
        raise ConformanceProblem(str(self.error), Kind.CASE_ERROR)


class UnsupportedItem(CaseItem):
    """A framework that rejects this case's particular inputs: skipped with why."""

    def __init__(self, *, spec: UnsupportedSpec, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.reason = spec.reason
        self._line = spec.case.line
        self._add_static(spec.static())
        self.add_marker(pytest.mark.skip(reason=spec.reason))

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
