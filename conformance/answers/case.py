"""A case as a check reads it: a protocol, so a check names no module that looks the case's
family up in the oracle (``cases.loader``'s ``Case`` and ``cases.context_design``'s
``CaseShape`` both do, and both satisfy these)."""

from __future__ import annotations

from typing import Protocol

from conformance.cases.case_model import CaseSpec
from conformance.contexts import Call, CallingContext, ContextInput


class CheckedCase(Protocol):
    """What a check reads of its case: the file's entry, where it is, what it derives from,
    and which inputs are differentiated."""

    @property
    def spec(self) -> CaseSpec: ...
    @property
    def file(self) -> str: ...
    @property
    def id(self) -> str: ...
    @property
    def variant(self) -> str: ...  # a broadcast or property variant's name ("" for none)
    @property
    def context(self) -> CallingContext | None: ...  # a calling-context item's way of calling
    @property
    def log_prob_shape(self) -> tuple[int, ...]: ...
    @property
    def differentiable_inputs(self) -> tuple[str, ...]: ...  # what a gradient differentiates
    @property
    def differentiable_parameters(self) -> tuple[str, ...]: ...  # what a draw's derivative may
    @property
    def family(self) -> str: ...
    @property
    def parametrization(self) -> str: ...
    @property
    def kl_q(self) -> CheckedCase | None: ...  # q of a KL case (None for any other case)
    @property
    def kl_shape(self) -> tuple[int, ...]: ...  # KL(p‖q)'s shape, of a KL case


class InputLayout(Protocol):
    """The case's inputs as a calling context reads them: names, dims, dtypes, which are
    traced."""

    def inputs(self, context: CallingContext, dtype: str) -> list[ContextInput]:
        """Every non-static input as ``context`` gives it in an item of ``dtype``."""
        ...

    def traced(self, call: Call) -> tuple[str, ...]:
        """The inputs ``call`` traces."""
        ...
