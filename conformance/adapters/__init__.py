"""Adapter discovery: the built-in frameworks plus any registered under ``conformance.adapters``."""

from __future__ import annotations

import importlib.metadata
from functools import cache

from conformance.adapters.base import Adapter, import_dotted
from conformance.adapters.gpytorch_adapter import (
    GpytorchAdapter,
    GpytorchBlockDiagAdapter,
    GpytorchDenseAdapter,
    GpytorchDiagAdapter,
    GpytorchIterativeAdapter,
    GpytorchKroneckerAdapter,
    GpytorchRootAdapter,
)
from conformance.adapters.numpyro_adapter import NumpyroAdapter
from conformance.adapters.torch_adapter import TorchAdapter

BUILTIN: tuple[type[Adapter], ...] = (
    TorchAdapter,
    NumpyroAdapter,
    GpytorchAdapter,
    GpytorchDenseAdapter,
    GpytorchRootAdapter,
    GpytorchDiagAdapter,
    GpytorchBlockDiagAdapter,
    GpytorchKroneckerAdapter,
    GpytorchIterativeAdapter,
)

ENTRY_POINT_GROUP = "conformance.adapters"


class AdapterLoadError(RuntimeError):
    """An adapter named on the command line or by an entry point could not be loaded."""


def load_adapter_class(spec: str) -> type[Adapter]:
    """``module:Class`` or ``module.Class`` → the adapter class, checked to be an Adapter."""
    try:
        cls = import_dotted(spec.replace(":", "."))
    except Exception as exc:
        raise AdapterLoadError(
            f"cannot load adapter {spec!r}: {type(exc).__name__}: {exc}"
        ) from exc
    if not (isinstance(cls, type) and issubclass(cls, Adapter)):
        raise AdapterLoadError(f"{spec!r} is not a subclass of conformance.adapters.Adapter")
    return cls


@cache
def entry_point_adapters() -> tuple[type[Adapter], ...]:
    found = []
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        found.append(load_adapter_class(ep.value))
    return tuple(found)


def all_adapters(extra: tuple[str, ...] = ()) -> dict[str, Adapter]:
    """Every adapter by name: built-ins, then entry points, then ``--adapter`` specs."""
    classes = [*BUILTIN, *entry_point_adapters(), *(load_adapter_class(s) for s in extra)]
    out: dict[str, Adapter] = {}
    for cls in classes:
        out[cls.name] = cls()
    return out


__all__ = ["Adapter", "AdapterLoadError", "all_adapters", "load_adapter_class"]
