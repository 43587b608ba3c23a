"""The family contract (``reference.core.Family``'s docstring), held for every family.

A family declares its data and implements its mathematics through a few hooks; broadcasting,
membership, the support's ends and the vector-Jacobian product are the base class's, once. And
the expectations of one input come from one evaluation: each answer is computed once however
many checks read it.
"""

from __future__ import annotations

import numpy as np
import pytest

from conformance import reference
from conformance.cases.builtin import builtin_cases
from conformance.cases.loader import Case, find_case_files, load_case_file
from conformance.expect import materialize
from conformance.expect.gradients import DRAWS, expected_grad_for
from conformance.expect.materialize import expected_for
from conformance.plan.derived.edges import anchor_inputs
from conformance.reference.core import Family
from tests.helpers import make_case

#: What a family may define that the base class also defines.
HOOKS = {
    "_log_prob",
    "_sample",
    "_grad",
    "support",
    "_params_valid",
    "_event_shape",
    "log_prob_shape",
    # The law of the draws (sample_fit): a univariate family's CDF, a multivariate family's
    # projections with known laws, or why there is neither.
    "_cdf",
    "_icdf",  # F⁻¹ in closed form (inverting _cdf otherwise)
    "_projections",
    "no_law",
    # rsample_grad of multivariate draws: the pathwise derivatives of the draws' map of noise.
    "_pathwise",
    # ... and where no map reads the noise back (Dirichlet): the moments of Σ w·x, whose
    # derivatives the draws' mean pathwise derivatives must give.
    "_draw_moments",
    "_weighted_law",
    "moments_unjudged",
    # Where the draws' density is not log_prob (rsample_grad's implicit derivatives).
    "draw_log_density",
    # What it says without a value (reference.summaries).
    "_mean",
    "_variance",
    "_mode",
    "_entropy",
}


def _written(cls: type) -> set[str]:
    """What a class body defines, without what Python, ``abc`` and ``dataclass`` put there."""
    return {k for k in vars(cls) if not k.startswith("__") and k != "_abc_impl"}


FAMILIES = sorted(reference.FAMILIES.items())


@pytest.mark.parametrize(("name", "family"), FAMILIES, ids=[n for n, _ in FAMILIES])
def test_a_family_overrides_only_the_declared_hooks(name: str, family: Family) -> None:
    """A family that re-implemented ``_in_support`` or ``support_ends`` would state its support
    twice, and the two would drift (the generated edges read one, -inf the other)."""
    overridden = set()
    for cls in type(family).__mro__:
        if cls is Family:
            break
        overridden |= {k for k in _written(cls) if hasattr(Family, k)}
    assert overridden <= HOOKS, f"{name} overrides {sorted(overridden - HOOKS)}"


def _anchors_with_ends() -> list[tuple[str, Case, dict, float | None, float | None]]:
    """Every shipped case whose inputs are one point (the edge generator's anchors), valid,
    with a scalar value whose support has an end the parameters set."""
    found = []
    for path in find_case_files(builtin_cases()):
        for case in load_case_file(path).cases:
            inputs = anchor_inputs(case)
            if case.variant or inputs is None:
                continue
            family = reference.get_family(case.family)
            params, value = inputs
            if family.value.event_rank or not np.all(
                family.params_valid(params, value, case.parametrization)
            ):
                continue
            lower, upper = family.support_ends(params, case.parametrization)
            if lower is not None or upper is not None:
                found.append((f"{case.family}-{case.id}", case, params, lower, upper))
    return found


ENDS = _anchors_with_ends()


@pytest.mark.parametrize(
    ("case_id", "case", "params", "lower", "upper"), ENDS, ids=[a[0] for a in ENDS]
)
def test_the_support_ends_belong_to_the_support_and_just_beyond_does_not(
    case_id: str, case: Case, params: dict, lower: float | None, upper: float | None
) -> None:
    """One declaration gives both: the ends an edge case puts the value at are inside the
    support where closed (outside where open, the next number inward inside), and the next
    number outward is outside it."""
    family = reference.get_family(case.family)
    support = family.support(params, case.parametrization)
    for end, outward, is_open in (
        (lower, -np.inf, support.lower_open),
        (upper, np.inf, support.upper_open),
    ):
        if end is None:
            continue
        inward = -outward

        def inside(x: float) -> bool:
            return bool(family.in_support(params, np.float64(x), case.parametrization))

        assert inside(end) is not is_open, (end, is_open)
        assert not inside(np.nextafter(end, outward)), end
        if not family.value.discrete:  # the next number inward is a value only on a continuum
            assert inside(np.nextafter(end, inward)), end


