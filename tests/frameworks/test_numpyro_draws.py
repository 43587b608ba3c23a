"""NumPyro's draws, for real: compiled from a PRNG key, sample_shape + batch + event shaped in
the item's dtype, the same for the same seed, and the shapes the trace gives are the shapes
the compiled sampler draws (what ``sample_shapes`` reads instead of compiling every request),
in each context a model draws in (vmap over keys, plates, scan); a context whose draws raise
is reported alone."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import make_case, run_check, subject_for

from conformance.operations import DrawMode

GAMMA = """
- id: g
  family: Gamma
  params:
    concentration: {generator: positive, shape: [3, 1], seed: 1, low: 0.5, high: 3.0}
    rate: {generator: positive, shape: [2], seed: 2}
  value: {sample: {seed: 3, sample_shape: [2]}}
"""
NORMAL = """
- id: n
  family: Normal
  params: {loc: [0.5, -1.0], scale: [1.0, 2.0]}
  value: [0.0, 1.0]
"""
REQUESTS = [
    (mode, shape)
    for mode in DrawMode
    for shape in ((), (2,), (2, 3))
    if shape or not mode.needs_leading
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_draws_are_shaped_typed_seeded_and_traced_alike(dtype: str) -> None:
    subject = subject_for(make_case(GAMMA), "numpyro", dtype)
    adapter, binding = subject.adapter, subject.binding
    with adapter.precision(dtype):
        params = subject.params()
        assert adapter.has_rsample(binding, params)
        first = [np.asarray(x) for x in adapter.draw(binding, params, REQUESTS, seed=7)]
        again = [np.asarray(x) for x in adapter.draw(binding, params, REQUESTS, seed=7)]
        other = [np.asarray(x) for x in adapter.draw(binding, params, REQUESTS, seed=8)]
        traced = adapter.draw_shapes(binding, params, REQUESTS)
    for (_, shape), x, y, z, (t_shape, t_dtype) in zip(
        REQUESTS, first, again, other, traced, strict=True
    ):
        assert x.shape == (*shape, 3, 2)
        assert str(x.dtype) == dtype
        assert (tuple(x.shape), str(x.dtype)) == (t_shape, t_dtype)
        np.testing.assert_array_equal(x, y)
        assert not np.array_equal(x, z)
        assert np.all(x > 0)


@pytest.mark.parametrize("check", ["sample_shapes", "sample_fit"])
def test_the_sampling_checks_pass_on_numpyros_normal(check: str) -> None:
    dtype = "float32" if check == "sample_shapes" else "float64"
    result = run_check(make_case(NORMAL), "numpyro", dtype, check)
    assert result.passed, result.message
    if check == "sample_shapes":
        assert result.metrics["draws"]["rsample(2, 3)"] == {"shape": [2, 3, 2], "dtype": dtype}
    else:
        assert result.metrics["draws_per_element"] >= 2**11


def test_pathwise_gradients_of_compiled_draws_for_cases_of_one_size() -> None:
    """rsample_grad on NumPyro: the per-draw and summed gradients of compiled draws pass for
    two cases whose batches have the same size and different shapes ((1, 4) and (4,): the same
    draws per element), so one compiled function serves both and must read its shapes from
    the trace, not from the first case it met."""
    wide = """
- id: wide
  family: Normal
  params: {loc: [[0.5, -1.0, 2.0, 0.0]], scale: [[1.0]]}
  value: [[0.0, 1.0, 2.0, 3.0]]
"""
    flat = """
- id: flat
  family: Normal
  params: {loc: [0.5, -1.0, 2.0, 0.0], scale: 2.0}
  value: [0.0, 1.0, 2.0, 3.0]
