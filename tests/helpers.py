"""Small helpers shared by the suite's own tests: cases from YAML text, and subjects built by
the run's own :class:`~conformance.run.subject_factory.SubjectFactory` (so a test sees exactly what an
item sees, the binding's oracle conventions included)."""

from __future__ import annotations

import copy
import dataclasses
import textwrap

from conformance.adapters import all_adapters
from conformance.cases.loader import Case, load_case_text
from conformance.checks import CHECKS
from conformance.checks.subject import Subject
from conformance.run.subject_factory import SubjectFactory


def make_case(yaml_text: str) -> Case:
    loaded = load_case_text(
        "cases:\n" + textwrap.indent(textwrap.dedent(yaml_text), "  "), "cases/t.yaml"
    )
    assert not loaded.errors, loaded.errors
    return loaded.cases[0]


def subject_for(
    case: Case, adapter_name: str, dtype: str, adapter=None, property_examples: int = 0
) -> Subject:
    adapter = adapter or all_adapters()[adapter_name]
    binding = adapter.binding(case.family, case.parametrization)
    assert not isinstance(binding, str), binding
    return SubjectFactory("cpu", property_examples).subject(case, adapter, binding, dtype)


def run_check(
    case: Case, adapter_name: str, dtype: str, check: str, adapter=None, property_examples: int = 0
):
    subject = subject_for(case, adapter_name, dtype, adapter, property_examples)
    with subject.adapter.precision(dtype):
        return CHECKS[check].run(subject)


def replaced(subject: Subject, **changes) -> Subject:
    """``subject`` with some of the oracle's answers (``case``, ``expected``, …) replaced: for
    tests of what a check or a reproducer does with a given expectation."""
    expectations = copy.copy(subject.expectations)
    for name, value in changes.items():
        setattr(expectations, name, value)
    return dataclasses.replace(subject, expectations=expectations)
