"""The gradient checks: they pass on real frameworks and flag every kind of wrong gradient."""

from __future__ import annotations

import fake_adapters
import numpy as np
import pytest
from helpers import make_case, run_check

import conformance.expect.gradients as gradients

MVN = """
- id: g
  family: MultivariateNormal
  parametrization: {par}
  params:
    loc: {{generator: normal, shape: [2, 3], seed: 1}}
    {par}: {{generator: {gen}, shape: [3, 3], seed: 2}}
  value: {{sample: {{seed: 3, sample_shape: [2]}}}}
"""
NORMAL = """
- id: n
  family: Normal
  params:
    loc: 0.3
    scale: {generator: positive, shape: [4], seed: 2}
  value: {generator: normal, shape: [4], seed: 3}
"""
BERN_INT = """
- id: b
  family: Bernoulli
  params: {probs: {generator: probability, shape: [5], seed: 1}}
  value: {generator: integers, shape: [5], seed: 2, low: 0, high: 1}
  value_dtype: int32
"""


@pytest.mark.parametrize(
    ("par", "gen"),
    [("covariance_matrix", "spd"), ("scale_tril", "cholesky"), ("precision_matrix", "spd")],
)
@pytest.mark.parametrize("adapter", ["torch", "numpyro"])
@pytest.mark.parametrize("check", ["grad", "grad_functional"])
def test_real_frameworks_pass_every_parametrization(par, gen, adapter, check) -> None:
    case = make_case(MVN.format(par=par, gen=gen))
    for dtype in ("float32", "float64"):
        result = run_check(case, adapter, dtype, check)
        assert result.passed, result.message
        assert set(result.metrics["wrt"]) == {"loc", par, "value"}
        assert result.metrics["compared"] == 6 + 9 + 12
        structure = result.metrics["params"][par]["structure"]
        assert structure == ("lower_triangular" if par == "scale_tril" else "symmetric")


def test_halved_gradient_is_flagged_while_log_prob_passes() -> None:
    adapter = fake_adapters.HalvedGradAdapter()
    case = make_case(MVN.format(par="covariance_matrix", gen="spd"))
    assert run_check(case, adapter.name, "float64", "log_prob", adapter=adapter).passed
    result = run_check(case, adapter.name, "float64", "grad", adapter=adapter)
    assert not result.passed and result.kind == "grad"
    for name in ("loc", "covariance_matrix", "value"):
        assert f"∂/∂{name}" in result.message
        assert result.metrics["params"][name]["max_err_over_tol"] > 1
    assert "∂/∂covariance_matrix (symmetric part)" in result.message
    assert (
        "expected" in result.message
        and "actual" in result.message
        and "tolerance" in result.message
    )
    assert result.metrics["worst_param"] in ("loc", "covariance_matrix", "value")


def test_errors_that_cancel_in_a_sum_are_caught_by_the_cotangent(monkeypatch) -> None:
    adapter = fake_adapters.CancellingGradAdapter()
    case = make_case(NORMAL)
    result = run_check(case, adapter.name, "float64", "grad", adapter=adapter)
    assert not result.passed and result.metrics["worst_param"] == "loc"
    # With .sum() (a cotangent of ones) the same fault is invisible: that is why we contract.
    gradients.expected_grad_for.cache_clear()
    monkeypatch.setattr(gradients, "cotangent_for", lambda case, shape, dtype: np.ones(shape))
    try:
        assert run_check(case, adapter.name, "float64", "grad", adapter=adapter).passed
    finally:
        gradients.expected_grad_for.cache_clear()


def test_exception_while_differentiating_is_a_failure_with_its_message() -> None:
    adapter = fake_adapters.Float0Adapter()
    result = run_check(make_case(BERN_INT), adapter.name, "float32", "grad", adapter=adapter)
    assert not result.passed and result.kind == "raises"
    assert (
        "gradient (torch.autograd.grad) raised TypeError: Called multiply with a float0 array"
        in result.message
    )


@pytest.mark.parametrize("check", ["grad", "grad_functional"])
def test_integer_values_are_held_constant_in_numpyro(check) -> None:
    result = run_check(make_case(BERN_INT), "numpyro", "float32", check)
    assert result.passed, result.message
    assert result.metrics["wrt"] == ["probs"]


