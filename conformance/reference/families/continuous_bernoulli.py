"""ContinuousBernoulli by ``probs`` λ ∈ (0, 1) or ``logits`` l = logit(λ); support [0, 1].

p(x) = C(λ)·λ^x·(1 − λ)^(1−x) with C(λ) = 2·atanh(1 − 2λ)/(1 − 2λ) (and C = 2 at λ = 1/2).
Since atanh(2λ − 1) = l/2 and 2λ − 1 = tanh(l/2), C = l / tanh(l/2) = l / (2λ − 1): one ratio
of same-signed numbers, with no removable singularity to patch except l = 0 exactly. The logit
is computed as 2·atanh(2λ − 1) near λ = 1/2 (2λ − 1 is exact there) and as log λ − log1p(−λ)
elsewhere, so neither cancels. ``probs`` excludes 0 and 1: there the family degenerates to a
point mass, which has no density (torch's docstring also says "(0,1) valued parameters").
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from scipy import special

from ..constants import LOG_2
from ..core import Arrays, Family, Options, ParamInfo, ValueInfo


def _logit(probs: np.ndarray) -> np.ndarray:
    t = 2.0 * probs - 1.0
    central = np.abs(t) < 0.5
    return np.where(central, 2.0 * np.arctanh(t), np.log(probs) - np.log1p(-probs))


def _log_normalizer(logits: np.ndarray, t: np.ndarray) -> np.ndarray:
    """log C = log(l / t) for t = tanh(l/2) = 2λ − 1; log 2 at l = 0."""
    zero = logits == 0.0
    return np.where(zero, LOG_2, np.log(np.where(zero, 2.0, logits) / np.where(zero, 1.0, t)))


#: Taylor coefficients of 1/l − 1/sinh(l) in l, l³, …, l¹⁵.
_DLOGC_DL = (
    0.16666666666666666,
    -0.019444444444444445,
    0.00205026455026455,
    -0.0002099867724867725,
    2.1336045641601196e-05,
    -2.1633474427786596e-06,
    2.192327134456764e-07,
    -2.2213930853920414e-08,
)
#: Taylor coefficients of d/dt log(atanh(t)/t) in t, t³, …, t¹⁷.
_DLOGC_DT = (
    0.6666666666666666,
    0.5777777777777777,
    0.5312169312169313,
    0.5010229276895943,
    0.4792261236705681,
    0.4624385718142332,
    0.44893580676296724,
    0.43773206112524854,
    0.42821598793072063,
)


def _odd_series(x: np.ndarray, coefs: tuple[float, ...]) -> np.ndarray:
    x2 = x * x
    out = np.zeros_like(x)
    for c in reversed(coefs):
        out = c + x2 * out
    return x * out


def _dlogc_dlogits(logits: np.ndarray) -> np.ndarray:
    """d log C/dl = 1/l − 1/sinh l; its Taylor series below |l| = 0.3, where the difference
    would cancel (next term < 1e-16 relative there; the direct form loses < 70 ulps above)."""
    small = np.abs(logits) < 0.3
    l_ = np.where(small, 1.0, logits)
    return np.where(small, _odd_series(logits, _DLOGC_DL), 1.0 / l_ - 1.0 / np.sinh(l_))


def _dlogc_dt(t: np.ndarray, logits: np.ndarray, one_minus_t2: np.ndarray) -> np.ndarray:
    """d/dt log(atanh(t)/t) = 1/((1 − t²)·atanh t) − 1/t; its Taylor series below |t| = 0.1.

    1 − t² is passed in as 4λ(1 − λ): computed as 1 − t·t it keeps no digits near λ = 0 or 1.
    """
    small = np.abs(t) < 0.1
    ts = np.where(small, 1.0, t)
    ls = np.where(small, 1.0, logits)
    return np.where(small, _odd_series(t, _DLOGC_DT), 2.0 / (one_minus_t2 * ls) - 1.0 / ts)


#: Below this |l| the summaries are their series (l/(2π) ≤ 1/π: 20 terms reach 1e-20).
SERIES_BELOW = 2.0


def _bernoulli_numbers(n: int) -> list[Fraction]:
    """B_0..B_n exactly (the Akiyama–Tanigawa algorithm; scipy's ``bernoulli`` is off by
    1.7e-12 at B_4)."""
    out, row = [], []
    for m in range(n + 1):
        row.append(Fraction(1, m + 1))
        for j in range(m, 0, -1):
            row[j - 1] = j * (row[j - 1] - row[j])
        out.append(row[0])
    return out  # B_1 = +½ here; only the even ones are read


_B = [float(b) for b in _bernoulli_numbers(44)]
#: Σ_k B_2k·l^(2k−1)/(2k)! = g(l) − ½, coefficients of l^(2k−2) (the sum is then times l).
_MEAN = tuple(_B[2 * k] / math.factorial(2 * k) for k in range(1, 22))
#: g'(l) = Σ_k (2k − 1)·B_2k·l^(2k−2)/(2k)!.
_VARIANCE = tuple((2 * k - 1) * _B[2 * k] / math.factorial(2 * k) for k in range(1, 22))
#: The entropy −Σ_k (2k − 1)/(2k)·B_2k·l^(2k)/(2k)!, coefficients of l^(2k−2) (times l²).
_ENTROPY = tuple(-(2 * k - 1) / (2 * k) * _B[2 * k] / math.factorial(2 * k) for k in range(1, 22))


def _even_series(logits: np.ndarray, coefs: tuple[float, ...]) -> np.ndarray:
    """Σ_k coefs[k]·l^(2k) by Horner in l²."""
    l2 = logits * logits
    out = np.zeros_like(l2)
    for c in reversed(coefs):
        out = out * l2 + c
    return out


def _near(logits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where the series serve (|l| < 2), and the logits with 2 there (for the direct forms)."""
    near = np.abs(logits) < SERIES_BELOW
    return near, np.where(near, SERIES_BELOW, logits)