"""
    for text in (wide, flat):
        result = run_check(make_case(text), "numpyro", "float32", "rsample_grad")
        assert result.passed and not result.skip_reason, result.message
        assert result.metrics["judged_parameters"] == ["loc", "scale"]
        assert result.metrics["draws_per_element"] == 128


def test_a_context_whose_draws_raise_is_reported_alone(monkeypatch) -> None:
    """A request whose draws raise while tracing (here: every scan, as a distribution whose
    expand breaks inside scan would) becomes that request's DrawRaised in draw_shapes and that
    label's `raises` in sample_shapes; the other modes are still shaped and judged. Run on the
    eager adapter: it keeps nothing in the executable store."""
    from conformance.adapters.numpyro import adapter as module
    from conformance.checks import CHECKS
    from conformance.kinds import Kind
    from conformance.operations import DrawRaised

    original = module._draw_in_context

    def scan_breaks(dist, mode, shape, key):
        if mode is DrawMode.SCAN:
            raise ValueError("no scan here")
        return original(dist, mode, shape, key)

    monkeypatch.setattr(module, "_draw_in_context", scan_breaks)
    subject = subject_for(make_case(NORMAL), "numpyro", "float32")
    eager = subject.adapter.eager()
    subject = subject_for(make_case(NORMAL), "numpyro", "float32", adapter=eager)
    with eager.precision("float32"):
        traced = eager.draw_shapes(subject.binding, subject.params(), REQUESTS)
        result = CHECKS["sample_shapes"].run(subject)
    for (mode, shape), found in zip(REQUESTS, traced, strict=True):
        if mode is DrawMode.SCAN:
            assert found == DrawRaised("ValueError", "no scan here")
        else:
            assert found == ((*shape, 2), "float32")
    assert not result.passed and result.kind is Kind.RAISES
    assert "scan(2,): raised ValueError: no scan here" in result.message
    assert "scan(2, 3): raised ValueError: no scan here" in result.message
    assert result.metrics["draws"]["plate(2, 3)"] == {"shape": [2, 3, 2], "dtype": "float32"}
    assert result.metrics["draws"]["scan(2,)"] == {"raised": "raised ValueError: no scan here"}


def test_sample_shapes_draws_only_the_modes_that_run_a_sampler_of_their_own(monkeypatch) -> None:
    """Every mode's shapes are traced, but only ``sample`` and ``vmap`` (whose batching rules
    rewrite the sampler) are drawn for the support, 64 draws per batch element each: NumPyro's ``rsample`` is ``sample``, a
    plate draws the expanded distribution's ``sample``, ``scan`` the same sampler in a loop.
    A ``vmap`` draw outside the support is still found; a plate's is not looked for."""
    from conformance.adapters.numpyro import adapter as module
    from conformance.checks import CHECKS
    from conformance.kinds import Kind

    original = module._draw_in_context

    def negated(modes):
        def draw(dist, mode, shape, key):
            x = original(dist, mode, shape, key)
            return -x if mode in modes else x

        return draw

    subject = subject_for(make_case(GAMMA), "numpyro", "float32")
    eager = subject.adapter.eager()
    subject = subject_for(make_case(GAMMA), "numpyro", "float32", adapter=eager)
    asked: list = []
    draw = type(eager).draw

    def spy(self, binding, params, requests, seed):
        asked.extend(requests)
        return draw(self, binding, params, requests, seed)

    monkeypatch.setattr(type(eager), "draw", spy)
    with eager.precision("float32"):
        assert CHECKS["sample_shapes"].run(subject).passed
        assert asked == [(DrawMode.SAMPLE, (16, 4)), (DrawMode.VMAP, (16, 4))]
        monkeypatch.setattr(module, "_draw_in_context", negated({DrawMode.VMAP}))
        result = CHECKS["sample_shapes"].run(subject)
        assert not result.passed and result.kind is Kind.SAMPLE_SUPPORT
        assert "\n  vmap(16, 4): 384 of 384 draws outside the support" in result.message
        monkeypatch.setattr(module, "_draw_in_context", negated({DrawMode.PLATE}))
        assert CHECKS["sample_shapes"].run(subject).passed
    drawn = {"shape": [16, 4, 3, 2], "dtype": "float32"}
    support = {"sample(16, 4) (support)": drawn, "vmap(16, 4) (support)": drawn}
    assert result.metrics["draws"].items() >= support.items()
    assert set(result.metrics["draws"]) == {f"{m}{s}" for m, s in REQUESTS} | set(support)


def _multinomial_case(total_count: list[int]) -> str:
    return f"""
- id: dm
  family: DirichletMultinomial
  params: {{concentration: [[1.0, 2.0, 3.0], [0.5, 0.5, 4.0]], total_count: {total_count}}}
  value: [[1, 2, {total_count[0] - 3}], [0, 1, {total_count[1] - 1}]]
"""


def test_dirichlet_multinomial_draws_under_jit_with_each_cases_own_total_count_max() -> None:
    """NumPyro needs total_count_max to draw under jax.jit (total_count traced); the binding
    gives the case's own max(total_count), read before the trace and part of the compiled
    function's key: two cases of one signature but other maxima never share a sampler (one
    traced for max 6 would draw 6 trials where 40 are asked, or raise)."""
    requests = [(DrawMode.SAMPLE, ()), (DrawMode.SAMPLE, (64,))]
    for total_count in ([4, 6], [40, 9], [4, 6]):
        subject = subject_for(make_case(_multinomial_case(total_count)), "numpyro", "float32")
        adapter, binding = subject.adapter, subject.binding
        assert binding.args is not None and binding.args["total_count_max"] == {
            "max_of": "total_count"
        }
        with adapter.precision("float32"):
            one, many = adapter.draw(binding, subject.params(), requests, seed=3)
        assert np.asarray(one).shape == (2, 3) and np.asarray(many).shape == (64, 2, 3)
        np.testing.assert_array_equal(np.asarray(one).sum(-1), total_count)
        # NumPyro puts trials beyond a too-small bound into the first category: its mean
        # is n·1/6 = 6.7 for n = 40 (concentration [1, 2, 3]), at least 34 with a bound of 6.
        assert np.asarray(many)[:, 0, 0].mean() < total_count[0] / 2
        np.testing.assert_array_equal(
            np.asarray(many).sum(-1), np.broadcast_to(total_count, (64, 2))
        )