def test_every_family_whose_parameters_set_an_end_is_tested() -> None:
    """The test above is not vacuous: the families whose support the parameters set are among
    the anchors it runs on."""
    tested = {case.family for _, case, *_ in ENDS}
    assert {"Uniform", "Pareto", "Binomial", "Categorical", "TruncatedNormal", "Levy"} <= tested


NORMAL = """
- id: contract-normal
  family: Normal
  params: {loc: [0.5, -1.0], scale: [[1.5], [0.7]]}
  value: [0.25, 2.0]
"""
GAMMA = """
- id: contract-gamma
  family: Gamma
  params: {concentration: [[2.5], [0.7]], rate: 1.5}
  value: [0.25, 2.0]
"""


@pytest.mark.parametrize("text", [NORMAL, GAMMA], ids=["Normal", "Gamma"])
def test_one_input_is_evaluated_once_for_every_expectation(text, monkeypatch) -> None:
    """log_prob, its gradients and the broadcast of one (case, dtype) are computed once for
    log_prob's and the gradient's expectations together; the gradient's conditioning adds one
    gradient per perturbed draw. Before the evaluation was shared, the unperturbed gradient
    was computed three times and the inputs broadcast about six times."""
    case = make_case(text)
    family = reference.get_family(case.family)
    calls = {"broadcast": 0, "_log_prob": 0, "_grad": 0}
    for name in calls:
        original = getattr(family, name)

        def counted(*args, _original=original, _name=name, **kwargs):
            calls[_name] += 1
            return _original(*args, **kwargs)

        monkeypatch.setattr(family, name, counted)
    for cached in (expected_for, expected_grad_for, materialize.evaluation_for):
        cached.cache_clear()
    try:
        expected = expected_for(case, "float32")
        grad = expected_grad_for(case, "float32")
    finally:
        for cached in (expected_for, expected_grad_for, materialize.evaluation_for):
            cached.cache_clear()
    assert expected.log_prob.shape == (2, 2) and grad.wrt == case.differentiable_inputs
    assert calls == {"broadcast": 1 + DRAWS, "_log_prob": 1, "_grad": 1 + DRAWS}


def test_the_oracle_warns_nothing_over_the_quick_selection() -> None:
    """A clean full run ended with "1200 warnings", all the suite's own (the oracle's divide by
    zero and overflow at the ends of domains, a cast beyond float32's range): they buried
    whatever a framework warned. Expected poles and overflows are silenced where they are
    expected; any RuntimeWarning left is an error here."""
    import warnings

    from conformance.expect.materialize import CaseInputError
    from conformance.plan.planner import plan
    from conformance.plan.specs import CheckSpec
    from conformance.run.config.settings import Settings, parse_options

    settings = Settings.from_sources(
        parse_options([f"--cases={builtin_cases()}", "--quick"])[0], {}
    )
    cached = (
        expected_for,
        expected_grad_for,
        materialize.evaluation_for,
        materialize.inputs_for,
        materialize.float64_inputs,
    )
    for function in cached:  # answers another test computed would hide a warning
        function.cache_clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        specs = [s for s in plan(settings.selection) if isinstance(s, CheckSpec)]
        keys = {(s.case, s.dtype, tuple(sorted(s.binding.oracle.items()))) for s in specs}
        for case, dtype, options in keys:
            try:
                expected_for(case, dtype, options)
                if case.differentiable_inputs:
                    expected_grad_for(case, dtype, options)
            except CaseInputError:
                continue  # a case the oracle cannot evaluate is an item's error, not a warning
    assert len(keys) > 500


def test_gaussian_projections_broadcast_a_size1_location() -> None:
    """A location of event size 1 (NumPyro promotes a scalar loc so; CAR's and
    MultivariateStudentT's cases give one) against a covariance of dimension 4 and batch 2:
    each projection of the draws has the law of u·x computed with the broadcast location."""
    from conformance.reference import projections

    cov = np.stack([np.eye(4), 2.0 * np.eye(4)])
    found = projections.gaussian(np.array([0.5]), cov, projections.vector)
    assert [p.name for p in found][:3] == ["x[0]", "x[3]", "sum"]
    draws = np.full((1, 2, 4), 0.5)  # the location itself: the median of every projection
    for p in found:
        np.testing.assert_allclose(p.cdf(p.apply(draws)), 0.5)
