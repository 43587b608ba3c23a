"""Every expectation a check reads, computed from the oracle in one place.

A check compares what a framework returns with what a :class:`~conformance.checks.subject.Subject`
says it should return; it never calls the oracle itself. The subject gets those answers from an
:class:`Expectations`, built here for one (case, binding, dtype) with the binding's declared
oracle conventions: the rounded inputs, log_prob and its shapes, the gradient with its
tolerance in the structure the binding is compared in, the draws for effect-handler sites, and
the derived cases of property mode. The pytest items, the bench baseline and the suite's own
tests all build subjects through :class:`~conformance.run.subject_factory.SubjectFactory`, so
they cannot drift apart.
"""

from __future__ import annotations

import dataclasses
import zlib
from functools import cached_property

import numpy as np
import yaml

from conformance import reference
from conformance.answers.gradients import GradExpectation
from conformance.answers.summaries import GradientAnswer, IcdfAnswer, SummaryAnswer
from conformance.answers.values import Expected, Inputs, SiteExpectation
from conformance.cases.context_design import CaseShape
from conformance.cases.loader import Case
from conformance.expect.fresh_values import well_conditioned_draw
from conformance.expect.gradients import binding_structure, expected_grad_for
from conformance.expect.kl import kl_answer, kl_gradient_for
from conformance.expect.laws import DrawLaw
from conformance.expect.materialize import (
    expected_for,
    float64_inputs,
    inputs_for,
    sample_with_batch,
    sensitivity,
)
from conformance.expect.summaries import cdf_answer, icdf_answer, summary_answer
from conformance.registry import Binding


class Expectations:
    """Everything the oracle says about one case in one dtype for one binding (lazily)."""

    def __init__(self, case: Case, binding: Binding, dtype: str) -> None:
        self.case, self.binding, self.dtype = case, binding, dtype
        #: The binding's declared conventions, as the oracle takes them.
        self.options: tuple = tuple(sorted(binding.oracle.items()))
        self.inputs: Inputs = inputs_for(case, dtype)
        self.expected: Expected = expected_for(case, dtype, self.options)
        self._summaries: dict[str | tuple, SummaryAnswer] = {}

    @cached_property
    def _family(self) -> reference.Family:
        return reference.get_family(self.case.family)

    @cached_property
    def gradient(self) -> GradExpectation:
        raw = expected_grad_for(self.case, self.dtype, self.options)
        structure = {
            n: binding_structure(self.binding, n, raw.structure[n], self.inputs) for n in raw.wrt
        }
        return GradExpectation(raw, structure)

    def structure(self, name: str) -> str:
        """The structure ``name``'s derivatives are compared in for this binding (a diagonal
        operator's diagonal; "none" where the binding reads the parameter otherwise)."""
        info = self._family.params(self.case.parametrization)
        return binding_structure(self.binding, name, info[name].structure, self.inputs)

    @cached_property
    def law(self) -> DrawLaw:
        """The oracle's law of draws at this case's parameters (the sampling checks')."""
        return DrawLaw(self._family, self.inputs, self.options)

    def has_summary(self, name: str) -> bool:
        """Whether the oracle knows summary ``name`` of this case's family."""
        return self._family.has_summary(name)

    def summary(self, name: str) -> SummaryAnswer:
        """The oracle's summary ``name`` at this case's parameters, with its tolerance."""
        if name not in self._summaries:
            self._summaries[name] = summary_answer(self._family, self.inputs, name, self.options)
        return self._summaries[name]

    @cached_property
    def cdf(self) -> SummaryAnswer:
        """The oracle's F(value) at this case's inputs, with its tolerance."""
        return cdf_answer(self._family, self.inputs, self.options)

    @cached_property
    def icdf(self) -> IcdfAnswer:
        """The oracle's F⁻¹ at the probabilities of this case's values, with its tolerance."""
        return icdf_answer(self._family, self.inputs, self.options, self.cdf)

    @cached_property
    def q_inputs(self) -> Inputs:
        """q's parameters of a KL case, rounded to this dtype as p's are."""
        assert self.case.kl_q is not None, "a KL case's q"
        return inputs_for(self.case.kl_q, self.dtype)

    def kl(self, q_binding: Binding) -> SummaryAnswer:
        """The oracle's KL(p‖q) of this KL case, q built by ``q_binding``, with its tolerance."""
        q = self.case.kl_q
        assert q is not None, "a KL case's q"
        q_options = tuple(sorted(q_binding.oracle.items()))
        key = ("kl", q_options)
        if key not in self._summaries:
            self._summaries[key] = kl_answer(
                self.case.family,
                self.inputs,
                self.options,
                q.family,
                self.q_inputs,
                q_options,
            )
        return self._summaries[key]

    def kl_gradient(self, q_binding: Binding) -> GradientAnswer:
        """The oracle's gradient of Σ c · KL(p‖q) by each side's scalar and vector parameters,
        q built by ``q_binding``, with its tolerance."""
        q_options = tuple(sorted(q_binding.oracle.items()))
        return kl_gradient_for(self.case, self.dtype, self.options, q_options)

    @cached_property
    def params_valid(self) -> bool:
        """Whether every parameter is inside its domain (draws are judged only then)."""
        return bool(np.all(self.expected.params_valid))

    @cached_property
    def case_shape(self) -> CaseShape:
        """The case's inputs as the calling-context design reads them (names, dims, dtypes,
        which are traced)."""
        return CaseShape.of(self.case, self.inputs.params, self.inputs.value)

    @cached_property
    def summed_gradient(self) -> GradExpectation:
        """The oracle's gradient of log_prob's plain sum (a model's log density), with its
        tolerance, in this binding's structures."""
        raw = expected_grad_for(self.case, self.dtype, self.options, summed=True)
        structure = {
            n: binding_structure(self.binding, n, raw.structure[n], self.inputs) for n in raw.wrt
        }
        return GradExpectation(raw, structure)

    @cached_property
    def event_ranks(self) -> dict[str, int]:
        """Event rank of every parameter and of ``value``."""
        info = self._family.params(self.case.parametrization)
        return {
            **{k: p.event_rank for k, p in info.items()},
            "value": self._family.value.event_rank,
        }

    @cached_property
    def array_params(self) -> list[str]:
        """The parameters that are arrays (not static): the ones whose batch shapes vary."""
        info = self._family.params(self.case.parametrization)
        return [k for k, p in info.items() if not p.static]

    def site(self, salt: str, prefix: tuple[int, ...]) -> SiteExpectation:
        """A value with sample-shape ``prefix`` drawn (seeded by case and ``salt``) away from
        ill-conditioned points, and the oracle's log_prob and sensitivity there."""
        family, inputs = self._family, self.inputs
        par = inputs.parametrization
        seed = zlib.crc32(f"{self.case.file}::{self.case.id}::{salt}".encode())
        rng = np.random.default_rng(seed)
        value64 = well_conditioned_draw(
            family,
            inputs.params,
            par,
            lambda: family.sample(inputs.params, prefix, rng, par),
            inputs.value,
            integer=inputs.value_dtype.kind != "f",
        )
        value = value64.astype(inputs.value_dtype)
        at = value.astype(np.float64)
        evaluation = family.evaluate(inputs.params, at, par, dict(self.options))
        return SiteExpectation(value, evaluation.log_prob, sensitivity(evaluation))

    def with_batch_shapes(self, shapes: tuple[tuple[int, ...], ...]) -> Expectations:
        """The same case with drawn batch shapes: one per array parameter, then the value's."""
        case = derive_batch_shapes(self.case, self._family, self.array_params, shapes)
        return Expectations(case, self.binding, self.dtype)

    def case_yaml(self, framework: str) -> str:
        """This (derived) case as literal YAML in this dtype and ``framework``, paste-ready."""
        case, inputs = self.case, self.inputs
        entry = {
            "id": f"{case.spec.id}-{case.variant}",
            "family": case.family,
            "parametrization": case.parametrization,
            "params": {k: np.asarray(v).tolist() for k, v in inputs.framework_params().items()},
            "value": inputs.framework_value().tolist(),
            "dtypes": [self.dtype],
            "frameworks": [framework],
        }
        if case.spec.value_dtype != "float":
            entry["value_dtype"] = case.spec.value_dtype
        if case.spec.param_dtypes:
            entry["param_dtypes"] = dict(case.spec.param_dtypes)
        return yaml.safe_dump([entry], sort_keys=False, default_flow_style=None, width=100)


