"""A binding's ``{max_of: P}`` argument: the largest value of a parameter's input, read
before any trace, resolved the same by every adapter and written as a literal in reproducers."""

from __future__ import annotations

import numpy as np
import pytest

from conformance.adapters.base import resolve_arg
from conformance.registry import Binding
from conformance.registry.bounds import bound_name, static_bounds
from conformance.reproducers.render import call_source

BINDING = Binding(
    constructor="numpyro.distributions.DirichletMultinomial",
    args={
        "concentration": {"param": "concentration"},
        "total_count": {"param": "total_count"},
        "total_count_max": {"max_of": "total_count"},
    },
)


def test_bounds_are_read_from_the_concrete_input_nested_calls_included() -> None:
    params = {"concentration": np.ones((2, 3)), "total_count": np.array([3, 17])}
    assert static_bounds(BINDING, params) == {bound_name("total_count"): 17}
    nested = Binding(
        constructor="x.Outer",
        args={"base": {"call": "x.Inner", "args": {"n": {"max_of": "total_count"}}}},
    )
    assert static_bounds(nested, params) == {bound_name("total_count"): 17}
    assert static_bounds(Binding(constructor="x.Plain"), params) == {}
    # no values: nothing to draw, so no trial either
    assert static_bounds(BINDING, {"total_count": np.zeros((0,))}) == {bound_name("total_count"): 0}


def test_resolving_prefers_the_bound_read_before_the_trace() -> None:
    spec = {"max_of": "total_count"}
    assert resolve_arg(spec, {"total_count": np.array([2.0, 5.0])}) == 5
    # inside a trace the parameter is a tracer; the adapter passes the bound beside it
    traced = {"total_count": object(), bound_name("total_count"): 9}
    assert resolve_arg(spec, traced) == 9
    with pytest.raises(ValueError, match="max_of"):
        resolve_arg({"max_of": "n", "literal": 1}, {})


def test_a_reproducer_writes_the_bound_as_the_item_passed_it() -> None:
    arrays = {"concentration": "concentration", "total_count": "total_count"}
    bounds = {bound_name("total_count"): 17}
    call, _ = call_source(BINDING, arrays, None, bounds)
    assert call.endswith("total_count=total_count, total_count_max=17)")
    call, _ = call_source(BINDING, arrays, None)
    assert "total_count_max=int(np.max(total_count))" in call