def test_torch_bernoulli_rejects_integer_values() -> None:
    """A real torch limitation the suite reports: log_prob of int values raises."""
    result = run_check(make_case(BERN_INT), "torch", "float32", "grad")
    assert not result.passed and result.kind == "raises"
    assert "can't be cast to the desired output type" in result.message


def test_no_differentiable_input_makes_no_item() -> None:
    from conformance.checks import CHECKS

    case = make_case(
        """
- id: x
  family: Bernoulli
  params: {probs: 0.5}
  value: 1
  value_dtype: int64
"""
    )
    assert CHECKS["grad"].not_applicable(case) is None  # probs is differentiable
    assert gradients.differentiable_inputs(case) == ("probs",)


def test_gpytorch_offers_no_functional_gradient() -> None:
    from conformance.adapters import all_adapters
    from conformance.checks import CHECKS

    adapters = all_adapters()
    assert CHECKS["grad_functional"].unsupported_by(adapters["gpytorch"])
    assert CHECKS["grad"].unsupported_by(adapters["gpytorch.root"]) is None


def test_tolerance_components_are_positive_and_scale_with_dtype() -> None:
    case = make_case(MVN.format(par="covariance_matrix", gen="spd"))
    g32 = gradients.expected_grad_for(case, "float32", ())
    g64 = gradients.expected_grad_for(case, "float64", ())
    for name in g32.wrt:
        assert np.all(g32.tolerance[name] > 0)
        ratio = np.median(g32.tolerance[name] / g64.tolerance[name])
        assert 1e7 < ratio < 1e10  # eps32/eps64 · ULPS ratio, up to input rounding


HALF_NORMAL_OVERFLOW = """
- id: {id}
  family: HalfNormal
  params: {{scale: [1.0e-15]}}
  value: [3.0e-15, 1.0e+15, 0.05]
"""


def _overflow_case(opposite_signs: bool):
    """The first id whose cotangent gives the two overflowing ∂/∂scale terms (+1e75·c₁,
    +2.5e42·c₂, beyond float32) opposite signs, or the same sign."""
    for n in range(100):
        case = make_case(HALF_NORMAL_OVERFLOW.format(id=f"hn{n}"))
        ct = gradients.expected_grad_for(case, "float32").cotangent
        if (ct[1] * ct[2] < 0) == opposite_signs:
            return case
    raise AssertionError("no such cotangent in 100 ids")


@pytest.mark.parametrize("adapter", ["torch", "numpyro"])
def test_float32_gradient_whose_terms_overflow_with_both_signs_accepts_nan(adapter) -> None:
    case = _overflow_case(opposite_signs=True)
    grad = gradients.expected_grad_for(case, "float32")
    assert grad.indeterminate["scale"].tolist() == [True]
    assert not grad.indeterminate["value"].any()
    result = run_check(case, adapter, "float32", "grad")
    assert result.passed, result.message
    # The frameworks' NaN is the inevitable inf − inf, accepted and counted.
    assert result.metrics["params"]["scale"]["indeterminate_accepted"] == 1
    # In float64 nothing overflows: the same gradient is compared in full.
    assert not gradients.expected_grad_for(case, "float64").indeterminate["scale"].any()


def test_float32_gradient_beyond_range_with_one_sign_must_be_that_infinity() -> None:
    case = _overflow_case(opposite_signs=False)
    grad = gradients.expected_grad_for(case, "float32")
    assert not grad.indeterminate["scale"].any()
    result = run_check(case, "torch", "float32", "grad")
    assert result.passed, result.message
    assert "indeterminate_accepted" not in result.metrics["params"]["scale"]


def test_a_part_declared_not_comparable_does_not_count_as_infinitely_wrong() -> None:
    case = make_case(
        """
        - id: mvn-cov
          family: MultivariateNormal
          parametrization: covariance_matrix
          params:
            loc: {generator: normal, shape: [2, 1, 3], seed: 21}
            covariance_matrix: {generator: spd, shape: [1, 4, 3, 3], seed: 22}
          value: {generator: normal, shape: [2, 4, 3], seed: 23}
        """
    )
    result = run_check(case, "gpytorch.iterative", "float64", "grad")
    assert result.passed, result.message
    assert result.metrics["params"]["covariance_matrix"]["structure"] == "none"
    assert result.metrics["max_err_over_tol"] < 1.0  # the compared parts' worst, not inf


