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
from .beta import log_beta
from .binomial import log_rising
from .gamma import lgamma_second_difference, log_expm1

EULER_GAMMA = float(np.euler_gamma)


def log1mexp(u: np.ndarray) -> np.ndarray:
    """log(1 − e^u) for u ≤ 0 (Mächler's switch at −log 2), -inf at u = 0."""
    near = u > -LOG_2
    return np.where(near, np.log(-np.expm1(np.where(near, u, -1.0))), np.log1p(-np.exp(u)))


#: Below this concentration0 the moment gap is summed as a series in it (see log_moment_gap).
SMALL_B = 0.1
#: Terms of the series in t (at most (2t)^n ≤ 2^−n each) and in b (≤ C(n + j − 1, j)·0.1^j).
T_TERMS, B_TERMS = 60, 60
#: (−1)^(j+1)·C(n + j − 1, j)·ζ(n + j), j = 1..B_TERMS, for each n = 2..T_TERMS + 1: the Taylor
#: coefficients in b of ζ(n, 1) − ζ(n, 1 + b).
_ZETA_GAP = {
    n: tuple(
        (-1.0) ** (j + 1) * special.binom(n + j - 1, j) * special.zeta(n + j)
        for j in range(1, B_TERMS + 1)
    )
    for n in range(2, T_TERMS + 2)
}


def log_moment_gap(t: np.ndarray, b: np.ndarray) -> np.ndarray:
    """D = log E[X²] − 2·log E[X] for Kumaraswamy(1/t, b): Δ(1, t) − Δ(1 + b, t), where
    Δ(c, h) = log Γ(c + 2h) − 2·log Γ(c + h) + log Γ(c), in the form that keeps its digits.

    Δ(c, h) = Σ_{n≥2} (−1)^n·ζ(n, c)·(2^n − 2)·h^n/n, so D is that series with ζ(n, 1) −
    ζ(n, 1 + b) for ζ(n, c): for 2t ≤ 1/2 and b ≥ 0.1 the two Δ's series
    (:func:`lgamma_second_difference`); for b < 0.1, where the two ζ's agree to b·n·ζ(n + 1),
    their difference as its own series in b. For 2t > 1/2: the log Γ's paired by their
    arguments' shift b (log_rising, each ~b·log t) where b ≤ t, the two Δ's where b > t (the
    second by its series), and for b < 0.1 the series in b of −Σ_j b^j/j!·[ψ^(j−1)(1 + 2t) −
    2·ψ^(j−1)(1 + t) + ψ^(j−1)(1)].
    """
    t, b = np.broadcast_arrays(np.asarray(t, np.float64), np.asarray(b, np.float64))
    near = 2.0 * t <= 0.5
    small = b < SMALL_B
    out = np.full(t.shape, np.nan)
    if np.any(near & small):
        ts, bs = np.where(near & small, t, 0.1), np.where(near & small, b, 0.05)
        total = np.zeros_like(ts)
        terms = []
        power = ts * ts
        for n in range(2, T_TERMS + 2):
            gap = np.zeros_like(bs)
            for coef in reversed(_ZETA_GAP[n]):
                gap = (gap + coef) * bs
            terms.append((-1.0) ** n * (2.0**n - 2.0) * power / n * gap)
            power = power * ts
        for term in reversed(terms):
            total = total + term
        out = np.where(near & small, total, out)
    if np.any(near & ~small):
        tn, bn = np.where(near & ~small, t, 0.1), np.where(near & ~small, b, 1.0)
        both = lgamma_second_difference(1.0, tn) - lgamma_second_difference(1.0 + bn, tn)
        out = np.where(near & ~small, both, out)
    if np.any(~near & small):
        tf, bf = np.where(~near & small, t, 1.0), np.where(~near & small, b, 0.05)
        total = np.zeros_like(tf)
        factorial = 1.0
        power = np.ones_like(bf)
        for j in range(1, 21):
            factorial *= j
            power = power * bf
            bracket = (
                special.polygamma(j - 1, 1.0 + 2.0 * tf)
                - 2.0 * special.polygamma(j - 1, 1.0 + tf)
                + special.polygamma(j - 1, 1.0)
            )
            total = total - power / factorial * bracket
        out = np.where(~near & small, total, out)
    if np.any(~near & ~small):
        tf, bf = np.where(~near & ~small, t, 1.0), np.where(~near & ~small, b, 1.0)
        paired = (
            2.0 * log_rising(1.0 + tf, bf)
            - log_rising(1.0 + 2.0 * tf, bf)
            - log_rising(np.ones_like(bf), bf)
        )
        split = lgamma_second_difference(1.0, tf) - lgamma_second_difference(1.0 + bf, tf)
        out = np.where(~near & ~small, np.where(bf <= tf, paired, split), out)
    return out


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

    def _icdf(self, params, q, parametrization, options):
        # (1 − (1 − q)^(1/b))^(1/a), with 1 − e^v as −expm1(v).
        a, b = params["concentration1"], params["concentration0"]
        return np.exp(np.log(-np.expm1(np.log1p(-q) / b)) / a)

    def _sample(self, params, shape, rng, parametrization):
        a, b = params["concentration1"], params["concentration0"]
        u = rng.random(shape)
        # Inverse CDF: x = (1 − (1 − u)^(1/b))^(1/a), with 1 − e^v as −expm1(v).
        return np.exp(np.log(-np.expm1(np.log1p(-u) / b)) / a)

    def _mean(self, params, parametrization, options):
        # E[X^n] = b·B(1 + n/a, b).
        a, b = params["concentration1"], params["concentration0"]
        return np.exp(np.log(b) + log_beta(1.0 + 1.0 / a, b))

    def _variance(self, params, parametrization, options):
        # E[X]²·expm1(D), D = log E[X²] − 2·log E[X] (log_moment_gap): O(t²) at a large a,
        # where E[X²] − E[X]² would keep nothing of it.
        a, b = params["concentration1"], params["concentration0"]
        t = 1.0 / a
        log_mean = np.log(b) + log_beta(1.0 + t, b)
        return np.exp(2.0 * log_mean + log_expm1(log_moment_gap(t, b)))

    def _mode(self, params, parametrization, options):
        """((a − 1)/(ab − 1))^(1/a) for a, b ≥ 1 (not both 1); the end the density rises to
        otherwise (0 for a ≤ 1 ≤ b, 1 for b ≤ 1 ≤ a); NaN where it is not unique (a = b = 1,
        or a, b < 1: two modes)."""
        a, b = params["concentration1"], params["concentration0"]
        with np.errstate(divide="ignore", invalid="ignore"):
            # ab − 1 = (a − 1) + a·(b − 1): each difference exact near 1.
            log_inner = (np.log(a - 1.0) - np.log((a - 1.0) + a * (b - 1.0))) / a
        flat = (a == 1.0) & (b == 1.0)
        at_zero = (a <= 1.0) & (b >= 1.0) & ~flat
        at_one = (b <= 1.0) & (a >= 1.0) & ~flat
        ends = np.where(at_zero, 0.0, np.where(at_one, 1.0, np.nan))
        return np.where((a > 1.0) & (b > 1.0), np.exp(log_inner), ends)

    def _entropy(self, params, parametrization, options):
        # (1 − 1/b) + (1 − 1/a)·H_b − log(a·b), H_b = ψ(b + 1) + γ the harmonic number.
        a, b = params["concentration1"], params["concentration0"]
        harmonic = special.digamma(b + 1.0) + EULER_GAMMA
        return (1.0 - 1.0 / b) + (1.0 - 1.0 / a) * harmonic - np.log(a) - np.log(b)


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
