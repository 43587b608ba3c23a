"""The oracle's pathwise derivatives of draws (DrawLaw.implicit_derivatives, what rsample_grad
holds a framework to): dx/dθ = −(∂F/∂θ)(x)/f(x) matches the closed forms of location-scale and
rate families and mpmath's derivative of the regularised incomplete gamma function; draws the
differences cannot resolve (far tails, 0, subnormals, a scale far below the parameter's step)
are not judged rather than judged wrongly."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from helpers import make_case, run_check, subject_for

NORMAL = """
- id: n
  family: Normal
  params: {loc: [0.0, 10.0, -3.0], scale: [1.0, 0.1, 250.0]}
  value: [0.5, 10.0, 1.0]
"""
EXPONENTIAL = """
- id: e
  family: Exponential
  params: {rate: [0.5, 20.0]}
  value: [1.0, 0.1]
"""
GAMMA = """
- id: g
  family: Gamma
  params: {concentration: [0.3, 2.5, 40.0], rate: [1.0, 2.0, 0.5]}
  value: [0.5, 1.0, 80.0]
"""


def _law(text: str):
    return subject_for(make_case(text), "torch", "float32").law


def test_location_scale_closed_form() -> None:
    law = _law(NORMAL)
    loc, scale = np.array([0.0, 10.0, -3.0]), np.array([1.0, 0.1, 250.0])
    x = loc + scale * np.array([[-1.3, 0.2, 2.1], [0.7, -2.2, 0.01]])
    found = law.implicit_derivatives(x.astype(np.float32), ["loc", "scale"])
    x32 = x.astype(np.float32).astype(np.float64)  # the oracle judges the draws as given
    assert found.judged.all()
    np.testing.assert_allclose(found.derivatives["loc"], 1.0, rtol=1e-8)
    np.testing.assert_allclose(found.derivatives["scale"], (x32 - loc) / scale, rtol=1e-7)
    # For g = (x − loc)/scale: |x ∂g/∂x| = |x|/scale (x's rounding), and |loc ∂g/∂loc + scale
    # ∂g/∂scale| = |x|/scale (the parameters' rounding in what the framework computes).
    np.testing.assert_allclose(found.sensitivity["scale"], 2 * np.abs(x32) / scale, rtol=1e-3)


def test_rate_closed_form() -> None:
    law = _law(EXPONENTIAL)
    x = np.array([[0.3, 0.01], [4.0, 0.2]])
    found = law.implicit_derivatives(x, ["rate"])
    assert found.judged.all()
    np.testing.assert_allclose(found.derivatives["rate"], -x / np.array([0.5, 20.0]), rtol=1e-8)


def test_gamma_concentration_against_mpmath() -> None:
    law = _law(GAMMA)
    x = np.array([[0.05, 1.3, 75.0], [0.9, 0.4, 88.0]])
    found = law.implicit_derivatives(x, ["concentration", "rate"])
    mpmath.mp.dps = 40
    for (i, j), xij in np.ndenumerate(x):
        a, b = [0.3, 2.5, 40.0][j], [1.0, 2.0, 0.5][j]

        def cdf(a_, b_=b, x_=xij):
            return mpmath.gammainc(a_, 0, b_ * x_, regularized=True)

        density = mpmath.exp(
            a * mpmath.log(b) + (a - 1) * mpmath.log(xij) - b * xij - mpmath.loggamma(a)
        )
        want = -mpmath.diff(cdf, a) / density
        assert found.judged[i, j]
        # Richardson on the float64 CDF: about 4e-8 here; float32 is judged to 4e-6.
        assert float(found.derivatives["concentration"][i, j]) == pytest.approx(
            float(want), rel=1e-7
        )
        assert float(found.derivatives["rate"][i, j]) == pytest.approx(-xij / b, rel=1e-8)


def test_draws_the_differences_cannot_resolve_are_not_judged() -> None:
    law = _law(NORMAL)
    # Far tail (F = Φ(8) ≈ 1 − 6e-16), exactly 0 and a float32 subnormal at the first element.
    x = np.array([[8.0, 10.05, 1.0], [0.0, 10.02, 1.0], [1e-40, 10.02, 1.0]], dtype=np.float32)
    found = law.implicit_derivatives(x, ["loc", "scale"])
    assert found.judged.tolist() == [[False, True, True], [False, True, True], [False, True, True]]


def test_a_scale_far_below_the_parameters_step_is_not_judged_wrongly() -> None:
    tiny = """
