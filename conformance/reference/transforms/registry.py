"""The transforms by name, so that a check asks for ``"stick_breaking"`` and gets the oracle's
maths without knowing the module it lives in."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import numpy as np

from ..declarations import OracleError
from .base import Transform

T = TypeVar("T", bound=type[Transform])

_KINDS: dict[str, type[Transform]] = {}


def oracle_transform(cls: T) -> T:
    """Register the decorated :class:`Transform` subclass under its ``name``."""
    if not cls.name or cls.name in _KINDS:
        raise RuntimeError(f"transform {cls.__name__}: name {cls.name!r} missing or taken")
    _KINDS[cls.name] = cls
    return cls


def transform_names() -> list[str]:
    """Every transform the oracle has, by name."""
    return sorted(_KINDS)


def transform_kind(name: str) -> type[Transform]:
    """The class of transform ``name`` (its ``params``, ``bijective``); :class:`OracleError`
    names the known ones otherwise."""
    try:
        return _KINDS[name]
    except KeyError:
        raise OracleError(
            f"unknown transform {name!r}; known: {', '.join(transform_names())}"
        ) from None


def make(name: str, **params: Any) -> Transform:
    """Transform ``name`` with ``params`` bound (see its class's ``params``)."""
    return transform_kind(name)(**params)


def _call(method: str) -> Callable[..., Any]:
    def entry(name: str, *arrays: np.ndarray, params: Mapping[str, Any] | None = None) -> Any:
        return getattr(make(name, **dict(params or {})), method)(*arrays)

    entry.__name__ = method
    entry.__doc__ = f"``make(name, **params).{method}(...)``: the transform's {method}."
    return entry


forward = _call("forward")
inverse = _call("inverse")
log_abs_det_jacobian = _call("log_abs_det_jacobian")
