"""VonMises(loc, concentration): log p = κ·(cos(x − μ) − 1) − log 2π − log i0e(κ).

The exponentially scaled Bessel function ``i0e`` keeps the normaliser finite for any κ (I0
overflows above κ ≈ 713), and cos d − 1 is evaluated as −2·sin²(d/2): near the mode, cos d
rounds to within an ulp of 1 and the difference would keep no digits, which κ then magnifies.

Declared convention ``support``: torch evaluates the 2π-periodic density on the whole real line
(``real``, the default); NumPyro's support is the closed circle [−π, π] and it returns -inf
outside it (``circular``).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from ..constants import LOG_2PI
from ..core import Arrays, Family, Options, ParamInfo, ValueInfo

#: From here on 1 − I1(κ)/I0(κ) comes from the asymptotic series (20 terms: below 1e-16 there).
SERIES_FROM = 30.0


def _hankel(k: int, nu: float) -> float:
    """a_k(ν) of I_ν(κ)·e^{−κ} ~ (2πκ)^{−1/2}·Σ_k (−1)^k·a_k(ν)/κ^k."""
    num = 1.0
    for j in range(1, k + 1):
        num *= 4.0 * nu * nu - (2 * j - 1) ** 2
    return num / (math.factorial(k) * 8.0**k)


#: (−1)^k·(a_k(0) − a_k(1)), k = 1..20: the series of (i0e − i1e)·√(2πκ) in 1/κ.
_GAP = tuple((-1) ** k * (_hankel(k, 0.0) - _hankel(k, 1.0)) for k in range(1, 21))


def one_minus_bessel_ratio(kappa: np.ndarray) -> np.ndarray:
    """1 − I1(κ)/I0(κ) (≈ 1/(2κ) for large κ), without the cancellation of 1 − i1e/i0e.

    ∂log p/∂κ = cos(x − μ) − I1/I0 = (1 − I1/I0) − 2·sin²((x − μ)/2): near the mode of a sharp
    density both terms are ~1/(2κ) and their difference is what matters, so the first must be
    accurate relative to itself, not to 1.
    """
    kappa = np.asarray(kappa, dtype=np.float64)
    big = kappa >= SERIES_FROM
    kb = np.where(big, kappa, SERIES_FROM)
    series = np.zeros_like(kb)
    for coef in reversed(_GAP):
        series = (series + coef) / kb
    asymptotic = series / (np.sqrt(2.0 * np.pi * kb) * special.i0e(kb))
    return np.where(big, asymptotic, 1.0 - special.i1e(kappa) / special.i0e(kappa))


def _difference(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x − y as d + e exactly (Knuth's two-sum): with a loc of 1e38, x − loc rounds away all
    of x, and the angle it leaves is an unrelated one."""
    d = x - y
    back = d - x
    return d, (x - (d - back)) + (-y - back)


def _sin_of_sum(d: np.ndarray, e: np.ndarray, scale: float = 1.0) -> np.ndarray:
    """sin(scale·(d + e)) from the two parts (``scale`` 1 or 0.5: exact on a double)."""
    sd, se = scale * d, scale * e
    return np.sin(sd) * np.cos(se) + np.cos(sd) * np.sin(se)


#: Below this κ the CDF is summed as its Fourier series, from here on as a series of incomplete
#: gamma functions (each converges fast in its own range: see :func:`centered_cdf`).
FOURIER_BELOW = 50.0
FOURIER_TERMS, GAMMA_TERMS = 160, 40