class ContinuousBernoulli(Family):
    def _logits_t(self, params: Arrays, parametrization: str) -> tuple[np.ndarray, np.ndarray]:
        if parametrization == "probs":
            p = params["probs"]
            return _logit(p), 2.0 * p - 1.0
        logits = params["logits"]
        return logits, np.tanh(0.5 * logits)

    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        logits, t = self._logits_t(params, parametrization)
        if parametrization == "probs":
            p = params["probs"]
            kernel = special.xlogy(value, p) + special.xlog1py(1.0 - value, -p)
        else:
            # log λ = −softplus(−l), log(1 − λ) = −softplus(l): no log of a rounded sigmoid.
            kernel = -(
                value * np.logaddexp(0.0, -logits) + (1.0 - value) * np.logaddexp(0.0, logits)
            )
        return kernel + _log_normalizer(logits, t)

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        logits, t = self._logits_t(params, parametrization)
        if parametrization == "probs":
            p = params["probs"]
            one_minus_t2 = 4.0 * p * (1.0 - p)
            g = value / p - (1.0 - value) / (1.0 - p) + 2.0 * _dlogc_dt(t, logits, one_minus_t2)
            return {"probs": g, "value": logits}
        g = value - special.expit(logits) + _dlogc_dlogits(logits)
        return {"logits": g, "value": logits}

    def _cdf(self, params, value, parametrization, options):
        # expm1(l·x)/expm1(l) (x at l = 0); for l > 0 as e^{l(x − 1)}·(1 − e^{−lx})/(1 − e^{−l}).
        logits, _ = self._logits_t(params, parametrization)
        x = np.clip(value, 0.0, 1.0)
        with np.errstate(all="ignore"):
            pos = np.exp(logits * (x - 1.0)) * np.expm1(-logits * x) / np.expm1(-logits)
            neg = np.expm1(logits * x) / np.expm1(logits)
            return np.where(logits > 0.0, pos, np.where(logits < 0.0, neg, x))

    def _icdf(self, params, q, parametrization, options):
        # x = log1p(q·expm1(l))/l, exact in the lower tail for either sign of l; past l = 700,
        # where expm1(l) overflows, as 1 + log(q + (1 − q)·e^{−l})/l. x = q at l = 0.
        logits, _ = self._logits_t(params, parametrization)
        big = logits > 700.0
        safe = np.where((logits == 0.0) | big, 1.0, logits)
        x = np.log1p(q * np.expm1(safe)) / safe
        far = np.where(big, logits, 1.0)
        x = np.where(big, 1.0 + np.log(q + (1.0 - q) * np.exp(-far)) / far, x)
        return np.where(logits == 0.0, q, x)

    def _sample(self, params, shape, rng, parametrization):
        logits, _ = self._logits_t(params, parametrization)
        u = rng.random(shape)
        # Inverse CDF x = log1p(u·expm1(l))/l, mirrored for l < 0 so expm1 never overflows
        # towards −1 from the wrong side; x = u at l = 0.
        a = np.abs(logits)
        safe = np.where(a == 0.0, 1.0, a)
        v = np.where(logits >= 0.0, u, 1.0 - u)
        x = np.log1p(v * np.expm1(safe)) / safe
        x = np.where(logits >= 0.0, x, 1.0 - x)
        return np.where(a == 0.0, u, x)

    # The mean is g(l) = 1/(1 − e^{−l}) − 1/l (½ at l = 0), the variance g'(l) = 1/l² −
    # 1/(4·sinh²(l/2)) (the law is an exponential family in l), and the entropy
    # log(sinh(l/2)/(l/2)) + 1 − (l/2)·coth(l/2). Each cancels near l = 0 (to ½, 1/12 and 0),
    # where their Bernoulli-number series (radius 2π) are summed instead, below |l| = 2.
    def _mean(self, params, parametrization, options):
        logits, _ = self._logits_t(params, parametrization)
        near, ls = _near(logits)
        with np.errstate(divide="ignore", invalid="ignore"):
            direct = -1.0 / np.expm1(-ls) - 1.0 / ls
        return np.where(near, 0.5 + _even_series(logits, _MEAN) * logits, direct)

    def _variance(self, params, parametrization, options):
        logits, _ = self._logits_t(params, parametrization)
        near, ls = _near(logits)
        with np.errstate(over="ignore"):
            direct = 1.0 / (ls * ls) - 0.25 / np.sinh(0.5 * ls) ** 2
        return np.where(near, _even_series(logits, _VARIANCE), direct)

    def _entropy(self, params, parametrization, options):
        logits, _ = self._logits_t(params, parametrization)
        near, ls = _near(logits)
        # Even in l; for |l| ≥ 2: 1 − log|l| + log(1 − e^{−|l|}) − |l|/expm1(|l|), no term of
        # size |l| left to cancel.
        a = np.abs(ls)
        with np.errstate(over="ignore"):
            direct = 1.0 - np.log(a) + np.log(-np.expm1(-a)) - a / np.expm1(a)
        return np.where(near, _even_series(logits, _ENTROPY) * logits * logits, direct)


CONTINUOUS_BERNOULLI = ContinuousBernoulli(
    name="ContinuousBernoulli",
    parametrizations={
        "probs": {"probs": ParamInfo(0, "open_unit_interval")},
        "logits": {"logits": ParamInfo(0, "real")},
    },
    value=ValueInfo(0, "unit_interval"),
)
