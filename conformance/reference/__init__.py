"""NumPy float64 reference oracle: the truth every framework is diffed against.

This package imports NumPy and SciPy only — never a framework — so a framework bug cannot leak
into the expected values. ``tests/oracle/test_reference_isolation.py`` enforces that.
"""

from __future__ import annotations

from .core import (
    CDF,
    PMF,
    PROJECTIONS,
    Evaluation,
    Family,
    OracleError,
    ParamInfo,
    Projection,
    Support,
    ValueInfo,
    unbroadcast,
)
from .families import FAMILIES
from .kl import kl_divergence, kl_pair, kl_pairs
from .transforms import make as make_transform
from .transforms import transform_names


def get_family(name: str) -> Family:
    """The oracle of family ``name``; :class:`OracleError` names the known ones otherwise."""
    try:
        return FAMILIES[name]
    except KeyError:
        raise OracleError(
            f"unknown family {name!r}; known: {', '.join(sorted(FAMILIES))}"
        ) from None


def family_names() -> list[str]:
    return sorted(FAMILIES)


__all__ = [
    "CDF",
    "FAMILIES",
    "PMF",
    "PROJECTIONS",
    "Evaluation",
    "Family",
    "OracleError",
    "ParamInfo",
    "Projection",
    "Support",
    "ValueInfo",
    "family_names",
    "get_family",
    "kl_divergence",
    "kl_pair",
    "kl_pairs",
    "make_transform",
    "transform_names",
    "unbroadcast",
]
