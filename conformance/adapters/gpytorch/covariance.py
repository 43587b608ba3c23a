"""Which of a GPyTorch binding's parameters is the covariance its adapter wraps in an operator:
read by the adapter and by its reproducer dialect alike (no framework imported)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from conformance.registry import Binding

#: Where linear_operator's operator classes live (a reproducer imports it).
OPERATORS_MODULE = "linear_operator.operators"


def is_covariance(binding: Binding, name: str) -> bool:
    """Whether parameter ``name`` is what the constructor receives as its covariance."""
    if binding.args is not None:
        return binding.args.get("covariance_matrix") == {"param": name}
    return binding.keyword(name) == "covariance_matrix"


def covariance(binding: Binding, params: Mapping[str, Any]) -> tuple[str, Any] | None:
    """(name, array) of the covariance among ``params``, or None."""
    for name, array in params.items():
        if is_covariance(binding, name):
            return name, array
    return None
