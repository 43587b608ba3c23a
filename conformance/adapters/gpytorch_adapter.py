"""gpytorch.distributions.MultivariateNormal, with a dense tensor or a LinearOperator covariance.

Each covariance representation is its own adapter (``gpytorch``, ``gpytorch.dense``,
``gpytorch.root``, ``gpytorch.diag``) because GPyTorch takes a different code path for each; the
registry's binding says which operator wraps the covariance argument.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from conformance.adapters.base import import_dotted
from conformance.adapters.torch_adapter import TorchAdapter
from conformance.registry import Binding, bindings_for

_OPERATORS = {
    "DenseLinearOperator": "linear_operator.operators.DenseLinearOperator",
    "RootLinearOperator": "linear_operator.operators.RootLinearOperator",
    "DiagLinearOperator": "linear_operator.operators.DiagLinearOperator",
}


class GpytorchAdapter(TorchAdapter):
    name = "gpytorch"
    package = "gpytorch"
    module = "gpytorch"
    validation = "none"  # gpytorch's MultivariateNormal defaults to validate_args=False
    # GPyTorch is differentiated with torch.autograd (what BoTorch's fit_gpytorch_mll does);
    # it does not claim torch.func support, so no functional gradient item is made for it.
    gradient_methods: ClassVar[dict[str, str]] = {"grad": "torch.autograd.grad"}
    bindings = bindings_for("gpytorch")

    def unsupported_inputs(self, binding: Binding, params: Mapping[str, np.ndarray]) -> str | None:
        if binding.options.get("requires") == "diagonal":
            for name in binding.parametrizations or ():
                mat = np.asarray(params[name])
                if np.any(
                    mat - np.eye(mat.shape[-1]) * np.diagonal(mat, axis1=-2, axis2=-1)[..., None]
                ):
                    return f"{self.name} needs a diagonal {name}; this case's is not diagonal"
        return None

    def construct(self, binding: Binding, params: Mapping[str, Any]) -> Any:
        ctor = import_dotted(binding.constructor)
        operator = binding.options.get("operator", "tensor")
        kwargs = {}
        for name, array in params.items():
            keyword = binding.keyword(name)
            if keyword == "covariance_matrix" and operator != "tensor":
                wrap = import_dotted(_OPERATORS[operator])
                if operator == "DiagLinearOperator":
                    array = array.diagonal(dim1=-2, dim2=-1)
                array = wrap(array)
            kwargs[keyword] = array
        return ctor(**kwargs)

    def reproducer_operator(self, binding: Binding, keyword: str, expr: str) -> str:
        """Source for the covariance argument as :meth:`construct` builds it."""
        operator = binding.options.get("operator", "tensor")
        if keyword != "covariance_matrix" or operator == "tensor":
            return expr
        if operator == "DiagLinearOperator":
            expr = f"{expr}.diagonal(dim1=-2, dim2=-1)"
        return f"{_OPERATORS[operator]}({expr})"

    def reproducer_modules(self, binding: Binding) -> set[str]:
        return (
            {"linear_operator.operators"}
            if binding.options.get("operator", "tensor") != "tensor"
            else set()
        )


class GpytorchDenseAdapter(GpytorchAdapter):
    name = "gpytorch.dense"
    bindings = bindings_for("gpytorch.dense")


class GpytorchRootAdapter(GpytorchAdapter):
    name = "gpytorch.root"
    bindings = bindings_for("gpytorch.root")


class GpytorchDiagAdapter(GpytorchAdapter):
    name = "gpytorch.diag"
    bindings = bindings_for("gpytorch.diag")
