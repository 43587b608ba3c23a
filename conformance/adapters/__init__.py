"""Adapter discovery: the built-in frameworks plus any registered under ``conformance.adapters``."""

from __future__ import annotations

import importlib.metadata
from functools import cache

from conformance.adapters.base import Adapter, import_dotted
from conformance.adapters.capabilities import disagreements
from conformance.adapters.gpytorch.adapter import (
    GpytorchAdapter,
    GpytorchBlockDiagAdapter,
    GpytorchDenseAdapter,
    GpytorchDiagAdapter,
    GpytorchIterativeAdapter,
    GpytorchKroneckerAdapter,
    GpytorchRootAdapter,
)
from conformance.adapters.hooks import Command
from conformance.adapters.numpyro.adapter import NumpyroAdapter
from conformance.adapters.torch.adapter import TorchAdapter

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


def installed_adapter_classes() -> tuple[type[Adapter], ...]:
    """The built-in adapters and those registered under the entry point group."""
    return (*BUILTIN, *entry_point_adapters())


def reported_packages(classes: tuple[type[Adapter], ...] | None = None) -> tuple[str, ...]:
    """The distributions whose versions a run reports, in adapter order, each once (an adapter
    that declares none reports its own package)."""
    found: dict[str, None] = {}
    for cls in installed_adapter_classes() if classes is None else classes:
        for name in cls.reported_packages or (cls.package,):
            found[name] = None
    return tuple(found)


def imported_modules(classes: tuple[type[Adapter], ...] = BUILTIN) -> tuple[str, ...]:
    """The modules users import to use these adapters' frameworks, each once."""
    return tuple(dict.fromkeys(m for cls in classes for m in cls.imported_modules or (cls.module,)))


def all_adapters(extra: tuple[str, ...] = ()) -> dict[str, Adapter]:
    """Every adapter by name: built-ins, then entry points, then ``--adapter`` specs."""
    classes = [*BUILTIN, *entry_point_adapters(), *(load_adapter_class(s) for s in extra)]
    out: dict[str, Adapter] = {}
    for cls in classes:
        adapter = out[cls.name] = cls()
        claims = disagreements(adapter)
        if claims:  # an operation it names but cannot run would be skipped without a word
            raise AdapterLoadError(f"adapter {cls.__name__}: " + "; ".join(claims))
    return out


__all__ = [
    "Adapter",
    "AdapterLoadError",
    "Command",
    "all_adapters",
    "imported_modules",
    "installed_adapter_classes",
    "load_adapter_class",
    "reported_packages",
]
