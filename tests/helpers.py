"""Small helpers shared by the suite's own tests."""

from __future__ import annotations

import textwrap

from conformance.adapters import all_adapters
from conformance.checks import CHECKS
from conformance.loader import Case, load_case_text
from conformance.materialize import expected_for, inputs_for
from conformance.subject import Subject


def make_case(yaml_text: str) -> Case:
    loaded = load_case_text(
        "cases:\n" + textwrap.indent(textwrap.dedent(yaml_text), "  "), "cases/t.yaml"
    )
    assert not loaded.errors, loaded.errors
    return loaded.cases[0]


def subject_for(case: Case, adapter_name: str, dtype: str, adapter=None) -> Subject:
    adapter = adapter or all_adapters()[adapter_name]
    binding = adapter.binding(case.family, case.parametrization)
    assert not isinstance(binding, str), binding
    return Subject(
        case, adapter, binding, dtype, "cpu", inputs_for(case, dtype), expected_for(case, dtype)
    )


def run_check(case: Case, adapter_name: str, dtype: str, check: str, adapter=None):
    subject = subject_for(case, adapter_name, dtype, adapter)
    with subject.adapter.precision(dtype):
        return CHECKS[check].run(subject)