def centered_cdf(d: np.ndarray, kappa: np.ndarray) -> np.ndarray:
    """G(d) = ∫_0^d of the density centred at 0, for d in [−π, π] (G(±π) = ±½).

    κ < 50: (d + 2·Σ_j ρ_j·sin(j·d)/j)/(2π) with ρ_j = I_j(κ)/I_0(κ) ≤ e^{−j²/(2κ)}·…, below
    1e-17 by j = 160. κ ≥ 50: with v = sin(d/2), ∫ e^{κ(cos t − 1)} dt = ∫ e^{−2κv²}·2/√(1 − v²) dv,
    and the binomial series of 1/√(1 − v²) turns it into Σ_k c_k·Γ(k + ½)·(2κ)^{−k−½}·P(k + ½,
    2κ·sin²(d/2)) (c_k = C(2k, k)/4^k), whose terms fall like (k/(2eκ))^k: 40 are far more than
    enough.
    """
    d, kappa = np.broadcast_arrays(np.asarray(d, np.float64), np.asarray(kappa, np.float64))
    out = np.empty(d.shape)
    small = kappa < FOURIER_BELOW
    if small.any():
        ds = d[small]
        # ρ_j depends on κ alone: computed once per distinct κ, not once per value.
        ks, which = np.unique(kappa[small], return_inverse=True)
        i0 = special.i0e(ks)
        total = ds.copy()
        for j in range(1, FOURIER_TERMS + 1):
            total += (2.0 * special.ive(j, ks) / i0)[which] * np.sin(j * ds) / j
        out[small] = total / (2.0 * np.pi)
    if (~small).any():
        dl, kl = d[~small], kappa[~small]
        w = 2.0 * kl * np.sin(0.5 * np.abs(dl)) ** 2
        total = np.zeros_like(dl)
        for k in range(GAMMA_TERMS):
            log_c = special.gammaln(2 * k + 1) - 2.0 * special.gammaln(k + 1) - k * np.log(4.0)
            log_term = log_c + special.gammaln(k + 0.5) - (k + 0.5) * np.log(2.0 * kl)
            total += np.exp(log_term) * special.gammainc(k + 0.5, w)
        out[~small] = np.sign(dl) * total / (2.0 * np.pi * special.i0e(kl))
    return out


def _wrap(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(y, m) with x = y + 2π·m and y in [−π, π)."""
    m = np.floor((x + np.pi) / (2.0 * np.pi))
    return x - 2.0 * np.pi * m, m


def _direction(loc: np.ndarray, options: Options) -> np.ndarray:
    """loc, wrapped into [−π, π) under the ``circular`` support."""
    if options.get("support", "real") == "circular":
        return _wrap(loc)[0]
    return np.asarray(loc, dtype=np.float64)


class VonMises(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        kappa = params["concentration"]
        half_sin = _sin_of_sum(*_difference(value, params["loc"]), 0.5)
        logp = -2.0 * kappa * half_sin * half_sin - LOG_2PI - np.log(special.i0e(kappa))
        if options.get("support", "real") == "circular":
            logp = np.where((value >= -np.pi) & (value <= np.pi), logp, -np.inf)
        return logp

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        kappa = params["concentration"]
        d, e = _difference(value, params["loc"])
        ks = kappa * _sin_of_sum(d, e)
        half_sin = _sin_of_sum(d, e, 0.5)
        return {
            "loc": ks,
            "concentration": one_minus_bessel_ratio(kappa) - 2.0 * half_sin * half_sin,
            "value": -ks,
        }

    def _cdf(self, params, value, parametrization, options):
        # Both samplers wrap their draws into [−π, π): F(x) = G(x − μ) − G(−π − μ) there, with
        # G the unwrapped integral of the density from the mode (G(y + 2π) = G(y) + 1).
        loc, kappa = params["loc"], params["concentration"]
        x = np.clip(value, -np.pi, np.pi)
        y, m = _wrap(x - loc)
        y0, m0 = _wrap(-np.pi - loc)
        return (centered_cdf(y, kappa) + m) - (centered_cdf(y0, kappa) + m0)

    def _sample(self, params, shape, rng, parametrization):
        # NumPy draws on [−π, π]: inside both frameworks' supports.
        return rng.vonmises(params["loc"], params["concentration"], size=shape)

    # The summaries are circular (both frameworks document so): the mean direction, the
    # circular variance 1 − |E e^{iX}| and the modal direction. Under the ``circular`` support
    # (NumPyro's [−π, π]) the directions are loc wrapped into [−π, π); on the real line
    # (torch's) loc itself, one of its 2π-periodic copies.
    def _mean(self, params, parametrization, options):
        return _direction(params["loc"], options)

    def _variance(self, params, parametrization, options):
        """1 − I₁(κ)/I₀(κ), the circular variance (accurate to itself: ≈ 1/(2κ) for large κ)."""
        return one_minus_bessel_ratio(params["concentration"])

    def _mode(self, params, parametrization, options):
        """loc as a direction (see :meth:`_mean`): unique on the circle."""
        return _direction(params["loc"], options)


VON_MISES = VonMises(
    name="VonMises",
    parametrizations={
        "loc_concentration": {
            "loc": ParamInfo(0, "real"),
            "concentration": ParamInfo(0, "positive"),
        },
    },
    value=ValueInfo(0, "real"),
    options={"support": ("real", "circular")},
)