- id: t
  family: Normal
  params: {loc: 0.0, scale: 1.0e-30}
  value: 0.0
"""
    found = _law(tiny).implicit_derivatives(np.array([3e-31, -1e-30]), ["loc"])
    # Unjudged (no step resolves F at this scale), or judged right: never a wrong number.
    right = np.isclose(found.derivatives["loc"], 1.0, rtol=1e-6)
    assert np.all(~found.judged | right)


def test_rsample_grad_item_on_torch_passes_and_names_what_it_judged() -> None:
    result = run_check(make_case(NORMAL), "torch", "float32", "rsample_grad")
    assert result.passed and not result.skip_reason
    assert result.metrics["judged_parameters"] == ["loc", "scale"]
    assert result.metrics["judged_draws"] > 0.9 * 3 * result.metrics["draws_per_element"]


def test_a_multi_noise_parameter_is_exempt_with_its_reason() -> None:
    student = """
- id: s
  family: StudentT
  params: {df: 3.0, loc: 1.0, scale: 2.0}
  value: 0.5
"""
    result = run_check(make_case(student), "torch", "float32", "rsample_grad")
    assert result.passed
    assert result.metrics["judged_parameters"] == ["loc", "scale"]
    # df reaches the draw through a chi-square draw too: judged in expectation instead, by
    # bounded test functions (the t law has no moments to differentiate at small df).
    by_expectation = result.metrics["in_expectation"]
    assert by_expectation["judged_parameters"] == ["df"]
    assert "chi-square" in by_expectation["not_by_draw_because"]["df"]
    assert by_expectation["test_functions"]["judged_elements"] == 1


def test_a_summed_gradient_of_the_wrong_shape_fails_even_when_the_per_draw_ones_pass() -> None:
    """The gradient of rsample((n,))'s sum must have the parameter's shape: a framework that
    returns it per draw fails as a shape mismatch, never outranked by passing values."""
    from conformance.adapters.torch.adapter import TorchAdapter

    class SummedPerDraw(TorchAdapter):
        def pathwise_draws(self, binding, params, names, n, seed):
            each, per_draw, summed, total = super().pathwise_draws(binding, params, names, n, seed)
            return each, per_draw, summed, {k: g.expand(n, *g.shape) for k, g in total.items()}

    result = run_check(make_case(NORMAL), "torch", "float32", "rsample_grad", SummedPerDraw())
    assert not result.passed and result.kind == "shape", result.message
    assert "Σdraws" in result.message


MASKED = """
- id: m
  family: MaskedDistribution
  params: {concentration: [2.0, 2.0], rate: [0.5, 0.5], mask: [1, 0]}
  value: [1.0, 1.0]
"""


def test_masked_out_draws_keep_the_base_laws_density() -> None:
    """A masked-out position scores 0 (log_prob) but draws from the base Gamma: its draws'
    derivative by the rate is the Gamma's −x/rate, as at a scored position, not −(∂F/∂θ)/1."""
    law = subject_for(make_case(MASKED), "numpyro", "float32").law
    x = np.array([[0.7, 0.7], [3.0, 3.0], [9.0, 9.0]])
    found = law.implicit_derivatives(x, ["rate"])
    assert found.judged.all()
    np.testing.assert_allclose(found.derivatives["rate"], -x / 0.5, rtol=1e-7)


def test_a_batch_set_by_a_shape_is_skipped_not_judged() -> None:
    """ExpandedDistribution's batch is expand_to's shape: per-draw copies of loc and scale
    cannot expand to it, so rsample_grad says so instead of asking the framework."""
    text = """
- id: x
  family: ExpandedDistribution
  params: {loc: 0.5, scale: 2.0, expand_to: [0, 0, 0]}
  value: [0.0, 1.0, 2.0]
"""
    result = run_check(make_case(text), "numpyro", "float32", "rsample_grad")
    assert result.passed and "expand_to sets the batch by its shape" in result.skip_reason


