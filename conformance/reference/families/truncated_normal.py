"""TruncatedNormal(loc, scale) restricted to [low, high] (``two_sided``), [low, ∞)
(``left_truncated``) or (−∞, high] (``right_truncated``) — NumPyro's three classes.

log p = log φ(z) − log scale − log Z with Z = Φ(b) − Φ(a), a = (low − loc)/scale,
b = (high − loc)/scale. The difference Φ(b) − Φ(a) is where precision is lost, so log Z is
computed by regime (see :func:`log_gauss_mass`): a Hermite series for narrow intervals, a
cancellation-free log-difference in either tail, and ``log1p(−Φ(a) − Φ(−b))`` across the mode.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from ..constants import HALF_LOG_2PI, LOG_2
from ..core import Arrays, Family, Options, ParamInfo, Support, ValueInfo

SQRT_HALF = np.sqrt(0.5)
#: An interval is narrow, and served by Hermite series, where h·(1 + |m|) ≤ NARROW.
NARROW = 0.05


def _log1mexp(u: np.ndarray) -> np.ndarray:
    """log(1 − e^u) for u < 0."""
    near = u > -LOG_2
    return np.where(near, np.log(-np.expm1(np.where(near, u, -1.0))), np.log1p(-np.exp(u)))


def _log_mass_left(a: np.ndarray, b: np.ndarray, width: np.ndarray) -> np.ndarray:
    """log(Φ(b) − Φ(a)) for a < b ≤ 0, width = b − a.

    With Φ(x) = erfcx(−x/√2)·e^{−x²/2}/2, the gap δ = log Φ(b) − log Φ(a) is
    width·(−a − b)/2 + log(erfcx(−b/√2)/erfcx(−a/√2)): two non-negative terms, no cancellation
    (log_ndtr(b) − log_ndtr(a) would subtract two nearly equal large numbers deep in the tail).
    """
    return special.log_ndtr(b) + _log1mexp(-_left_gap(a, b, width))


def _left_gap(a: np.ndarray, b: np.ndarray, width: np.ndarray) -> np.ndarray:
    """log Φ(b) − log Φ(a) ≥ 0 for a < b ≤ 0 (see :func:`_log_mass_left`)."""
    ea, eb = special.erfcx(-a * SQRT_HALF), special.erfcx(-b * SQRT_HALF)
    return 0.5 * width * -(a + b) + np.log(eb / ea)


def _log_density_in_left_tail(
    z_minus_b: np.ndarray, z_plus_b: np.ndarray, a: np.ndarray, b: np.ndarray, width: np.ndarray
) -> np.ndarray:
    """log φ(z) − log(Φ(b) − Φ(a)) for a < b ≤ 0, without forming z² or b² apart.

    With log Φ(b) = −b²/2 + log(erfcx(−b/√2)/2), the two squares meet as
    −(z − b)(z + b)/2: far in the tail (loc 1e38 above an interval near 0) each square is
    ~1e76 and their difference, the whole answer, would round away.
    """
    log_phi_b = np.log(0.5 * special.erfcx(-b * SQRT_HALF))
    return (
        -0.5 * z_minus_b * z_plus_b - HALF_LOG_2PI - log_phi_b - _log1mexp(-_left_gap(a, b, width))
    )


#: From this many scales beyond a bound on its side of loc, the partials take the tail's form.
TAIL_FROM = 3.0
#: Terms of Laplace's continued fraction: 1e-16 relative from u = TAIL_FROM up.
_MILLS_TERMS = 60


def _mills_excess(u: np.ndarray) -> np.ndarray:
    """c(u) = φ(u)/Φ(−u) − u for u ≥ TAIL_FROM (0 at u = inf), by Laplace's continued fraction
    1/(u + 2/(u + 3/(u + …))): the difference itself, which φ(u)/Φ(−u) − u cancels to
    nothing at u = 1e6."""
    with np.errstate(all="ignore"):
        safe = np.where(np.isfinite(u), u, 1.0)
        t = safe.copy()
        for k in range(_MILLS_TERMS, 1, -1):
            t = safe + k / t
        return np.where(np.isfinite(u), 1.0 / t, 0.0)


def _left_tail_partials(
    z_minus_b: np.ndarray, z_plus_b: np.ndarray, a: np.ndarray, b: np.ndarray, width: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(∂log p/∂loc·scale, ∂log p/∂scale·scale, ∂log Z/∂a, ∂log Z/∂b) for a < b ≤ −TAIL_FROM.

    With u = −b, v = −a, c the Mills excess and E₁ = 1/expm1(log Φ(b) − log Φ(a)):
    ∂log Z/∂b = (u + c(u))(1 + E₁), ∂log Z/∂a = −E₁(v + c(v)), and
    z + ∂_a + ∂_b = (z − b) + c(u) − E₁(width + c(v) − c(u)),
    z² − 1 + a∂_a + b∂_b = (z − b)(z + b) − 1 − u·c(u) + E₁(width(u + v) + v·c(v) − u·c(u)):
    no term of size z² or u² is left to cancel (each is 1e12 at loc = 1e6)."""
    with np.errstate(all="ignore"):
        u, v = -b, -a
        c_u, c_v = _mills_excess(u), _mills_excess(v)
        gap = _left_gap(a, b, width)
        e1 = np.where(np.isfinite(a), 1.0 / np.expm1(gap), 0.0)
        finite_a = np.isfinite(a)
        spread = np.where(finite_a, width + c_v - c_u, 0.0)
        moments = np.where(finite_a, width * (u + v) + v * c_v - u * c_u, 0.0)
        g_b = (u + c_u) * (1.0 + e1)
        g_a = np.where(finite_a, -e1 * (v + c_v), 0.0)
        g_loc = z_minus_b + c_u - e1 * spread
        g_scale = z_minus_b * z_plus_b - 1.0 - u * c_u + e1 * moments
    return g_loc, g_scale, g_a, g_b


