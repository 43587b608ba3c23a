"""The truncated Gamma's normaliser Z (the Gamma's mass on [low, high], z = rate·bound) and its
partial derivatives, each in the regime that keeps its digits. No family is defined here.

- upper (z_a ≥ α + 1, low > 0): the continued fraction at both ends, Z = Q(z_a)·(1 − r),
  r = Q(z_b)/Q(z_a); log p = (α − 1)·log(x/low) − rate·(x − low) + log hazard(low) − log(1 − r),
  where log Z and −rate·x (each ~−z) would cancel;
- lower (z_b < α + 250): the series at both ends, Z = P(z_b)·(1 − r), r = P(z_a)/P(z_b);
- between (z_a < α + 1, z_b beyond the series): Z = 1 − Q(z_b) − P(z_a);
- a narrow interval: Gauss–Legendre quadrature of the density;
- concentrations below 1 with low > 0: E[log T] by quadrature in log s (the others cancel 1/α).

The partials in rate and α are E[T] − x and log(rate·x) − E[log(rate·T)] under the truncated
density, with E[log(rate·T)] = ∂log I/∂α, I = ∫ s^{α−1} e^{−s} ds over rate·[low, high]:
never α/rate − x − ∂log Z/∂rate or log(rate·x) − ψ(α) − ∂log Z/∂α, which cancel terms of size
α/rate and 1/α. ∂/∂low and ∂/∂high are ±(the Gamma density there)/Z, through the hazards
g/P = α/(z·S) and g/Q = D/z where those regimes hold.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..constants import LOG_2
from ..core import Arrays
from .gamma import gamma_log_density
from .incomplete_gamma import (
    d_log_gammainc,
    fraction_tail,
    log1mexp,
    log_gammainc,
    log_gammaincc,
    log_lower,
    log_prefactor,
    lower_series,
    series_usable,
    upper_fraction,
)

#: Gauss–Legendre nodes for a narrow interval's mass (the log density varies by ≤ NARROW there).
NODES, WEIGHTS = np.polynomial.legendre.leggauss(24)
NARROW = 1.0
#: Gauss–Legendre nodes in u = log s for E[log T] at concentrations below 1 (a smooth integrand).
LOG_NODES, LOG_WEIGHTS = np.polynomial.legendre.leggauss(128)


def log_gamma_density(alpha, rate, x):
    with np.errstate(divide="ignore", invalid="ignore"):
        return gamma_log_density(alpha, rate, x)


def bounds(params: Arrays) -> tuple[np.ndarray, ...]:
    """α, rate, low (0 where absent) and high (inf where absent), broadcast together."""
    arrays = (
        params["concentration"],
        params["rate"],
        params.get("low", 0.0),
        params.get("high", np.inf),
    )
    return tuple(np.asarray(a, np.float64) for a in np.broadcast_arrays(*arrays))


# ----- narrow intervals --------------------------------------------------------------------------
def narrow(alpha, rate, low, high) -> np.ndarray:
    with np.errstate(all="ignore"):
        spread = np.abs((alpha - 1.0) * np.log(high / low)) + rate * (high - low)
        return (low > 0) & (high > low) & np.isfinite(high) & (spread <= NARROW)


def _nodes(alpha, rate, low, high):
    half, mid = 0.5 * (high - low), 0.5 * (high + low)
    nodes = mid[..., None] + half[..., None] * NODES
    return nodes, log_gamma_density(alpha[..., None], rate[..., None], nodes), half


def _log_mass_by_quadrature(alpha, rate, low, high):
    _, logs, half = _nodes(alpha, rate, low, high)
    top = np.max(logs, axis=-1, keepdims=True)
    with np.errstate(divide="ignore"):
        return top[..., 0] + np.log(np.sum(WEIGHTS * np.exp(logs - top), axis=-1) * half)


def narrow_log_density(alpha, rate, low, high, x):
    """log p = −log ∫ f(t)/f(x) dt over a narrow interval, the ratio's log written as
    (α − 1)·log1p((t − x)/x) − rate·(t − x): the density and the normaliser would each be of
    size rate·x and cancel."""
    half, mid = 0.5 * (high - low), 0.5 * (high + low)
    nodes = mid[..., None] + half[..., None] * NODES
    xs = x[..., None]
    with np.errstate(all="ignore"):
        logs = special.xlogy(alpha[..., None] - 1.0, 1.0 + (nodes - xs) / xs)
        logs = logs - rate[..., None] * (nodes - xs)
        top = np.max(logs, axis=-1, keepdims=True)
        total = np.sum(WEIGHTS * np.exp(logs - top), axis=-1) * half
        return -(top[..., 0] + np.log(total))


def narrow_expectations(alpha, rate, low, high, x):
    """E[T − x] and E[log(x/T)] by the same quadrature (E[T] and x agree to the width)."""
    nodes, logs, _ = _nodes(alpha, rate, low, high)
    w = WEIGHTS * np.exp(logs - np.max(logs, axis=-1, keepdims=True))
    w = w / w.sum(-1, keepdims=True)
    offset = ((nodes - x[..., None]) * w).sum(-1)
    log_ratio = (np.log1p((x[..., None] - nodes) / nodes) * w).sum(-1)
    return offset, log_ratio


# ----- the regimes' pieces -----------------------------------------------------------------------
def upper_mask(alpha, rate, low) -> np.ndarray:
    """Where the fraction regime holds: z_a ≥ α + 1 (low > 0)."""
    za = rate * low
    with np.errstate(all="ignore"):
        return (low > 0) & np.isfinite(za) & (za >= alpha + 1.0)


def lower_mask(alpha, rate, low, high) -> np.ndarray:
    """Where the series regime holds: z_b < α + 250 (high finite). Below α = 1 with low > 0,
    P(z_a) and P(z_b) are both ~1 − α·E₁(z): r's logs would cancel, so not there."""
    zb = rate * high
    with np.errstate(all="ignore"):
        return series_usable(alpha, zb) & (zb > 0) & ((alpha >= 1.0) | (low == 0))


