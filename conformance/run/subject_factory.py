"""The subject factory: the one way an item, the bench or a test gets a check's subject.

It joins the two halves a check must not join itself: the adapter that runs the framework
and the :class:`~conformance.expect.expectations.Expectations` that hold the oracle's answers.
Living here, beside the runner, it keeps the expectation code free of the checks and the
checks free of the expectation code.
"""

from __future__ import annotations

from dataclasses import dataclass

from conformance.adapters.base import Adapter
from conformance.cases.loader import Case
from conformance.checks.subject import Subject
from conformance.expect.expectations import Expectations
from conformance.registry import Binding


@dataclass(frozen=True)
class SubjectFactory:
    """Builds the :class:`~conformance.checks.subject.Subject` of an item; owns the run's values a
    subject needs (device, property-mode examples), so no check reads a global."""

    device: str = "cpu"
    property_examples: int = 0
    sample_seed: int = 0

    def subject(self, case: Case, adapter: Adapter, binding: Binding, dtype: str) -> Subject:
        """Raises :class:`~conformance.expect.materialize.CaseInputError` when the case's inputs or the
        oracle's answer cannot be computed."""
        # A calling context calls with its case's own inputs: the oracle's answers (and the
        # gradient's cotangent) are the case's, computed once for all its items.
        own = case.base if case.context is not None and case.base is not None else case
        expectations = Expectations(own, binding, dtype)
        if not expectations.expected.all_valid:
            # Validation errors and warnings need concrete values: a framework that compiles
            # by default meets such inputs eagerly, where its validation can see them.
            adapter = adapter.eager()
        return Subject(
            adapter,
            binding,
            dtype,
            self.device,
            expectations,
            property_examples=self.property_examples,
            sample_seed=self.sample_seed,
            context=case.context,
        )