def _log_mass_narrow(m: np.ndarray, h: np.ndarray) -> np.ndarray:
    """log ∫ φ over [m − h, m + h] for small h: φ(m)·2h·Σ_k He_2k(m)·h^2k/(2k+1)!.

    Used where h·(1 + |m|) ≤ 0.05; the first omitted term is below 1e-17 relative there.
    """
    m2, h2 = m * m, h * h
    he2 = m2 - 1.0
    he4 = (m2 - 6.0) * m2 + 3.0
    he6 = ((m2 - 15.0) * m2 + 45.0) * m2 - 15.0
    he8 = (((m2 - 28.0) * m2 + 210.0) * m2 - 420.0) * m2 + 105.0
    series = 1.0 + h2 * (he2 / 6.0 + h2 * (he4 / 120.0 + h2 * (he6 / 5040.0 + h2 * he8 / 362880.0)))
    return -0.5 * m2 - HALF_LOG_2PI + np.log(2.0 * h) + np.log(series)


def log_gauss_mass(a: np.ndarray, b: np.ndarray, width: np.ndarray | None = None) -> np.ndarray:
    """log(Φ(b) − Φ(a)) for a < b (either may be infinite), accurate to a few ulps.

    ``width`` is b − a when the caller can compute it more accurately than the rounded a and b
    allow ((high − low)/scale: high − low is exact for close bounds); narrow intervals need it.
    """
    a, b = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    with np.errstate(all="ignore"):
        width = b - a if width is None else np.broadcast_to(np.asarray(width, dtype=float), a.shape)
        finite = np.isfinite(a) & np.isfinite(b)
        h = np.where(finite, 0.5 * width, 1.0)
        m = np.where(finite, 0.5 * (a + b), 0.0)
        narrow = finite & (h * (1.0 + np.abs(m)) <= NARROW)
        left, right = b <= 0.0, a >= 0.0
        central = ~(left | right)
        # Every branch sees safe stand-ins so none produces NaN on the others' inputs.
        sa, sb = np.where(narrow, -1.0, a), np.where(narrow, -0.5, b)
        sw = np.where(narrow, 0.5, np.where(finite, width, np.inf))
        out = np.where(left, _log_mass_left(sa, sb, sw), np.nan)
        out = np.where(right, _log_mass_left(-sb, -sa, sw), out)
        out = np.where(central, np.log1p(-(special.ndtr(sa) + special.ndtr(-sb))), out)
        return np.where(narrow, _log_mass_narrow(m, h), out)