def _mvn_case(parametrization: str) -> str:
    matrices = {
        "covariance_matrix": "[[[2.0, 0.6, -0.3], [0.6, 1.0, 0.2], [-0.3, 0.2, 0.5]]]",
        "precision_matrix": "[[[1.5, -0.4, 0.1], [-0.4, 2.0, 0.3], [0.1, 0.3, 0.8]]]",
        "scale_tril": "[[[1.2, 0.0, 0.0], [0.5, 0.7, 0.0], [-0.4, 0.3, 0.9]]]",
    }
    return f"""
- id: mvn
  family: MultivariateNormal
  parametrization: {parametrization}
  params: {{loc: [[0.5, -1.0, 2.0], [0.0, 3.0, -2.0]], {parametrization}: {matrices[parametrization]}}}
  value: [0.0, 0.0, 0.0]
"""


def _structured_steps(got: np.ndarray, parametrization: str, h: float):
    """(a step of a 3 × 3 matrix parameter, the derivative it sees) for each free entry: a
    factor moves in its lower triangle alone; a symmetric matrix in the direction E_jk + E_kj,
    which sees G_jk + G_kj."""
    for j in range(3):
        for k in range(j + 1):
            step = np.zeros((3, 3))
            step[j, k] = step[k, j] = h
            if parametrization == "scale_tril":
                step[k, j] = 0.0 if j != k else h
                yield step, got[..., j, k]
            else:
                yield step, got[..., j, k] + (got[..., k, j] if j != k else 0.0)