def derive_batch_shapes(
    case: Case, family: reference.Family, arrays: list[str], shapes: tuple
) -> Case:
    """A case whose arrays have the drawn batch shapes and the base case's event shapes; each
    element is picked from the case's own elements, the value drawn from the oracle and kept
    well-conditioned (:func:`~conformance.expect.fresh_values.well_conditioned_draw`)."""
    info = family.params(case.parametrization)
    seed = zlib.crc32(repr(shapes).encode())

    def pick(array: np.ndarray, rank: int, batch: tuple[int, ...], salt: int) -> np.ndarray:
        event = array.shape[array.ndim - rank :]
        flat = array.reshape(-1, *event) if array.ndim > rank else array.reshape(1, *event)
        rng = np.random.default_rng(seed + salt)
        chosen = rng.integers(0, flat.shape[0], size=batch)
        return flat[chosen]

    def make(params: dict, value: np.ndarray) -> tuple[dict, np.ndarray]:
        new = dict(params)
        for i, name in enumerate(arrays):
            new[name] = pick(params[name], info[name].event_rank, tuple(shapes[i]), i)
        rng = np.random.default_rng(seed + 1000)
        # Kept off unplanned boundary points as the variants' fresh values are: a raw Wishart
        # draw at df = d − 1 + 0.01 is singular within rounding, which frameworks reject.
        new_value = well_conditioned_draw(
            family,
            new,
            case.parametrization,
            lambda: sample_with_batch(family, new, tuple(shapes[-1]), rng, case.parametrization),
            value,
            integer=case.spec.value_dtype != "float",
        )
        return new, np.asarray(new_value)

    params64, value64 = float64_inputs(case)
    params, value = make(dict(params64), value64)
    par = case.parametrization
    return dataclasses.replace(
        case,
        batch_shape=tuple(family.batch_shape(params, par)),
        log_prob_shape=tuple(family.log_prob_shape(params, value, par)),
        variant=f"property-{seed:08x}",
        base=case,
        derive=lambda p, v, draw: make(p, v),  # drawn whenever derived: made at run time
        source=case.source,
    )
