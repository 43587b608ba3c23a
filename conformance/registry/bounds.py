"""A binding's ``{max_of: P}`` arguments: static numbers read from a parameter's input.

NumPyro's Multinomial and DirichletMultinomial need ``total_count_max`` (a Python int) to
draw under ``jax.jit``, where ``total_count`` is traced: a model gives it, and the suite gives
the case's own ``max(total_count)``, as the docstring asks. Adapters that trace read these from
the concrete inputs first (:func:`static_bounds`) and pass them with their static parameters.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from conformance.registry import ARG_KINDS

if TYPE_CHECKING:
    from conformance.registry import Binding


def bound_name(param: str) -> str:
    """Where :func:`static_bounds` puts ``{max_of: param}``'s number among the parameters."""
    return f"max_of:{param}"


def largest(array: Any) -> int:
    """``{max_of: …}``'s number: the largest value of a concrete input (0 for no values)."""
    return int(np.max(np.asarray(array), initial=0))


def _arg_specs(spec: Any) -> Iterator[dict]:
    if isinstance(spec, list):
        for item in spec:
            yield from _arg_specs(item)
    elif isinstance(spec, dict):
        if ARG_KINDS & set(spec):
            yield spec
            spec = spec.get("args", {})
        for nested in spec.values():
            yield from _arg_specs(nested)


def static_bounds(binding: Binding, params: Mapping[str, Any]) -> dict[str, int]:
    """Each ``{max_of: P}`` of ``binding``'s arguments, from ``params`` before any trace: an
    adapter that builds its distribution from traced inputs passes these with its static
    parameters, so the bound is the case's own and part of a compiled function's key (a
    function traced for one bound never serves another)."""
    names = {s["max_of"] for s in _arg_specs(binding.args or {}) if "max_of" in s}
    return {bound_name(n): largest(params[n]) for n in sorted(names)}