@pytest.mark.parametrize("parametrization", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_multivariate_normal_map_derivatives_match_differences(parametrization: str) -> None:
    """x = loc + chol(Σ)·ε: the oracle's ∂(Σ_j w_j·x_j)/∂θ at each draw's noise against central
    differences of that map with the noise held (symmetric matrices moved symmetrically, so
    the symmetric part is what is compared; a Cholesky factor by its lower triangle)."""
    law = _law(_mvn_case(parametrization))
    loc = np.asarray(law.params["loc"])
    mat = np.asarray(law.params[parametrization])[0]
    cov = {"covariance_matrix": mat, "precision_matrix": np.linalg.inv(mat)}.get(
        parametrization, mat @ mat.T
    )
    noise = np.random.default_rng(3).standard_normal((5, 2, 3))

    weights = np.array([1.0, 4.0 / 3.0, 5.0 / 3.0])

    def summed(m: np.ndarray) -> np.ndarray:
        c = {"covariance_matrix": m, "precision_matrix": np.linalg.inv(m)}.get(
            parametrization, m @ m.T
        )
        return ((loc + noise @ np.linalg.cholesky(c).T) * weights).sum(-1)

    x = loc + noise @ np.linalg.cholesky(cov).T
    found = law.pathwise_derivatives(x, ["loc", parametrization], weights)
    assert found.judged.all()
    np.testing.assert_allclose(found.derivatives["loc"], np.broadcast_to(weights, x.shape))
    h = 1e-6
    for step, want in _structured_steps(found.derivatives[parametrization], parametrization, h):
        numeric = (summed(mat + step) - summed(mat - step)) / (2 * h)
        np.testing.assert_allclose(want, numeric, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("parametrization", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_rsample_grad_of_torch_multivariate_normal_passes(parametrization: str) -> None:
    result = run_check(make_case(_mvn_case(parametrization)), "torch", "float32", "rsample_grad")
    assert result.passed and not result.skip_reason, result.message
    assert result.metrics["judged_parameters"] == ["loc", parametrization]
    assert result.metrics["judged_draws"] == 2 * result.metrics["draws_per_element"]
    assert result.metrics["summed_compared"] == ["loc", parametrization]


def test_a_transposed_or_halved_multivariate_pathwise_gradient_fails() -> None:
    """Two bugs a sampler's backward pass could have, the draws themselves right: ∂x/∂L read
    as ε_j instead of ε_k (the factor's gradient transposed), and the covariance's gradient
    halved. Each fails, on the per-draw derivatives of that parameter."""
    from conformance.adapters.torch.adapter import TorchAdapter

    class Transposed(TorchAdapter):
        def pathwise_draws(self, binding, params, names, n, seed, copies=None, weights=None):
            each, per_draw, summed, total = super().pathwise_draws(
                binding, params, names, n, seed, copies, weights
            )
            per_draw["scale_tril"] = per_draw["scale_tril"].transpose(-1, -2)
            return each, per_draw, summed, total

    class Halved(TorchAdapter):
        def pathwise_draws(self, binding, params, names, n, seed, copies=None, weights=None):
            each, per_draw, summed, total = super().pathwise_draws(
                binding, params, names, n, seed, copies, weights
            )
            per_draw["covariance_matrix"] = per_draw["covariance_matrix"] / 2
            return each, per_draw, summed, total

    for parametrization, adapter in (("scale_tril", Transposed()), ("covariance_matrix", Halved())):
        case = make_case(_mvn_case(parametrization))
        result = run_check(case, "torch", "float32", "rsample_grad", adapter)
        assert not result.passed and result.kind == "grad", result.message
        assert f"per-draw d draw/d {parametrization}" in result.message


def test_multivariate_draws_skip_where_the_adapter_copies_univariate_parameters_only() -> None:
    from conformance.adapters.numpyro.adapter import NumpyroAdapter

    class UnivariateOnly(NumpyroAdapter):
        pathwise_event_draws = False

    case = make_case(_mvn_case("scale_tril"))
    result = run_check(case, "numpyro", "float32", "rsample_grad", UnivariateOnly())
    assert result.passed and "univariate draws only" in result.skip_reason


def test_rsample_grad_of_numpyro_multivariate_normal_passes() -> None:
    """NumPyro copies a matrix parameter per draw too (jnp.broadcast_to in the jitted
    function) and its MultivariateNormal draws loc + chol(Σ)·ε as torch's does."""
    case = make_case(_mvn_case("covariance_matrix"))
    result = run_check(case, "numpyro", "float32", "rsample_grad")
    assert result.passed and not result.skip_reason, result.message
    assert result.metrics["summed_compared"] == ["loc", "covariance_matrix"]


def test_independent_normal_map_folds_a_parameter_shared_across_the_event() -> None:
    """Independent(Normal): x_j = loc_j + scale·ε_j with one scale for every coordinate, so
    ∂(Σ_j x_j)/∂scale = Σ_j ε_j and ∂/∂loc_j = 1; rsample_grad on torch passes."""
    text = """
- id: i
  family: Independent
  params: {loc: [0.5, -1.0, 2.0], scale: [2.0]}
  value: [0.0, 0.0, 0.0]
"""
    law = _law(text)
    noise = np.random.default_rng(1).standard_normal((4, 3))
    found = law.pathwise_derivatives(np.array([0.5, -1.0, 2.0]) + 2.0 * noise, ["loc", "scale"])
    np.testing.assert_allclose(found.derivatives["loc"], np.ones((4, 3)))
    np.testing.assert_allclose(found.derivatives["scale"], noise.sum(-1, keepdims=True), rtol=1e-12)
    result = run_check(make_case(text), "torch", "float32", "rsample_grad")
    assert result.passed and not result.skip_reason, result.message


@pytest.mark.parametrize("adapter", ["gpytorch", "gpytorch.dense", "gpytorch.iterative"])
def test_gpytorch_multivariate_normal_draws_are_judged_in_expectation(adapter: str) -> None:
    """GPyTorch draws through its covariance's root decomposition, not loc + chol(Σ)·ε: its
    derivatives are not held to a map it does not use, but judged by the draws' moments,
    which any root gives (Cholesky, a LinearOperator's own, Lanczos)."""
    result = run_check(
        make_case(_mvn_case("covariance_matrix")), adapter, "float32", "rsample_grad"
    )
    assert result.passed and not result.skip_reason, result.message
    assert result.metrics["judged_in"] == "expectation"
    assert result.metrics["judged_parameters"] == ["loc", "covariance_matrix"]


def test_gpytorch_diagonal_operator_is_judged_on_the_diagonal_it_reads() -> None:
    """A DiagLinearOperator reads the covariance's diagonal alone: its off-diagonal
    derivatives are 0 by construction, and the item judges the diagonal (the binding's
    structure, as the log_prob gradient does), not the symmetric part."""
    text = """
- id: diagonal
  family: MultivariateNormal
  parametrization: covariance_matrix
  params: {loc: [0.5, -1.0, 2.0], covariance_matrix: [[2.0, 0, 0], [0, 0.5, 0], [0, 0, 1.5]]}
  value: [0.0, 0.0, 0.0]
"""
    result = run_check(make_case(text), "gpytorch.diag", "float32", "rsample_grad")
    assert result.passed and not result.skip_reason, result.message


def test_sensitivity_tries_the_settled_step_first(monkeypatch) -> None:
    """The sensitivity's derivatives at moved draws and parameters try the step that settled
    the draw's own derivative first: one Richardson tableau each, no probe, where the first
    derivative needed the probe and its tableau; the derivative is the same."""
    law = _law(GAMMA)
    x = np.array([[0.4, 1.3, 75.0], [0.9, 0.8, 90.0]])
    evaluated: list[int] = []
    original = type(law)._richardson_try

    def counted(self, params, at, name, first):
        evaluated.append(at.size)
        return original(self, params, at, name, first)

    monkeypatch.setattr(type(law), "_richardson_try", counted)
    plain, ok, steps = law._implicit(
        {k: np.broadcast_to(v, x.shape) for k, v in law.params.items()},
        x,
        "concentration",
        1.0,
    )
    assert ok.all() and np.isfinite(steps).all()
    tries_plain = len(evaluated)
    evaluated.clear()
    again, ok_again, _ = law._implicit(
        {k: np.broadcast_to(v, x.shape) for k, v in law.params.items()},
        x,
        "concentration",
        1.0,
        prefer=steps,
    )
    assert ok_again.all() and len(evaluated) == 1 <= tries_plain
    np.testing.assert_allclose(again, plain, rtol=1e-9)


def test_each_draws_derivative_and_sensitivity_are_its_own_in_any_company() -> None:
    """The Richardson levels, the probe and the three sensitivity derivatives are taken in
    stacked evaluations: a draw's numbers must be the bits it gets alone, whichever other draws
    (settled at once, or needing later tries) share the call."""
    law = _law(GAMMA)
    x = np.array([[0.2, 1.1, 75.0], [1e-3, 0.4, 95.0], [2.0, 3.5, 60.0]])
    together = law.implicit_derivatives(x, ["concentration", "rate"])
    for row in range(x.shape[0]):
        alone = law.implicit_derivatives(x[row : row + 1], ["concentration", "rate"])
        for name in ("concentration", "rate"):
            np.testing.assert_array_equal(
                alone.derivatives[name][0], together.derivatives[name][row]
            )
            np.testing.assert_array_equal(
                alone.sensitivity[name][0], together.sensitivity[name][row]
            )
            np.testing.assert_array_equal(alone.judged_by[name][0], together.judged_by[name][row])
    assert together.judged.sum() >= 7


WEIGHTS4 = np.array([1.0, 1.25, 1.5, 1.75])


def _stick(u: np.ndarray) -> np.ndarray:
    """torch's StickBreakingTransform, written out: z_i = σ(u_i − log(K − i)), y_i = z_i·Π(1 − z_j)."""
    k = u.shape[-1]
    z = 1.0 / (1.0 + np.exp(-(u - np.log(k - np.arange(k)))))
    left = np.cumprod(1.0 - z, axis=-1)
    before = np.concatenate([np.ones_like(z[..., :1]), left[..., :-1]], axis=-1)
    return np.concatenate([z * before, left[..., -1:]], axis=-1)


def test_logistic_normal_map_derivatives_match_differences() -> None:
    """y = stick(loc + scale·ε): the oracle's ∂(Σ w·y)/∂loc_i and ∂/∂scale_i, the noise read
    back from the draw, against central differences of the map with the noise held."""
    text = """
- id: ln
  family: LogisticNormal
  params: {loc: [0.3, -1.0, 0.8], scale: [0.5, 1.5, 0.2]}
  value: [0.25, 0.25, 0.25, 0.25]
"""
    law = _law(text)
    loc, scale = np.array([0.3, -1.0, 0.8]), np.array([0.5, 1.5, 0.2])
    noise = np.random.default_rng(5).standard_normal((6, 3))
    found = law.pathwise_derivatives(_stick(loc + scale * noise), ["loc", "scale"], WEIGHTS4)
    assert found.judged.all()
    h = 1e-6
    for i in range(3):
        step = np.eye(3)[i] * h
        for name, base in (("loc", loc), ("scale", scale)):
            moved = {"loc": loc, "scale": scale}

            def weighted(p: np.ndarray, name=name, moved=moved) -> np.ndarray:
                m = {**moved, name: p}
                return (_stick(m["loc"] + m["scale"] * noise) * WEIGHTS4).sum(-1)

            numeric = (weighted(base + step) - weighted(base - step)) / (2 * h)
            np.testing.assert_allclose(found.derivatives[name][:, i], numeric, rtol=1e-6)


@pytest.mark.parametrize("parametrization", ["logits", "probs"])
def test_relaxed_one_hot_map_derivatives_match_differences(parametrization: str) -> None:
    """y = softmax((l + G)/λ): the oracle reads s back from log y (up to a constant its
    derivatives do not see) and gives ∂(Σ w·y)/∂θ for the temperature and the logits (or
    probs, as log p) against central differences of the map with the Gumbel noise held."""
    probs = np.array([0.1, 0.2, 0.3, 0.4])
    given = {"logits": np.log(probs) + 0.7, "probs": probs}[parametrization]
    text = f"""
- id: r
  family: RelaxedOneHotCategorical
  params: {{temperature: 0.8, {parametrization}: {given.tolist()}}}
  value: [0.25, 0.25, 0.25, 0.25]
"""
    law = _law(text)
    gumbel = -np.log(-np.log(np.random.default_rng(2).random((5, 4))))

    def draw(lam: float, p: np.ndarray) -> np.ndarray:
        logits = np.log(p / p.sum()) if parametrization == "probs" else p
        s = (logits + gumbel) / lam
        e = np.exp(s - s.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)

    found = law.pathwise_derivatives(draw(0.8, given), ["temperature", parametrization], WEIGHTS4)
    assert found.judged.all()
    h = 1e-6
    numeric = ((draw(0.8 + h, given) - draw(0.8 - h, given)) * WEIGHTS4).sum(-1) / (2 * h)
    np.testing.assert_allclose(found.derivatives["temperature"], numeric, rtol=1e-6)
    for i in range(4):
        step = np.eye(4)[i] * h
        numeric = ((draw(0.8, given + step) - draw(0.8, given - step)) * WEIGHTS4).sum(-1)
        np.testing.assert_allclose(
            found.derivatives[parametrization][:, i], numeric / (2 * h), rtol=1e-6, atol=1e-9
        )


LOGISTIC_NORMAL = """
- id: ln
  family: LogisticNormal
  params: {loc: [[0.3, -1.0, 0.8], [0.0, 0.5, -0.5]], scale: [0.5, 1.5, 0.2]}
  value: [0.25, 0.25, 0.25, 0.25]
"""
RELAXED = """
- id: r
  family: RelaxedOneHotCategorical
  params: {temperature: 0.5, logits: [[0.1, -0.4, 1.2], [0.0, 0.3, -0.2]]}
  value: [0.2, 0.3, 0.5]
"""


@pytest.mark.parametrize(
    ("text", "names"), [(LOGISTIC_NORMAL, ["loc", "scale"]), (RELAXED, ["logits"])]
)
def test_rsample_grad_of_torch_simplex_draws_passes(text: str, names: list[str]) -> None:
    """torch's LogisticNormal and RelaxedOneHotCategorical draw through the maps the oracle
    declares; every draw is judged by every parameter (the temperature is exempt on torch: it
    cannot be copied per draw) and rsample((n,))'s summed gradient too."""
    result = run_check(make_case(text), "torch", "float32", "rsample_grad")
    assert result.passed and not result.skip_reason, result.message
    assert result.metrics["judged_parameters"] == names
    assert result.metrics["judged_draws"] == 2 * result.metrics["draws_per_element"]
    assert result.metrics["summed_compared"] == names


def test_swapped_coordinates_of_simplex_derivatives_fail() -> None:
    """The plain coordinate sum of a simplex draw is 1 whatever the parameters, so its
    derivative is 0 and would hide any error of the coordinates' own derivatives; with the
    check's distinct weights, a sampler whose backward pass swapped two coordinates' gradients
    (the draws themselves right) fails."""
    from conformance.adapters.torch.adapter import TorchAdapter

    class Swapped(TorchAdapter):
        def pathwise_draws(self, binding, params, names, n, seed, copies=None, weights=None):
            swapped = (
                None if weights is None else weights[..., [1, 0, *range(2, weights.shape[-1])]]
            )
            return super().pathwise_draws(binding, params, names, n, seed, copies, swapped)

    for text in (LOGISTIC_NORMAL, RELAXED):
        result = run_check(make_case(text), "torch", "float32", "rsample_grad", Swapped())
        assert not result.passed and result.kind == "grad", result.message
        assert "per-draw d draw/d" in result.message


SPD = np.array([[2.0, 0.3, -0.4], [0.3, 1.0, 0.2], [-0.4, 0.2, 1.5]])


@pytest.mark.parametrize("family", ["Wishart", "WishartCholesky"])
@pytest.mark.parametrize("parametrization", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_wishart_map_derivatives_match_differences(family: str, parametrization: str) -> None:
    """Bartlett's map, X = (L A)(L A)ᵀ (WishartCholesky's draw is L A itself), with A held:
    the oracle reads A back from the draw and gives ∂(W:X)/∂θ, against central differences of
    the map (symmetric matrices moved symmetrically, a factor in its lower triangle). df is
    not among the map's parameters, and the check says so."""
    mat = {"covariance_matrix": SPD, "precision_matrix": np.linalg.inv(SPD)}.get(
        parametrization, np.linalg.cholesky(SPD)
    )
    text = f"""
- id: w
  family: {family}
  params: {{df: 5.5, {parametrization}: {mat.tolist()}}}
  value: {np.eye(3).tolist()}
"""
    framework = "numpyro" if family == "WishartCholesky" else "torch"  # torch has none
    law = subject_for(make_case(text), framework, "float32").law
    rng = np.random.default_rng(4)
    a = np.tril(rng.standard_normal((4, 3, 3)), -1) + np.sqrt(
        rng.chisquare(5.5 - np.arange(3), (4, 3))
    )[..., None] * np.eye(3)
    weights = (1.0 + np.arange(9) / 9).reshape(3, 3)

    def chol_of(m: np.ndarray) -> np.ndarray:
        if parametrization == "scale_tril":
            return m
        return np.linalg.cholesky(np.linalg.inv(m) if parametrization == "precision_matrix" else m)

    def draw(m: np.ndarray) -> np.ndarray:
        la = chol_of(m) @ a
        return la if family == "WishartCholesky" else la @ np.swapaxes(la, -1, -2)

    found = law.pathwise_derivatives(draw(mat), [parametrization], weights)
    assert found.judged.all()
    h = 1e-6
    for step, want in _structured_steps(found.derivatives[parametrization], parametrization, h):
        numeric = ((draw(mat + step) - draw(mat - step)) * weights).sum((-1, -2)) / (2 * h)
        np.testing.assert_allclose(want, numeric, rtol=1e-6, atol=1e-7)
    assert "df" in law.family.pathwise_without


LR = np.array([[1.2, 0.0, 0.0], [0.3, 0.8, 0.0], [-0.5, 0.4, 1.5]])
LC = np.array([[0.9, 0.0], [-0.4, 0.6]])
MAPS = {
    # family: (params, static params, a draw from params and noise, the noise's shape)
    "MatrixNormal": (
        {"loc": np.array([[0.5, -1.0], [0.25, 0.0], [1.0, 2.0]]), "scale_tril_row": LR,
         "scale_tril_column": LC},
        {},
        lambda p, e: p["loc"] + p["scale_tril_row"] @ e @ p["scale_tril_column"].T,
        (3, 2),
    ),
    "MultivariateStudentT": (
        {"df": np.array(4.5), "loc": np.array([0.5, -1.0, 2.0]), "scale_tril": LR},
        {},
        lambda p, e: p["loc"] + e @ p["scale_tril"].T,  # e: the normal over √(V/df), held
        (3,),
    ),
    "ZeroSumNormal": (
        {"scale": np.array(1.5)},
        {"event_size": 4},
        lambda p, e: p["scale"] * (e - e.mean(-1, keepdims=True)),
        (4,),
    ),
    "GaussianRandomWalk": (
        {"scale": np.array(0.7)},
        {"num_steps": 4},
        lambda p, e: p["scale"] * np.cumsum(e, -1),
        (4,),
    ),
    "CAR": (
        {"loc": np.array([0.5, -1.0, 2.0]), "correlation": np.array(0.6),
         "conditional_precision": np.array(1.7)},
        {"adj_matrix": [[0.0, 1.0, 1.0], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]]},
        lambda p, e: p["loc"] + e @ np.linalg.cholesky(np.linalg.inv(
            p["conditional_precision"] * (np.diag([2.0, 1.0, 1.0]) - p["correlation"]
                                          * np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0],
                                                      [1.0, 0.0, 0.0]])))).T,
        (3,),
    ),
    "LowRankMultivariateNormal": (
        {"loc": np.array([0.5, -1.0, 2.0]), "cov_factor": np.array([[1.0], [0.5], [-0.3]]),
         "cov_diag": np.array([0.5, 1.0, 2.0])},
        {},
        lambda p, e: p["loc"] + e,  # e: W·ε₁ + √D·ε₂, held (loc is what is judged)
        (3,),
    ),
}  # fmt: skip