def upper_regime(alpha, rate, low, high) -> dict[str, np.ndarray]:
    """Where z_a ≥ α + 1 (low > 0): D, its tail T and ∂D/∂α at both ends, log r, log Q(z_a)."""
    za, zb = rate * low, rate * high
    mask = upper_mask(alpha, rate, low)
    fb = np.isfinite(zb)
    with np.errstate(all="ignore"):
        za_ = np.where(mask, za, alpha + 2.0)
        zb_ = np.where(mask & fb, zb, za_ + 1.0)
        t_a, dt_a = fraction_tail(alpha, za_)
        t_b, dt_b = fraction_tail(alpha, zb_)
        d_a, dd_a = za_ + 1.0 - alpha + t_a, dt_a - 1.0
        d_b, dd_b = zb_ + 1.0 - alpha + t_b, dt_b - 1.0
        # log r = α·log(high/low) − rate·(high − low) − log(D_b/D_a).
        span = np.log1p((high - low) / np.where(mask, low, 1.0))
        log_r = alpha * span - rate * (high - low) - np.log(d_b / d_a)
        log_r = np.where(mask & fb, log_r, -np.inf)
        log_qa = log_prefactor(alpha, za_) - np.log(d_a)
    return {"mask": mask, "za": za_, "zb": zb_, "d_a": d_a, "d_b": d_b, "dd_a": dd_a,
            "dd_b": dd_b, "t_a": t_a, "t_b": t_b, "log_r": log_r, "log_qa": log_qa,
            "span": span}  # fmt: skip


