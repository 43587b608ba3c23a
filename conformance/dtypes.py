"""The floating dtypes a case runs in, and the integer dtypes its values may take."""

from __future__ import annotations

from typing import Literal

import numpy as np

FloatName = Literal["float32", "float64"]
FLOAT_DTYPES: tuple[FloatName, ...] = ("float32", "float64")

#: A value's dtype: ``float`` follows the run's float dtype; the others are held fixed.
ValueDType = Literal["float", "int32", "int64", "bool"]


def eps(name: str) -> float:
    return float(np.finfo(np.dtype(name)).eps)


def round_to(array: np.ndarray, name: str) -> np.ndarray:
    """Round float64 ``array`` to dtype ``name`` and back: exactly what the framework receives
    (a number beyond the dtype's range becomes its infinity, by design: no warning)."""
    with np.errstate(over="ignore"):
        return np.asarray(array, dtype=np.float64).astype(name).astype(np.float64)


def value_numpy_dtype(value_dtype: ValueDType, float_name: str) -> np.dtype:
    return np.dtype(float_name if value_dtype == "float" else value_dtype)
