"""GPyTorch's MultitaskMultivariateNormal: an MVN over an (n points × t tasks) value.

The covariance is (n·t × n·t); which value element each row refers to is the layout, per
GPyTorch's documentation: ``interleaved`` orders the vector point-major (tasks interleaved:
x[0,0], x[0,1], …, x[1,0], …), ``non_interleaved`` task-major (x[0,0], x[1,0], …, x[0,1], …) —
"block-diagonal w.r.t. inter-observation covariance for each task". The oracle applies the
layout itself; it never asks GPyTorch which order it meant.
"""

from __future__ import annotations

import numpy as np

from .. import projections
from ..core import Arrays, Family, OracleError, ParamInfo, ValueInfo
from .multivariate_normal import MULTIVARIATE_NORMAL


def vec(matrix: np.ndarray, parametrization: str) -> np.ndarray:
    """(…, n, t) → (…, n·t) in the parametrisation's layout."""
    if parametrization == "non_interleaved":
        matrix = np.swapaxes(matrix, -1, -2)
    return matrix.reshape(*matrix.shape[:-2], -1)


def unvec(vector: np.ndarray, n: int, t: int, parametrization: str) -> np.ndarray:
    if parametrization == "non_interleaved":
        return np.swapaxes(vector.reshape(*vector.shape[:-1], t, n), -1, -2)
    return vector.reshape(*vector.shape[:-1], n, t)


class MultitaskMultivariateNormal(Family):
    def _event_shape(self, params: Arrays, parametrization: str | None) -> tuple[int, ...]:
        n, t = np.shape(params["mean"])[-2:]
        cov = np.shape(params["covariance_matrix"])
        if cov[-2:] != (n * t, n * t):
            raise OracleError(
                f"MultitaskMultivariateNormal: mean has event shape ({n}, {t}) but the covariance "
                f"is {cov}; expected (..., {n * t}, {n * t})"
            )
        return (n, t)

    def _mvn(self, params: Arrays, parametrization: str) -> dict[str, np.ndarray]:
        return {
            "loc": vec(params["mean"], parametrization),
            "covariance_matrix": params["covariance_matrix"],
        }

    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options
    ) -> np.ndarray:
        return MULTIVARIATE_NORMAL._log_prob(
            self._mvn(params, parametrization), vec(value, parametrization), "covariance_matrix", {}
        )

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options
    ) -> dict[str, np.ndarray]:
        n, t = value.shape[-2:]
        g = MULTIVARIATE_NORMAL._grad(
            self._mvn(params, parametrization), vec(value, parametrization), "covariance_matrix", {}
        )
        return {
            "mean": unvec(g["loc"], n, t, parametrization),
            "covariance_matrix": g["covariance_matrix"],
            "value": unvec(g["value"], n, t, parametrization),
        }

    def _projections(self, params, parametrization, options):
        mvn = self._mvn(params, parametrization)

        def flatten(x: np.ndarray) -> np.ndarray:
            return vec(x, parametrization)

        return projections.gaussian(mvn["loc"], mvn["covariance_matrix"], flatten)

    def _draw_moments(self, params, weights, parametrization, options):
        """The moments of an MVN over the vectorised value, the weights vectorised alike
        (GPyTorch draws it through its covariance's root decomposition: rsample_grad judges
        those derivatives in expectation)."""
        return MULTIVARIATE_NORMAL._draw_moments(
            self._mvn(params, parametrization),
            vec(weights, parametrization),
            "covariance_matrix",
            {},
        )

    def _sample(self, params, shape, rng, parametrization):
        n, t = params["mean"].shape[-2:]
        flat = MULTIVARIATE_NORMAL._sample(
            self._mvn(params, parametrization), shape, rng, "covariance_matrix"
        )
        return unvec(flat, n, t, parametrization)

    def _summary_of_mvn(self, summary: str, params: Arrays, parametrization: str) -> np.ndarray:
        """The MultivariateNormal's ``summary`` of the vectorised value, laid out as (n, t)."""
        found = MULTIVARIATE_NORMAL.summary(
            summary, self._mvn(params, parametrization), "covariance_matrix"
        )
        if summary == "entropy":
            return found
        n, t = params["mean"].shape[-2:]
        return unvec(found, n, t, parametrization)

    def _mean(self, params, parametrization, options):
        return self._summary_of_mvn("mean", params, parametrization)

    def _variance(self, params, parametrization, options):
        return self._summary_of_mvn("variance", params, parametrization)

    def _mode(self, params, parametrization, options):
        return self._summary_of_mvn("mode", params, parametrization)

    def _entropy(self, params, parametrization, options):
        return self._summary_of_mvn("entropy", params, parametrization)


_PARAMS = {
    "mean": ParamInfo(2, "real"),
    "covariance_matrix": ParamInfo(2, "positive_definite", structure="symmetric"),
}
MULTITASK_MULTIVARIATE_NORMAL = MultitaskMultivariateNormal(
    name="MultitaskMultivariateNormal",
    parametrizations={"interleaved": dict(_PARAMS), "non_interleaved": dict(_PARAMS)},
    value=ValueInfo(2, "real"),
)
