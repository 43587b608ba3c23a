"""torch's ``CumulativeDistributionTransform``: a scalar family's CDF as a transform, held to
the oracle's own CDF and density so that a framework's transform is checked against the same
family the log_prob checks use."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy import optimize

from .. import domains
from ..declarations import OracleError
from ..families import FAMILIES
from .base import ParamSpec, Space, Transform, as_array
from .registry import oracle_transform


@oracle_transform
class CumulativeDistribution(Transform):
    """y = F(x) onto ``unit_interval`` for the oracle family ``family`` at ``params``;
    log|det J| = log f(x). The inverse is F's root, found to float64 precision (the oracle
    keeps no quantile functions)."""

    name = "cumulative_distribution"
    params = (
        ParamSpec("family", static=True),
        ParamSpec("params", static=True),
        ParamSpec("parametrization", static=True, default=None),
    )

    def __init__(
        self, family: str, params: Mapping[str, Any], parametrization: str | None = None
    ) -> None:
        if family not in FAMILIES:
            raise OracleError(f"unknown family {family!r}")
        self.family = FAMILIES[family]
        if self.family.value.event_rank:
            raise OracleError(f"{family} is not a scalar family: it has no CDF transform")
        self.family_params = {k: as_array(v) for k, v in params.items()}
        self.parametrization = parametrization

    @property
    def domain(self) -> Space:
        return Space(self.family.support(self.family_params, self.parametrization).name, 0)

    @property
    def codomain(self) -> Space:
        return Space("unit_interval", 0)

    def forward(self, x: np.ndarray) -> np.ndarray:
        return self.family.cdf(self.family_params, as_array(x), self.parametrization)

    def log_abs_det_jacobian(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return self.family.log_prob(self.family_params, as_array(x), self.parametrization)

    def _cdf_at(self, index: tuple[int, ...], shape: tuple[int, ...], x: float) -> float:
        params = {k: np.broadcast_to(v, shape)[index] for k, v in self.family_params.items()}
        return float(self.family.cdf(params, np.asarray(x), self.parametrization))

    def inverse(self, y: np.ndarray) -> np.ndarray:
        y = as_array(y)
        shape = self.forward_shape(y.shape)
        out = np.full(shape, np.nan)
        ends = domains.interval(self.domain.name)
        lo_end, hi_end = (ends.lo, ends.hi) if ends is not None else (-np.inf, np.inf)
        targets = np.broadcast_to(y, shape)
        for index in np.ndindex(*shape):
            u = float(targets[index])
            if not 0.0 < u < 1.0:
                continue

            def gap(x: float, index: tuple[int, ...] = index, u: float = u) -> float:
                return self._cdf_at(index, shape, x) - u

            lo, hi = max(lo_end, -1.0), min(hi_end, 1.0)
            while lo > lo_end and gap(lo) > 0:
                lo = lo_end if lo - 2 * abs(lo) - 1 < lo_end else lo - 2 * abs(lo) - 1
            while hi < hi_end and gap(hi) < 0:
                hi = hi_end if hi + 2 * abs(hi) + 1 > hi_end else hi + 2 * abs(hi) + 1
            out[index] = optimize.brentq(gap, lo, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps)
        return out

    def forward_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(
            np.broadcast_shapes(tuple(shape), *(v.shape for v in self.family_params.values()))
        )

    def inverse_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return self.forward_shape(shape)
