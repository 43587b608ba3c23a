"""Kumaraswamy(concentration1 a, concentration0 b) on the closed interval [0, 1]:
p(x) = a·b·x^(a−1)·(1 − x^a)^(b−1).

``log(1 − x^a)`` is ``log1mexp(a·log x)``: ``1 − x^a`` computed directly cancels for x near 1
(and for small a at any x). At x = 0 the density is +inf, b or 0 as a <, =, > 1; at x = 1 it is
+inf, a or 0 as b <, =, > 1 — ``0·log 0 = 0`` is made explicit for b = 1.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..constants import LOG_2
from ..core import Arrays, Family, Options, ParamInfo, ValueInfo, vanishing_ratio


def log1mexp(u: np.ndarray) -> np.ndarray:
    """log(1 − e^u) for u ≤ 0 (Mächler's switch at −log 2), -inf at u = 0."""
    near = u > -LOG_2
    return np.where(near, np.log(-np.expm1(np.where(near, u, -1.0))), np.log1p(-np.exp(u)))


class Kumaraswamy(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        a, b = params["concentration1"], params["concentration0"]
        log_one_minus = log1mexp(a * np.log(value))
        tail = np.where(b == 1.0, 0.0, (b - 1.0) * log_one_minus)
        return np.log(a) + np.log(b) + special.xlogy(a - 1.0, value) + tail

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        a, b = params["concentration1"], params["concentration0"]
        log_x = np.log(value)
        u = a * log_x
        ratio = 1.0 / np.expm1(-u)  # x^a / (1 − x^a)
        return {
            "concentration1": 1.0 / a + log_x - (b - 1.0) * log_x * ratio,
            "concentration0": 1.0 / b + log1mexp(u),
            # (a − 1)/x − (b − 1)·a·x^(a−1)/(1 − x^a): written over x it is 0/0 at x = 0 when
            # a = 1 (limit −(b − 1)), and (b − 1)·ratio is 0·inf at x = 1 when b = 1.
            "value": np.where(
                (value == 0.0) & (a == 1.0),
                1.0 - b,
                np.where(
                    b == 1.0,
                    vanishing_ratio(a - 1.0, value),
                    ((a - 1.0) - (b - 1.0) * a * ratio) / value,
                ),
            ),
        }

    def _cdf(self, params, value, parametrization, options):
        # 1 − (1 − x^a)^b, as −expm1(b·log(1 − x^a)) with log(1 − x^a) = log1mexp(a·log x).
        a, b = params["concentration1"], params["concentration0"]
        x = np.clip(value, 0.0, 1.0)
        with np.errstate(divide="ignore"):
            return -np.expm1(b * log1mexp(a * np.log(x)))

    def _sample(self, params, shape, rng, parametrization):
        a, b = params["concentration1"], params["concentration0"]
        u = rng.random(shape)
        # Inverse CDF: x = (1 − (1 − u)^(1/b))^(1/a), with 1 − e^v as −expm1(v).
        return np.exp(np.log(-np.expm1(np.log1p(-u) / b)) / a)


KUMARASWAMY = Kumaraswamy(
    name="Kumaraswamy",
    parametrizations={
        "concentrations": {
            "concentration1": ParamInfo(0, "positive", form_changes=(1.0,)),
            "concentration0": ParamInfo(0, "positive", form_changes=(1.0,)),
        },
    },
    value=ValueInfo(0, "unit_interval"),
)
