"""What a check is: a comparison of one :class:`~conformance.checks.subject.Subject` with the oracle.

Checks know what to compare, never which framework produced the numbers.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from conformance.adapters.capabilities import offers
from conformance.answers.case import CheckedCase
from conformance.check_names import CheckName
from conformance.checks.subject import FrameworkError, Subject
from conformance.kinds import HEADLINE_WORDS, Kind
from conformance.operations import Operation

if TYPE_CHECKING:
    from conformance.adapters import Adapter
    from conformance.registry import Binding
    from conformance.reproducers.script import Script


@dataclass
class CheckResult:
    passed: bool
    kind: Kind | None = None  # how it failed (None when it passed)
    message: str = ""
    metrics: dict = field(default_factory=dict)
    #: Set when there was nothing to compare: the item is skipped, never passed vacuously.
    skip_reason: str | None = None
    #: Small arrays worth showing next to a failure (expected/actual), as nested lists.
    arrays: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind is not None:  # a kind no entry could name is refused, never recorded
            self.kind = Kind(self.kind)


def _no_constants(script: Script) -> list[str]:
    return []


@dataclass(frozen=True)
class Reproducer:
    """A check's part of its failure's reproducer script (:mod:`conformance.reproducers.render`
    writes the rest, the same for every check)."""

    #: Whose inputs and expected numbers the script embeds.
    subject: Subject
    #: The check the script's title names.
    name: CheckName
    #: Evaluates and compares, inside the framework's settings; ``report``s a mismatch.
    body: Callable[[Script], list[str]]
    #: The check's own expected numbers, defined after log_prob's.
    constants: Callable[[Script], list[str]] = _no_constants


class Check(ABC):
    #: A class attribute, or set per instance where one class makes several checks (grad).
    name: CheckName
    description: ClassVar[str]

    def not_applicable(self, case: CheckedCase) -> str | None:
        """Why this check has nothing to compare for ``case`` (then no item is made), or None."""
        return None

    #: The operation this check needs beyond construct and log_prob (None: nothing more).
    operation: Operation | None = None
    #: Whether the check reads the parameters alone (draws): then it runs only on cases whose
    #: parameters are valid, not on generated edge cases, and once for cases of one file with
    #: the same parameters.
    draws_only: ClassVar[bool] = False
    #: With ``draws_only``: whether cases with the same parameter shapes (not values) share the
    #: item (a check of shapes alone); otherwise cases share it only for the same values.
    draws_by_shape: ClassVar[bool] = False
    #: ``first``, ``last`` or a dtype's name: the check runs in one of a case's selected dtypes
    #: only (a named one: no item where the case's dtypes lack it).
    single_dtype: ClassVar[str | None] = None
    #: The laws of draws (``reference.Family.law``) the check needs; None: any family.
    law_kinds: ClassVar[frozenset[str] | None] = None
    #: Whether a family whose draws are a map of noise the oracle knows
    #: (``reference.Family.has_pathwise``), or whose draws' moments it can differentiate
    #: (``has_pathwise_moments``), also gets items, whatever its law.
    pathwise_maps: ClassVar[bool] = False
    #: With ``draws_only``: whether the check needs draws that vary continuously (no item for
    #: a discrete law, Delta's point mass included).
    continuous_draws: ClassVar[bool] = False

    #: The methods the check reads that a class may leave to its base (mean, …, entropy,
    #: cdf); an item reads those that both the oracle and the framework's class have, and the
    #: plan makes none where they share none.
    methods: ClassVar[tuple[str, ...]] = ()

    def offered(self, case: CheckedCase, adapter: Adapter, binding: Binding) -> str | None:
        """Why ``adapter`` has no item for ``case`` although it offers the operation (a KL
        pair it registers no rule for), or None; the plan makes no item then."""
        return None

    def unsupported_by(
        self, adapter: Adapter, opted_in: frozenset[Operation] = frozenset()
    ) -> str | None:
        """Why ``adapter`` cannot run this check at all (then no item is made), or None.

        ``opted_in``: the adapter's opt-in operations this run turns on (see :class:`Adapter`).
        """
        op = self.operation
        if op is None:
            return None
        if not offers(adapter, op):
            return f"{adapter.name} offers no {op}"
        if op in adapter.opt_in and op not in opted_in:
            return f"{adapter.name}'s {adapter.operations[op]} runs only when a run opts in"
        return None

    def run(self, subject: Subject) -> CheckResult:
        try:
            if subject.expects_type_error:
                return self._expect_type_error(subject)
            return self.evaluate(subject)
        except FrameworkError as exc:
            return self.fail(subject, exc.kind, str(exc))

    def _expect_type_error(self, subject: Subject) -> CheckResult:
        """The registry declares this binding rejects the case's value dtype: every check holds
        it to log_prob raising TypeError (the framework's convention), not to the oracle."""
        declared = ", ".join(subject.binding.value_dtypes or ())
        try:
            lp = subject.log_prob(subject.build())
        except FrameworkError as exc:
            if isinstance(exc.exc, TypeError):
                return CheckResult(
                    True, metrics={"declared_type_error": str(exc).splitlines()[0][:500]}
                )
            return self.fail(
                subject,
                Kind.RAISES,
                f"expected a TypeError (declared value dtypes: {declared}); {exc}",
            )
        shown_lp = subject.numpy(lp).ravel()[:4].tolist()
        return self.fail(
            subject,
            Kind.NO_TYPE_ERROR,
            f"{subject.adapter.name} declares it accepts value dtypes {declared} only, so log_prob "
            f"of a {subject.case.spec.value_dtype} value must raise TypeError, but it returned "
            f"{shown_lp}…",
        )

    @abstractmethod
    def evaluate(self, subject: Subject) -> CheckResult: ...

    def reproducer(self, subject: Subject) -> Reproducer | None:
        """What a standalone script reproducing this check's failure on ``subject`` runs, or
        None: its failures carry no script."""
        return None

    def fail(
        self,
        subject: Subject,
        kind: Kind,
        detail: str,
        metrics: dict | None = None,
        arrays: dict | None = None,
    ) -> CheckResult:
        kind = Kind(kind)  # a kind no known-failure entry could name raises here
        head = f"{self.name} {HEADLINE_WORDS.get(kind, 'mismatch')}: {subject.case.file}::{subject.case_id}"
        message = (
            f"{head}\n  framework: {subject.label}\n  shapes: {subject.shapes_line()}\n  {detail}"
        )
        return CheckResult(False, kind, message, metrics or {}, arrays=arrays or {})


#: Arrays up to this many elements are kept in full in results.json for failing items.
MAX_SHOWN_ELEMENTS = 256


def shown(array) -> list | None:
    """A JSON-able copy of a small array (None for a large one)."""
    import numpy as np

    array = np.asarray(array)
    if array.size > MAX_SHOWN_ELEMENTS:
        return None
    return array.astype(np.float64).tolist() if array.dtype.kind in "fc" else array.tolist()