def lower_regime(alpha, rate, low, high) -> dict[str, np.ndarray]:
    """Where z_b < α + 250 (high finite): the series at both ends, log r = log P(z_a)/P(z_b)."""
    za, zb = rate * low, rate * high
    mask = lower_mask(alpha, rate, low, high)
    with np.errstate(all="ignore"):
        zb_ = np.where(mask, zb, 1.0)
        za_ = np.where(mask & (za > 0), za, 0.5 * zb_)
        log_pb, s_b, dls_b = log_lower(alpha, zb_)
        _, s_a, dls_a = log_lower(alpha, za_)
        log_r = alpha * np.log(za_ / zb_) + (zb_ - za_) + np.log(s_a / s_b)
        log_r = np.where(za > 0, log_r, -np.inf)
    return {"mask": mask, "za": za_, "zb": zb_, "log_pb": log_pb, "dls_a": dls_a,
            "dls_b": dls_b, "s_a": s_a, "s_b": s_b, "log_r": log_r}  # fmt: skip


def _rho(log_r):
    """r/(1 − r) from log r (0 where r = 0)."""
    with np.errstate(all="ignore"):
        return np.where(np.isfinite(log_r), 1.0 / np.expm1(-log_r), 0.0)


# ----- the normaliser ----------------------------------------------------------------------------
def log_normalizer(params: Arrays, parametrization: str) -> np.ndarray:
    alpha, rate, low, high = bounds(params)
    za, zb = rate * low, rate * high
    with np.errstate(all="ignore"):
        if parametrization == "right_truncated":
            return log_gammainc(alpha, zb)
        # Each regime is evaluated only where some element is in it, later ones taking
        # precedence: the general way only where no regime holds (most calls are one draw's
        # neighbourhood, all in one regime; the quadrature alone is 24 densities an element).
        in_upper = upper_mask(alpha, rate, low)
        in_lower = lower_mask(alpha, rate, low, high) if parametrization == "two_sided" else False
        is_narrow = narrow(alpha, rate, low, high) if parametrization == "two_sided" else False
        out: np.ndarray | float = np.nan
        if not np.all(in_upper | in_lower | is_narrow):
            if parametrization == "left_truncated":
                out = log_gammaincc(alpha, za)
            else:
                lp_a, lp_b = log_gammainc(alpha, za), log_gammainc(alpha, zb)
                lq_a, lq_b = log_gammaincc(alpha, za), log_gammaincc(alpha, zb)
                out = np.where(
                    lp_a > -LOG_2, lq_a + log1mexp(lq_b - lq_a), lp_b + log1mexp(lp_a - lp_b)
                )
        if np.any(in_lower):
            low_reg = lower_regime(alpha, rate, low, high)
            out = np.where(in_lower, low_reg["log_pb"] + log1mexp(low_reg["log_r"]), out)
        if np.any(in_upper):
            up = upper_regime(alpha, rate, low, high)
            out = np.where(in_upper, up["log_qa"] + log1mexp(up["log_r"]), out)
        if np.any(is_narrow):
            l_, h_ = np.where(is_narrow, low, 1.0), np.where(is_narrow, high, 1.1)
            out = np.where(is_narrow, _log_mass_by_quadrature(alpha, rate, l_, h_), out)
        return np.asarray(out) if np.shape(out) == alpha.shape else np.full(alpha.shape, out)


def upper_log_density(alpha, rate, low, up, x):
    """(α − 1)·log(x/low) − rate·(x − low) + log hazard(low) − log(1 − r), hazard = rate·D_a/z_a;
    log(x/low) by log1p, which keeps the digits of x − low (1 + 1e-6 would lose 1e-10 of them,
    times α − 1 = 1e6)."""
    with np.errstate(all="ignore"):
        safe = np.where(up["mask"], low, 1.0)
        return (
            special.xlog1py(alpha - 1.0, (x - low) / safe)
            - rate * (x - low)
            + np.log(rate * up["d_a"] / up["za"])
            - log1mexp(up["log_r"])
        )