# Gamma(1, rate) at x = 0: log_prob = log(rate) is finite and ∂/∂rate, ∂/∂value exist, but
# ∂/∂concentration = log(rate x) - ψ(1) does not (the cotangent-weighted -inf terms cancel to NaN).
GAMMA_AT_ZERO = """
- id: gamma-zero
  family: Gamma
  params: {{concentration: 1.0, rate: [0.5, 2.0]}}
  value: [0.0, 0.0]{grad_wrt}
"""


def test_grad_wrt_judges_the_partials_that_exist() -> None:
    everything = make_case(GAMMA_AT_ZERO.format(grad_wrt=""))
    assert gradients.differentiable_inputs(everything) == ("concentration", "rate", "value")
    result = run_check(everything, "torch", "float64", "grad")
    assert not result.passed
    assert "∂/∂concentration" in result.message and "grad_wrt" in result.message

    chosen = make_case(GAMMA_AT_ZERO.format(grad_wrt="\n  grad_wrt: [value, rate]"))
    assert gradients.differentiable_inputs(chosen) == ("rate", "value")  # the family's order
    rate_only = make_case(GAMMA_AT_ZERO.format(grad_wrt="\n  grad_wrt: [rate]"))
    for check in ("grad", "grad_functional"):
        result = run_check(rate_only, "torch", "float64", check)
        assert result.passed, result.message
        assert result.metrics["wrt"] == ["rate"] and result.metrics["compared"] == 2
        # ∂/∂x exists at 0 (one-sided: -rate, the exponential density's slope); torch's
        # autograd gives (a - 1)/x = 0/0 = NaN there (docs/findings/edges.md). The oracle used
        # to give NaN too, and NaN against NaN compared as equal.
        result = run_check(chosen, "torch", "float64", check)
        assert not result.passed and result.kind == "nan"
        assert "∂/∂value" in result.message and "actual nan" in result.message


EXPONENTIAL_AT_ZERO = """
- id: exponential-zero
  family: Exponential
  params: {rate: 1.5}
  value: 0.0
"""


@pytest.mark.parametrize("check", ["grad", "grad_functional"])
def test_no_gradient_is_judged_where_a_declared_convention_makes_log_prob_infinite(check) -> None:
    """Exponential at 0: torch's support is [0, ∞) and its gradient there is judged (and right);
    NumPyro declares (0, ∞) (registry: support_lower open), so its log_prob is -inf, a
    constant, and its gradient item is a skip that says why — not a comparison with the
    closed support's derivative."""
    case = make_case(EXPONENTIAL_AT_ZERO)
    torch_result = run_check(case, "torch", "float64", check)
    assert torch_result.passed and not torch_result.skip_reason
    numpyro_result = run_check(case, "numpyro", "float64", check)
    assert numpyro_result.passed
    assert "log_prob is ±inf at every element" in numpyro_result.skip_reason


NEGATIVE_BINOMIAL_TOTAL_COUNT_ZERO = """
- id: nb-total-count-zero
  family: NegativeBinomial
  params: {total_count: 0.0, probs: 0.4}
  value: [0, 2]
"""


@pytest.mark.parametrize("check", ["log_prob", "eager"])
def test_a_declared_narrower_domain_expects_the_frameworks_validation_error(check) -> None:
    """NegativeBinomial with total_count 0 is a point mass at 0 (torch: log_prob [0, -inf]);
    NumPyro declares total_count > 0 (registry: total_count_lower open), so its validating
    build must raise ValueError there, and that is what passes — not a comparison with the
    point mass, which its ValueError would fail."""
    case = make_case(NEGATIVE_BINOMIAL_TOTAL_COUNT_ZERO)
    if check == "log_prob":
        torch_result = run_check(case, "torch", "float64", check)
        assert torch_result.passed and "validation_error" not in torch_result.metrics
    numpyro_result = run_check(case, "numpyro", "float64", check)
    assert numpyro_result.passed, numpyro_result.message
    metrics = numpyro_result.metrics.get("parts", {}).get("log_prob", numpyro_result.metrics)
    assert "invalid concentration" in metrics.get("validation_error", "")