@pytest.mark.parametrize("family", sorted(MAPS))
def test_noise_map_derivatives_match_differences(family: str) -> None:
    """Each declared map x = T(θ, ε), the noise read back from the draw: the oracle's
    ∂(Σ w·x)/∂θ for every parameter the map gives against central differences of T with ε
    held (a Cholesky factor moved in its lower triangle); the others are declared
    (``pathwise_without``), with why."""
    params, static, draw, shape = MAPS[family]
    as_yaml = {k: np.asarray(v).tolist() for k, v in {**params, **static}.items()}
    text = f"""
- id: m
  family: {family}
  params: {as_yaml}
  value: {np.zeros(shape).tolist()}
"""
    counts = [k for k, v in static.items() if isinstance(v, int)]  # a size, not an array
    if counts:
        text = text.replace("- id: m", f"- id: m\n  param_dtypes: {{{counts[0]}: int64}}")
    law = subject_for(make_case(text), "numpyro", "float32").law
    noise = np.random.default_rng(6).standard_normal((5, *shape))
    weights = (1.0 + np.arange(int(np.prod(shape))) / np.prod(shape)).reshape(shape)
    names = [k for k in params if k not in law.family.pathwise_without]
    found = law.pathwise_derivatives(draw(params, noise), names, weights)
    assert found.judged.all()
    h = 1e-6
    for name in names:
        base = np.asarray(params[name], dtype=np.float64)
        got = np.broadcast_to(found.derivatives[name], (5, *base.shape))
        for index in np.ndindex(base.shape):
            if "scale_tril" in name and index[-1] > index[-2]:
                continue  # a factor's upper triangle is no parameter
            step = np.zeros_like(base)
            step[index] = h
            up = (draw({**params, name: base + step}, noise) * weights).sum(
                tuple(range(1, noise.ndim))
            )
            down = (draw({**params, name: base - step}, noise) * weights).sum(
                tuple(range(1, noise.ndim))
            )
            np.testing.assert_allclose(
                got[(slice(None), *index)], (up - down) / (2 * h), rtol=1e-6, atol=1e-7
            )
    assert set(law.family.pathwise_without) | set(names) == set(params)