def lower_log_density(
    alpha: np.ndarray, rate: np.ndarray, high: np.ndarray, low_reg: dict, x: np.ndarray
) -> np.ndarray:
    """(α − 1)·log(x/high) − rate·(x − high) + log(α/high) − log S_b − log(1 − r): the density
    over P(z_b)·(1 − r) with the two Gamma densities' a·log terms differenced analytically
    (each is ~−1.2e7 at α = 1e6 and high = 3, leaving 13)."""
    with np.errstate(all="ignore"):
        safe = np.where(low_reg["mask"], high, 1.0)
        # log(x/high) by log1p near high, by the quotient's log far below it (0 included).
        near = np.abs(x - safe) < 0.5 * safe
        power = np.where(
            near,
            special.xlog1py(alpha - 1.0, (x - safe) / safe),
            special.xlogy(alpha - 1.0, x / safe),
        )
        return (
            power
            - rate * (x - safe)
            + np.log(alpha / safe)
            - np.log(low_reg["s_b"])
            - log1mexp(low_reg["log_r"])
        )


# ----- the partials ------------------------------------------------------------------------------
def partials(params: Arrays, parametrization: str, x: np.ndarray) -> dict[str, np.ndarray]:
    """∂log p/∂(rate, concentration) and ∂/∂low, ∂/∂high where the parametrization has them."""
    shape = np.broadcast_shapes(np.shape(x), *(np.shape(v) for v in bounds(params)))
    alpha, rate, low, high = (np.broadcast_to(v, shape) for v in bounds(params))
    x = np.broadcast_to(x, shape)
    log_z = log_normalizer(params, parametrization)
    with np.errstate(all="ignore"):
        shifted = log_normalizer({**params, "concentration": alpha + 1.0}, parametrization)
        acc = {
            "mean": alpha / rate * np.exp(shifted - log_z),
            "mean_log": _general_mean_log(alpha, rate, low, high),
            "f_low": np.exp(log_gamma_density(alpha, rate, low) - log_z),
            "f_high": np.exp(log_gamma_density(alpha, rate, high) - log_z),
        }
        lower = _lower(alpha, rate, low, high, acc)
        out = {
            "rate": acc["mean"] - x,
            "concentration": np.log(rate * x) - acc["mean_log"],
            "low": acc["f_low"],
            "high": -acc["f_high"],
        }
        if lower is not None:
            out["concentration"] = np.where(
                lower["mask"],
                _lower_concentration(alpha, low, high, x, lower),
                out["concentration"],
            )
        _upper(alpha, rate, low, high, x, out)
        _narrow(alpha, rate, low, high, x, out)
    return {k: v for k, v in out.items() if k in ("rate", "concentration") or k in params}


def _general_mean_log(alpha, rate, low, high):
    """E[log(rate·T)] outside the upper and lower regimes: quadrature below α = 1 (low > 0),
    ψ(α) + ∂log Q(z_a)/∂α for a left truncation below the bulk, and (ψ − Q_b·M_b −
    P_a·L_a)/(1 − Q_b − P_a) for an interval over the bulk (M = ∂log(Γ·Q)/∂α from the fraction,
    L = ∂log γ/∂α, P_a = 0 at low = 0), or ψ + (P_b·∂log P_b − P_a·∂log P_a)/(P_b − P_a) for
    an interval below z = α + 1 where the series does not converge (the bulk at large α)."""
    za, zb = rate * low, rate * high
    small = (alpha < 1.0) & (low > 0)
    quad = _quadrature_mean_log(
        np.where(small, alpha, 0.5), np.where(small, za, 1.0), np.where(small, zb, 2.0)
    )
    below = (za > 0) & (za < alpha + 1.0)
    za_ = np.where(below, za, 0.5 * np.minimum(alpha + 1.0, 1.0))
    p_a = np.where(below, np.exp(log_gammainc(alpha, za_)), 0.0)
    q_a = 1.0 - p_a
    d_log_pa = d_log_gammainc(alpha, za_)
    psi = special.digamma(alpha)
    l_a = d_log_pa + psi  # ∂log γ/∂α = ∂log P/∂α + ψ(α)
    left = psi - np.where(p_a > 0, p_a / q_a * d_log_pa, 0.0)
    fb = np.isfinite(zb) & (zb >= alpha + 1.0)
    zb_ = np.where(fb, zb, alpha + 2.0)
    d_b, dd_b = upper_fraction(alpha, zb_)
    q_b = np.where(fb, np.exp(log_prefactor(alpha, zb_) - np.log(d_b)), 0.0)
    m_b = np.log(zb_) - dd_b / d_b
    over = (psi - q_b * m_b - p_a * np.where(p_a > 0, l_a, 0.0)) / (1.0 - q_b - p_a)
    # Both ends below the bulk's upper side (z_b < α + 1): ψ + (P_b·∂log P_b − P_a·∂log P_a)/(P_b − P_a).
    zb_low = np.where(np.isfinite(zb) & (zb < alpha + 1.0), zb, 0.5)
    p_b = np.exp(log_gammainc(alpha, zb_low))
    d_log_pb = d_log_gammainc(alpha, zb_low)
    under = psi + (p_b * d_log_pb - p_a * np.where(p_a > 0, d_log_pa, 0.0)) / (p_b - p_a)
    out = np.where(np.isfinite(zb), np.where(zb < alpha + 1.0, under, over), left)
    return np.where(small, quad, out)


