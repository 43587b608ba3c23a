"""Everything the oracle says about one case for one binding and dtype, as a check's subject
reads it: a protocol that ``expect/expectations.py``'s ``Expectations`` satisfies."""

from __future__ import annotations

from typing import Protocol

from conformance.answers.case import CheckedCase, InputLayout
from conformance.answers.draws import DrawLaw
from conformance.answers.gradients import GradExpectation
from conformance.answers.summaries import GradientAnswer, IcdfAnswer, SummaryAnswer
from conformance.answers.values import Expected, Inputs, SiteExpectation
from conformance.registry import Binding


class Expectations(Protocol):
    """The oracle's answers for one (case, binding, dtype), each computed when first read."""

    @property
    def case(self) -> CheckedCase: ...
    @property
    def inputs(self) -> Inputs: ...
    @property
    def expected(self) -> Expected: ...
    @property
    def gradient(self) -> GradExpectation:
        """The gradient, its cotangent and tolerances, in the binding's structures."""
        ...

    @property
    def summed_gradient(self) -> GradExpectation:
        """The gradient of log_prob's plain sum (a model's log density)."""
        ...

    def structure(self, name: str) -> str:
        """The structure ``name``'s derivatives are compared in for this binding."""
        ...

    @property
    def law(self) -> DrawLaw: ...
    def has_summary(self, name: str) -> bool:
        """Whether the oracle knows summary ``name`` of the case's family."""
        ...

    def summary(self, name: str) -> SummaryAnswer:
        """The summary ``name`` at the case's parameters, with its tolerance."""
        ...

    @property
    def cdf(self) -> SummaryAnswer:
        """F(value) at the case's inputs (log_prob-shaped), with its tolerance."""
        ...

    @property
    def icdf(self) -> IcdfAnswer:
        """F⁻¹(q) at q = F(value) in the run's dtype (log_prob-shaped), with its tolerance."""
        ...

    @property
    def q_inputs(self) -> Inputs:
        """q's parameters of a KL case, rounded to the dtype as p's are."""
        ...

    def kl(self, q_binding: Binding) -> SummaryAnswer:
        """KL(p‖q) of a KL case, q built by ``q_binding``, with its tolerance."""
        ...

    def kl_gradient(self, q_binding: Binding) -> GradientAnswer:
        """∂(Σ c · KL)/∂θ by each side's scalar and vector parameters, with tolerances."""
        ...

    @property
    def case_shape(self) -> InputLayout: ...
    @property
    def event_ranks(self) -> dict[str, int]: ...
    @property
    def array_params(self) -> list[str]:
        """The parameters that are arrays (not static): the ones whose batch shapes vary."""
        ...

    def site(self, salt: str, prefix: tuple[int, ...]) -> SiteExpectation:
        """A sample site's value (sample-shape ``prefix``) and the oracle's answer there."""
        ...

    def with_batch_shapes(self, shapes: tuple[tuple[int, ...], ...]) -> Expectations:
        """The same case with drawn batch shapes (property mode)."""
        ...

    def case_yaml(self, framework: str) -> str:
        """The case as literal YAML in this dtype and ``framework``, paste-ready."""
        ...