def _standardized_bounds(params: Arrays) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """a = (low − loc)/scale, b = (high − loc)/scale (±inf where absent), and b − a."""
    loc, scale = params["loc"], params["scale"]
    shape = np.broadcast_shapes(np.shape(loc), np.shape(scale))
    a = (params["low"] - loc) / scale if "low" in params else np.full(shape, -np.inf)
    b = (params["high"] - loc) / scale if "high" in params else np.full(shape, np.inf)
    if "low" in params and "high" in params:
        width = (params["high"] - params["low"]) / scale
    else:
        width = np.full(shape, np.inf)
    return a, b, width


class TruncatedNormal(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        scale, loc = params["scale"], params["loc"]
        z = (value - loc) / scale
        a, b, width = _standardized_bounds(params)
        plain = -0.5 * z * z - HALF_LOG_2PI - log_gauss_mass(a, b, width)
        # Where the interval lies in one tail, z² and the mass's log cancel: measured from the
        # nearer bound instead (the narrow regime keeps its series).
        finite = np.isfinite(a) & np.isfinite(b)
        h, m = np.where(finite, 0.5 * width, 1.0), np.where(finite, 0.5 * (a + b), 0.0)
        narrow = finite & (h * (1.0 + np.abs(m)) <= NARROW)
        out = plain
        # The interval below loc (b ≤ 0) is measured from high; one above loc (a ≥ 0) is the
        # same computation mirrored (z → −z, (a, b) → (−b, −a)), measured from low.
        for end, sign, in_tail in (("high", 1.0, b <= 0.0), ("low", -1.0, a >= 0.0)):
            if end not in params:
                continue
            bound, use = params[end], in_tail & ~narrow
            near, far = (b, a) if sign > 0 else (-a, -b)
            sa, sb = np.where(use, far, -2.0), np.where(use, near, -1.0)
            sw = np.where(use, np.where(np.isfinite(width), width, np.inf), 1.0)
            tail = _log_density_in_left_tail(
                sign * (value - bound) / scale,
                sign * ((value - loc) + (bound - loc)) / scale,
                sa,
                sb,
                sw,
            )
            out = np.where(use, tail, out)
        return out - np.log(scale)

    def support(self, params: Arrays, parametrization: str | None = None) -> Support:
        return Support(self.value.support, lower=params.get("low"), upper=params.get("high"))

    def _params_valid(self, params: Arrays, parametrization: str, options: Options) -> np.ndarray:
        ok = super()._params_valid(params, parametrization, options)
        if "low" in params and "high" in params:
            ok = ok & (params["low"] < params["high"])
        return ok

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        scale = params["scale"]
        z = (value - params["loc"]) / scale
        a, b, width = _standardized_bounds(params)
        log_z = log_gauss_mass(a, b, width)
        # ∂log Z/∂a = −φ(a)/Z, ∂log Z/∂b = φ(b)/Z (0 at an infinite bound).
        ga = np.where(np.isfinite(a), -np.exp(-0.5 * a * a - HALF_LOG_2PI - log_z), 0.0)
        gb = np.where(np.isfinite(b), np.exp(-0.5 * b * b - HALF_LOG_2PI - log_z), 0.0)
        a_ga = np.where(np.isfinite(a), a * ga, 0.0)
        b_gb = np.where(np.isfinite(b), b * gb, 0.0)
        g_loc = z + ga + gb
        g_scale = z * z - 1.0 + a_ga + b_gb
        # An interval far to one side of loc: the tail's form (mirrored for the right side,
        # z → −z, (a, b) → (−b, −a), measured from low).
        loc = params["loc"]
        for end, sign, in_tail in (("high", 1.0, b <= -TAIL_FROM), ("low", -1.0, a >= TAIL_FROM)):
            if end not in params or not np.any(in_tail):
                continue
            bound = params[end]
            near, far = (b, a) if sign > 0 else (-a, -b)
            sa = np.where(in_tail, far, -2.0 * TAIL_FROM)
            sb = np.where(in_tail, near, -TAIL_FROM)
            sw = np.where(in_tail, width, TAIL_FROM)
            t_loc, t_scale, t_a, t_b = _left_tail_partials(
                sign * (value - bound) / scale,
                sign * ((value - loc) + (bound - loc)) / scale,
                sa,
                sb,
                sw,
            )
            if sign < 0:
                t_loc, t_a, t_b = -t_loc, -t_b, -t_a
            g_loc = np.where(in_tail, t_loc, g_loc)
            g_scale = np.where(in_tail, t_scale, g_scale)
            ga = np.where(in_tail, t_a, ga)
            gb = np.where(in_tail, t_b, gb)
        if "low" in params and "high" in params:
            g_loc, g_scale, ga, gb = self._narrow_partials(
                params, value, z, a, b, width, (g_loc, g_scale, ga, gb)
            )
        out = {"loc": g_loc / scale, "scale": g_scale / scale, "value": -z / scale}
        if "low" in params:
            out["low"] = -ga / scale
        if "high" in params:
            out["high"] = -gb / scale
        return out

    @staticmethod
    def _narrow_partials(params, value, z, a, b, width, wide):
        """The partials over a narrow interval, from log Z = log φ(m) + log 2h + log S(m, h).

        There z + ∂log Z/∂a + ∂log Z/∂b = (z − m) + S_m/S is a small difference of numbers of
        size |m| when written with φ(a)/Z and φ(b)/Z; written with the series it is exact. With
        S = Σ He_2k(m)·h^2k/(2k+1)!: S_m = Σ 2k·He_(2k−1)(m)·h^2k/(2k+1)!, h·S_h = Σ 2k·He_2k(m)·
        h^2k/(2k+1)!, and a·ga + b·gb = −m² + m·S_m/S + 1 + h·S_h/S.
        """
        h = 0.5 * width
        m = 0.5 * (a + b)
        narrow = np.isfinite(h) & (h * (1.0 + np.abs(m)) <= NARROW)
        hn, mn = np.where(narrow, h, 0.01), np.where(narrow, m, 0.0)
        m2, h2 = mn * mn, hn * hn
        he = {
            1: mn,
            2: m2 - 1.0,
            3: (m2 - 3.0) * mn,
            4: (m2 - 6.0) * m2 + 3.0,
            5: ((m2 - 10.0) * m2 + 15.0) * mn,
            6: ((m2 - 15.0) * m2 + 45.0) * m2 - 15.0,
            7: (((m2 - 21.0) * m2 + 105.0) * m2 - 105.0) * mn,
            8: (((m2 - 28.0) * m2 + 210.0) * m2 - 420.0) * m2 + 105.0,
        }
        s, s_m, h_s_h = np.ones_like(hn), np.zeros_like(hn), np.zeros_like(hn)
        power = np.ones_like(hn)
        for k in range(1, 5):
            power = power * h2
            fact = math.factorial(2 * k + 1)
            s = s + he[2 * k] * power / fact
            s_m = s_m + 2 * k * he[2 * k - 1] * power / fact
            h_s_h = h_s_h + 2 * k * he[2 * k] * power / fact
        # x − (low + high)/2 as the mean of two differences, each exact for x between close bounds.
        z_minus_m = 0.5 * ((value - params["low"]) + (value - params["high"])) / params["scale"]
        d_m, h_d_h = -mn + s_m / s, 1.0 + h_s_h / s  # ∂log Z/∂m, h·∂log Z/∂h
        n_loc = z_minus_m + s_m / s
        n_scale = z_minus_m * (z + mn) + mn * s_m / s + h_s_h / s
        n_ga = 0.5 * (d_m - h_d_h / hn)
        n_gb = 0.5 * (d_m + h_d_h / hn)
        return tuple(
            np.where(narrow, n, w) for n, w in zip((n_loc, n_scale, n_ga, n_gb), wide, strict=True)
        )

    def _cdf(self, params, value, parametrization, options):
        # (Φ(z) − Φ(a))/(Φ(b) − Φ(a)) as a ratio of two interval masses in their stable form.
        scale = params["scale"]
        a, b, width = _standardized_bounds(params)
        z = np.clip((value - params["loc"]) / scale, a, b)
        if "low" in params:
            part = np.maximum(value - params["low"], 0.0) / scale
            if "high" in params:
                part = np.minimum(part, width)
        else:
            part = np.full(np.shape(z), np.inf)
        with np.errstate(all="ignore"):
            ratio = np.exp(log_gauss_mass(a, z, part) - log_gauss_mass(a, b, width))
        return np.where(z <= a, 0.0, np.where(z >= b, 1.0, ratio))

    def _sample(self, params, shape, rng, parametrization):
        # Imported here: scipy.stats takes ~0.6 s to import, and only drawing needs it.
        from scipy import stats

        a, b, _ = _standardized_bounds(params)
        a, b = np.broadcast_to(a, shape), np.broadcast_to(b, shape)
        draw = stats.truncnorm.rvs(a, b, size=shape, random_state=rng)
        return params["loc"] + params["scale"] * draw

    def _mean(self, params, parametrization, options):
        anchor, offset, _ = _moments(params)
        return anchor + params["scale"] * offset

    def _variance(self, params, parametrization, options):
        _, _, spread = _moments(params)
        return params["scale"] ** 2 * spread


def gauss_legendre(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss–Legendre nodes and weights on [−1, 1], by Newton's method on the three-term
    recurrence: weights to a few ulps (NumPy's ``leggauss`` weights are off by up to 6e-15 in
    the interior at n = 64, which the moments below would carry)."""
    x = np.cos(np.pi * (np.arange(1, n + 1) - 0.25) / (n + 0.5))

    def legendre(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(P_n(x), P_n'(x))."""
        p0, p1 = np.ones_like(x), x.copy()
        for j in range(2, n + 1):
            p0, p1 = p1, ((2 * j - 1) * x * p1 - (j - 1) * p0) / j
        return p1, n * (x * p1 - p0) / (x * x - 1.0)

    for _ in range(100):
        p, dp = legendre(x)
        step = p / dp
        x = x - step
        if np.max(np.abs(step)) < 1e-16:
            break
    _, dp = legendre(x)
    return x[::-1], 2.0 / ((1.0 - x * x) * dp * dp)[::-1]


#: Gauss–Legendre nodes for the moments: the integrand is e^(−y(y + 2m)/2) over at most 2·√90
#: of its own scales (an entire function; 64 nodes leave under 1e-20 there).
MOMENT_NODES, MOMENT_WEIGHTS = gauss_legendre(64)
#: The moments' range is cut where the density has fallen by e^(−45) from its mode (what lies
#: beyond moves the variance by under 1e-17 of itself).
MOMENT_CUT = 45.0


def _reach(m: np.ndarray) -> np.ndarray:
    """The y ≥ 0 where y·(y + 2m)/2 = MOMENT_CUT (m ≥ 0), in the form that does not cancel."""
    return 2.0 * MOMENT_CUT / (np.sqrt(m * m + 2.0 * MOMENT_CUT) + m)


def _sum_of_offsets(params: Arrays, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a + b = ((low − loc) + (high − loc))/scale, summed before dividing (where both exist)."""
    if "low" in params and "high" in params:
        loc = params["loc"]
        return ((params["low"] - loc) + (params["high"] - loc)) / params["scale"]
    return a + b


def _moments(params: Arrays) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(anchor, E[X − anchor]/scale, Var[X]/scale²) by quadrature about the mode.

    In standard units the density is ∝ e^(−z²/2) on [a, b]; measured from its mode m (0, or the
    bound nearer to it) it is e^(−y·(y + 2m)/2), y = z − m, never larger than 1 and with no z²
    formed (1e12 each at a bound 1e6 scales out). Its first two moments about the mode are
    summed by Gauss–Legendre over the range where it is above e^(−45), the variance as
    E[(y − E y)²]: the closed forms (φ(a) − φ(b))/Z and 1 + (aφ(a) − bφ(b))/Z − (…)² cancel to
    nothing for a narrow interval or one far in a tail. The anchor is the mode in the
    parameters' units (low, high or loc), so the mean is anchor + scale·E[y] without the
    rounding of loc + (low − loc).
    """
    a, b, width = _standardized_bounds(params)
    loc = params["loc"]
    shape = np.broadcast_shapes(np.shape(a), np.shape(b), np.shape(loc))
    a, b, width = (np.broadcast_to(v, shape) for v in (a, b, width))
    at_low, at_high = a >= 0.0, b <= 0.0
    mode = np.where(at_low, a, np.where(at_high, b, 0.0))
    with np.errstate(invalid="ignore"):
        lo = np.where(at_low, 0.0, np.where(at_high, -width, a))
        hi = np.where(at_low, width, np.where(at_high, 0.0, b))
    lo = np.maximum(lo, -_reach(np.maximum(-mode, 0.0)))
    hi = np.minimum(hi, _reach(np.maximum(mode, 0.0)))
    half, mid = 0.5 * (hi - lo), 0.5 * (hi + lo)
    y = mid[..., None] + half[..., None] * MOMENT_NODES
    weights = MOMENT_WEIGHTS * np.exp(-0.5 * y * (y + 2.0 * mode[..., None]))
    weights = weights / weights.sum(-1, keepdims=True)
    first = (weights * y).sum(-1)
    spread = (weights * (y - first[..., None]) ** 2).sum(-1)
    # With the mode inside, E[z] = (φ(a) − φ(b))/Z may be far below the quadrature's eps of
    # the spread (9e-12 at [−7, 30]): there it is taken in closed form, the difference as
    # −φ(a)·expm1(−width·(a + b)/2) (±φ of the finite bound where the other is infinite).
    inside = ~(at_low | at_high)
    if np.any(inside):
        with np.errstate(all="ignore"):
            sa, sb = np.where(inside, a, -1.0), np.where(inside, b, 1.0)
            sw = np.where(inside, width, 2.0)
            phi_a = np.exp(-0.5 * sa * sa - HALF_LOG_2PI)
            phi_b = np.exp(-0.5 * sb * sb - HALF_LOG_2PI)
            total = _sum_of_offsets(params, sa, sb)
            gap = np.where(
                np.isinf(sb),
                phi_a,
                np.where(np.isinf(sa), -phi_b, -phi_a * np.expm1(-0.5 * sw * total)),
            )
            closed = gap / np.exp(log_gauss_mass(sa, sb, sw))
        first = np.where(inside, closed, first)
    anchor = loc
    if "low" in params:
        anchor = np.where(at_low, params["low"], anchor)
    if "high" in params:
        anchor = np.where(at_high, params["high"], anchor)
    return np.broadcast_to(anchor, shape), first, spread


_LOC_SCALE = {"loc": ParamInfo(0, "real"), "scale": ParamInfo(0, "positive")}
TRUNCATED_NORMAL = TruncatedNormal(
    name="TruncatedNormal",
    parametrizations={
        "two_sided": {**_LOC_SCALE, "low": ParamInfo(0, "real"), "high": ParamInfo(0, "real")},
        "left_truncated": {**_LOC_SCALE, "low": ParamInfo(0, "real")},
        "right_truncated": {**_LOC_SCALE, "high": ParamInfo(0, "real")},
    },
    value=ValueInfo(0, "real"),
)
