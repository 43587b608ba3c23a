"""How a reproducer writes GPyTorch code: torch's dialect, with each covariance operator built
by the functions of :mod:`conformance.adapters.gpytorch.operators` (embedded in the script) and
the settings the adapter's numerical path runs under."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Protocol

import numpy as np

from conformance.adapters.gpytorch.covariance import OPERATORS_MODULE, covariance
from conformance.adapters.torch.dialect import TorchDialect
from conformance.registry import Binding


class CovariancePath(Protocol):
    """What the dialect reads of the GPyTorch adapter it writes for (no import of it: the
    adapter imports this module)."""

    operator: ClassVar[str]
    PATH_SETTINGS: ClassVar[tuple[tuple[str, tuple, dict], ...]]
    PROBE_SEED: ClassVar[int | None]

    def operator_call(
        self, matrix: Callable[[], np.ndarray]
    ) -> tuple[Callable[..., Any], tuple] | None: ...


class GpytorchDialect(TorchDialect):
    """torch's dialect, plus the adapter's covariance operator (its own function's source), the
    settings of its numerical path and the seed of its probes."""

    def __init__(self, adapter: CovariancePath) -> None:
        self.adapter = adapter

    def _call(self, binding: Binding, arrays: Mapping[str, Any]):
        found = covariance(binding, arrays)
        return None if found is None else self.adapter.operator_call(lambda: np.asarray(found[1]))

    def argument(self, binding: Binding, keyword: str, expr: str, arrays: Mapping[str, Any]) -> str:
        call = self._call(binding, arrays)
        if keyword != "covariance_matrix" or call is None:
            return expr
        function, args = call
        return f"{function.__name__}({', '.join([expr, *map(repr, args)])})"

    def definitions(self, binding: Binding, arrays: Mapping[str, Any]) -> list[str]:
        call = self._call(binding, arrays)
        if call is None:
            return []
        source = inspect.getsource(call[0]).splitlines()
        return [ln.replace(": Any", "").replace(" -> Any", "") for ln in source]

    def modules(self, binding: Binding) -> set[str]:
        modules = {path.rpartition(".")[0] for path, _, _ in self.adapter.PATH_SETTINGS}
        return modules | ({OPERATORS_MODULE} if self.adapter.operator != "tensor" else set())

    def contexts(self, binding: Binding) -> tuple[list[str], list[str]]:
        contexts = [
            f"{path}({', '.join([*map(repr, args), *(f'{k}={v!r}' for k, v in kwargs.items())])})"
            for path, args, kwargs in self.adapter.PATH_SETTINGS
        ]
        seed = self.adapter.PROBE_SEED
        if seed is None:
            return contexts, []
        return contexts, [f"torch.manual_seed({seed})  # the probes the check drew"]