def _lower(alpha, rate, low, high, acc: dict[str, np.ndarray]) -> dict[str, np.ndarray] | None:
    """The series regime: E[T] = (α/rate)·(w_b − r·w_a)/(1 − r) with ρ = r/(1 − r) and
    w = z·S(α + 1)/((α + 1)·S(α)) = P(α + 1)/P(α), and the bound partials
    α/(z·S)·rate·(1 or r)/(1 − r). Returns the regime (its mask where it applies, and ρ) for
    :func:`_lower_concentration`, which gives ∂/∂α there, or None where no element is in it."""
    reg = lower_regime(alpha, rate, low, high)
    mask = reg["mask"] & ~((alpha < 1.0) & (low > 0))
    if not np.any(mask):
        return None
    rho = _rho(reg["log_r"])
    r = np.where(np.isfinite(reg["log_r"]), np.exp(reg["log_r"]), 0.0)
    s1_b, _ = lower_series(alpha + 1.0, reg["zb"])
    s1_a, _ = lower_series(alpha + 1.0, reg["za"])
    w_b = reg["zb"] * s1_b / ((alpha + 1.0) * reg["s_b"])
    w_a = reg["za"] * s1_a / ((alpha + 1.0) * reg["s_a"])
    mean = alpha / rate * (w_b - r * w_a) / (1.0 - r)
    f_high = rate * alpha / (reg["zb"] * reg["s_b"]) / (1.0 - r)
    f_low = rate * alpha / (reg["za"] * reg["s_a"]) * rho
    acc["mean"] = np.where(mask, mean, acc["mean"])
    acc["f_high"] = np.where(mask, f_high, acc["f_high"])
    acc["f_low"] = np.where(mask & (low > 0), f_low, acc["f_low"])
    return {**reg, "mask": mask, "rho": rho}


def _lower_concentration(alpha, low, high, x, reg: dict[str, np.ndarray]) -> np.ndarray:
    """∂log p/∂α in the series regime, log(rate·x) − E[log(rate·T)] with E[log(rate·T)] =
    L_b + ρ·(L_b − L_a) and L = ∂log γ/∂α = log z − 1/α + ∂log S/∂α, the logs of z joined:
    log(x/high) + 1/α − ∂log S_b/∂α − ρ·(log(high/low) + ∂log S_b/∂α − ∂log S_a/∂α).
    log(rate·x) and log z_b, each about −8 where high is tiny, had cancelled to the partial's
    3e-7 at α = 1e6 (1.85e-15 off mpmath where the inputs' conditioning allows 1.78e-15)."""
    with np.errstate(all="ignore"):
        safe_high = np.where(reg["mask"], high, 1.0)
        near = np.abs(x - safe_high) < 0.5 * safe_high
        log_ratio = np.where(near, np.log1p((x - safe_high) / safe_high), np.log(x / safe_high))
        safe_low = np.where(low > 0, low, 1.0)
        gap = np.where(low > 0, np.log(high / safe_low) + reg["dls_b"] - reg["dls_a"], 0.0)
        return log_ratio + 1.0 / alpha - reg["dls_b"] - reg["rho"] * gap


def _upper(alpha, rate, low, high, x, out: dict[str, np.ndarray]) -> None:
    """The fraction regime, with ρ = r/(1 − r), D = z + 1 − α + T, hazard = rate·D/z:
    ∂/∂rate = (1 + T_a)/rate − (x − low) + ρ·(low − high + (T_a − T_b)/rate),
    ∂/∂low = hazard(low)·(1 + ρ), ∂/∂high = −ρ·hazard(high),
    ∂/∂α = log(x/low) + ∂log D_a/∂α + ρ·(log(high/low) − ∂log D_b/∂α + ∂log D_a/∂α)."""
    up = upper_regime(alpha, rate, low, high)
    mask = up["mask"]
    if not np.any(mask):
        return
    finite = np.isfinite(high)
    rho = _rho(up["log_r"])
    t_a, t_b = up["t_a"], up["t_b"]
    between = np.where(finite, low - high + (t_a - t_b) / rate, 0.0)
    g_a, g_b = up["dd_a"] / up["d_a"], np.where(finite, up["dd_b"] / up["d_b"], 0.0)
    log_x = np.log1p((x - low) / np.where(mask, low, 1.0))
    out["rate"] = np.where(mask, (1.0 + t_a) / rate - (x - low) + rho * between, out["rate"])
    out["low"] = np.where(mask, rate * up["d_a"] / up["za"] * (1.0 + rho), out["low"])
    out["high"] = np.where(mask, -rho * rate * up["d_b"] / up["zb"], out["high"])
    span = np.where(finite, up["span"], 0.0)
    d_alpha = log_x + g_a + rho * (span - g_b + g_a)
    out["concentration"] = np.where(mask, d_alpha, out["concentration"])


def _narrow(alpha, rate, low, high, x, out: dict[str, np.ndarray]) -> None:
    is_narrow = narrow(alpha, rate, low, high)
    if not np.any(is_narrow):
        return
    l_, h_ = np.where(is_narrow, low, 1.0), np.where(is_narrow, high, 1.1)
    offset, log_ratio = narrow_expectations(alpha, rate, l_, h_, np.where(is_narrow, x, 1.05))
    out["rate"] = np.where(is_narrow, offset, out["rate"])
    out["concentration"] = np.where(is_narrow, log_ratio, out["concentration"])
    # ∂/∂low = f(low)/Z and ∂/∂high = −f(high)/Z are the density at the bounds, by the same
    # quadrature of ratios (1 − r with r ≈ 1 would keep only the width's digits).
    out["low"] = np.where(
        is_narrow, np.exp(narrow_log_density(alpha, rate, l_, h_, l_)), out["low"]
    )
    out["high"] = np.where(
        is_narrow, -np.exp(narrow_log_density(alpha, rate, l_, h_, h_)), out["high"]
    )


def _quadrature_mean_log(alpha, za, zb):
    """∫ u·e^{αu − e^u} du / ∫ e^{αu − e^u} du over u = log s ∈ [log z_a, log min(z_b, z_a + 60)]
    (smooth for any α > 0; beyond z_a + 60 the integrand is e^{−60} of its value at z_a)."""
    lo, hi = np.log(za), np.log(np.minimum(zb, za + 60.0))
    half, mid = 0.5 * (hi - lo), 0.5 * (hi + lo)
    u = mid[..., None] + half[..., None] * LOG_NODES
    logs = alpha[..., None] * u - np.exp(u)
    w = LOG_WEIGHTS * np.exp(logs - np.max(logs, axis=-1, keepdims=True))
    return (u * w).sum(-1) / w.sum(-1)
