"""TruncatedGamma(concentration α, rate β) restricted to [low, high] (``two_sided``), [low, ∞)
(``left_truncated``) or [0, high] (``right_truncated``): NumPyro's TwoSidedTruncatedGamma,
LeftTruncatedGamma and RightTruncatedGamma (its ``TruncatedGamma`` function picks one).

    log p(x) = α·log β + (α − 1)·log x − β·x − log Γ(α) − log Z,
    Z = Q(α, β·low),  P(α, β·high)  or  P(α, β·high) − P(α, β·low),

P and Q the regularised lower and upper incomplete gamma functions. Z and the partial
derivatives are taken in the regime that keeps their digits
(:mod:`~conformance.reference.families.truncated_gamma_mass`): a normaliser far below float64's
range (low = 1e6) still gives the finite log density it is, differences of P or Q are taken as
P(b)·(1 − P(a)/P(b)) from their series or fractions, and a narrow interval's mass by quadrature.
The partials in the rate and α are expectations under the truncated density, E[T] − x and
log x − E[log T]; ∂/∂low and ∂/∂high are ±(the Gamma density there)/Z.

The support is closed at both ends (NumPyro's ``greater_than_eq(low)`` and ``interval``), 0
included for the right-truncated Gamma: log p(0) is +inf for α < 1 and log β − log Z for α = 1.
"""

from __future__ import annotations

import numpy as np

from ..core import Arrays, Family, Options, ParamInfo, Support, ValueInfo, per_distinct
from .truncated_gamma_mass import (
    bounds,
    log_gamma_density,
    log_normalizer,
    lower_log_density,
    lower_mask,
    lower_regime,
    narrow,
    narrow_log_density,
    partials,
    upper_log_density,
    upper_regime,
)


class TruncatedGamma(Family):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        alpha, rate, low, high = bounds(params)
        out = log_gamma_density(alpha, rate, value) - log_normalizer(params, parametrization)
        # Far up the tail log Z and −β·x (each ~−β·low) cancel: the regime's own form.
        up = upper_regime(alpha, rate, low, high)
        out = np.where(up["mask"], upper_log_density(alpha, rate, low, up, value), out)
        # Far below the mode (all the mass at high) log Z and log f(x) cancel likewise.
        if parametrization != "left_truncated":
            in_lower = lower_mask(alpha, rate, low, high)
            if np.any(in_lower):
                low_reg = lower_regime(alpha, rate, low, high)
                lower = lower_log_density(alpha, rate, high, low_reg, value)
                out = np.where(in_lower & ~up["mask"], lower, out)
        if parametrization != "two_sided":
            return out
        # Over a narrow interval the density over its mass, as one quadrature of their ratio.
        is_narrow = narrow(alpha, rate, low, high)
        shape = np.broadcast_shapes(np.shape(out), np.shape(value))
        a, r, lo, hi, x = (np.broadcast_to(np.where(is_narrow, v, w), shape)
                           for v, w in ((alpha, 2.0), (rate, 1.0), (low, 1.0), (high, 1.1),
                                        (value, 1.05)))  # fmt: skip
        return np.where(is_narrow, narrow_log_density(a, r, lo, hi, x), out)

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
        alpha, rate = params["concentration"], params["rate"]
        out = partials(params, parametrization, value)
        with np.errstate(all="ignore"):
            out["value"] = np.where(alpha == 1.0, 0.0, (alpha - 1.0) / value) - rate
        return out

    def _cdf(self, params, value, parametrization, options):
        # The mass from the lower end to x over the whole mass, both in their stable regimes; the
        # whole mass once per distinct parameter set (draws share their batch element's).
        low = params.get("low", 0.0)
        high = params.get("high", np.inf)
        x = np.clip(value, low, high)
        upto = {**params, "high": x}
        with np.errstate(all="ignore"):
            kind = "right_truncated" if "low" not in params else "two_sided"
            names = list(params)
            whole = per_distinct(
                lambda *columns: log_normalizer(
                    dict(zip(names, columns, strict=True)), parametrization
                ),
                *params.values(),
            )
            ratio = np.exp(log_normalizer(upto, kind) - whole)
        return np.where(value <= low, 0.0, np.where(value >= high, 1.0, ratio))

    def _mean(self, params, parametrization, options):
        """low + E[T − low], the rate partial's E[T] − x at x = low, each regime's own form (the
        fraction's (1 + T_a)/rate + …, the narrow interval's quadrature): never (α/rate)·
        Z(α + 1)/Z(α) − low, which cancels to the width's digits in a narrow or far interval."""
        low = np.asarray(params.get("low", 0.0), dtype=np.float64)
        with np.errstate(all="ignore"):
            offset = partials(params, parametrization, low)["rate"]
        return low + offset

    def _sample(self, params, shape, rng, parametrization):
        from scipy import stats

        alpha, rate = params["concentration"], params["rate"]
        low = params.get("low", np.zeros(shape))
        high = params.get("high", np.full(shape, np.inf))
        u = rng.uniform(size=shape)
        # Inverse CDF from the nearer tail: above the median through the survival function.
        cdf_low, cdf_high = stats.gamma.cdf(low * rate, alpha), stats.gamma.cdf(high * rate, alpha)
        sf_low, sf_high = stats.gamma.sf(low * rate, alpha), stats.gamma.sf(high * rate, alpha)
        by_cdf = stats.gamma.ppf(cdf_low + u * (cdf_high - cdf_low), alpha)
        by_sf = stats.gamma.isf(sf_low - u * (sf_low - sf_high), alpha)
        by_sf_side = cdf_low > 0.5
        draw = np.where(by_sf_side, by_sf, by_cdf) / rate
        # Where Z underflows (α far above the interval, or ``low`` far up the tail) scipy's
        # inversion has nothing left to invert: invert the oracle's own CDF, which takes Z in
        # its stable regimes, by bisection there.
        mass = np.where(by_sf_side, sf_low - sf_high, cdf_high - cdf_low)
        lost = np.broadcast_to(~(mass > 0.0) | ~np.isfinite(draw), draw.shape)
        draw = np.array(np.clip(draw, low, high), dtype=float)  # an array even for one draw
        if lost.any():
            at = {k: np.broadcast_to(v, shape)[lost] for k, v in params.items()}
            draw[lost] = self._invert_cdf(at, u[lost], parametrization)
        return draw

    def _invert_cdf(self, params: Arrays, u: np.ndarray, parametrization: str) -> np.ndarray:
        """The x with F(x) = u for each draw. An evaluation of the CDF costs about as much at one
        point as at thousands (its continued fractions iterate as long as their slowest point),
        so each parameter set's draws are first bracketed on grids of :data:`GRID` points,
        narrowed to where the draws lie until the grid resolves them, then refined by
        false position: about ten evaluations in all, where inverting each draw from the
        whole support took forty."""
        names = list(params)
        rows = np.stack([np.asarray(params[k], float).ravel() for k in names], axis=1)
        sets, which = np.unique(rows, axis=0, return_inverse=True)
        x = np.empty_like(u)
        for i, row in enumerate(sets):
            mine = which.ravel() == i
            draws = u[mine]
            at = {k: np.full(GRID, row[j]) for j, k in enumerate(names)}
            lo = float(at.get("low", np.zeros(1))[0])
            hi = float(self._upper_bracket(at, np.full(GRID, draws.max()), parametrization)[0])
            for _ in range(4):
                grid = np.linspace(lo, hi, GRID)
                cdf = np.maximum.accumulate(self._cdf(at, grid, parametrization, {}))
                first = max(int(np.searchsorted(cdf, draws.min(), "right")) - 1, 0)
                last = min(int(np.searchsorted(cdf, draws.max(), "left")), GRID - 1)
                if last - first > GRID // 8:
                    break  # the grid resolves the draws
                lo, hi = grid[first], grid[last]
            right = np.clip(np.searchsorted(cdf, draws, "left"), 1, GRID - 1)
            each = {k: np.full(draws.shape, row[j]) for j, k in enumerate(names)}
            x[mine] = self._illinois(each, draws, grid[right - 1], grid[right], parametrization)
        return x

    def _upper_bracket(self, params: Arrays, u: np.ndarray, parametrization: str) -> np.ndarray:
        """``high``, or where it is infinite a point above F⁻¹(u): a step from ``low`` doubled
        until the CDF passes u (a step of 1e-300 reaches 1e300 in about 2,000 doublings)."""
        low = params.get("low", np.zeros_like(u))
        high = params.get("high", np.full_like(u, np.inf))
        step = np.maximum(params["concentration"], 1.0) / params["rate"]
        b = np.where(np.isfinite(high), high, low + step)
        for _ in range(2100):
            short = ~np.isfinite(high) & (self._cdf(params, b, parametrization, {}) < u)
            if not short.any():
                break
            b = np.where(short, low + 2.0 * (b - low), b)
        return b

    def _illinois(
        self, params: Arrays, u: np.ndarray, a: np.ndarray, b: np.ndarray, parametrization: str
    ) -> np.ndarray:
        """F(x) = u between ``a`` and ``b`` by the Illinois variant of false position."""

        def miss(x: np.ndarray) -> np.ndarray:
            return self._cdf(params, x, parametrization, {}) - u

        a, b = np.array(a, float), np.array(b, float)
        fa, fb = miss(a), miss(b)
        side = np.zeros(u.shape)
        x = a + 0.5 * (b - a)
        for _ in range(100):
            with np.errstate(all="ignore"):
                x = (a * fb - b * fa) / (fb - fa)
            x = np.where(np.isfinite(x) & (x > a) & (x < b), x, a + 0.5 * (b - a))
            fx = miss(x)
            # The CDF's own rounding (a ratio of two masses of e^-1e6) is about 1e-9 there.
            if np.all((np.abs(fx) <= PROBABILITY_TOLERANCE) | (b - a <= 4 * np.spacing(b))):
                break
            right = fx < 0  # the root lies above x
            a, fa_next = np.where(right, x, a), np.where(right, fx, fa)
            b, fb_next = np.where(right, b, x), np.where(right, fb, fx)
            # Illinois: an end kept twice in a row has its value halved, so it moves too.
            fa = np.where(~right & (side < 0), 0.5 * fa_next, fa_next)
            fb = np.where(right & (side > 0), 0.5 * fb_next, fb_next)
            side = np.where(right, 1.0, -1.0)
        return x


#: Points of the grids that bracket the draws before false position refines them.
GRID = 513
#: How near F(x) comes to the uniform draw it inverts: 2,001 draws cannot tell 1e-8 apart.
PROBABILITY_TOLERANCE = 1e-8

_BASE = {
    "concentration": ParamInfo(0, "positive", form_changes=(1.0,)),
    "rate": ParamInfo(0, "positive"),
}
TRUNCATED_GAMMA = TruncatedGamma(
    name="TruncatedGamma",
    parametrizations={
        "two_sided": {
            **_BASE,
            "low": ParamInfo(0, "nonnegative"),
            "high": ParamInfo(0, "positive"),
        },
        "left_truncated": {**_BASE, "low": ParamInfo(0, "nonnegative")},
        "right_truncated": {**_BASE, "high": ParamInfo(0, "positive")},
    },
    value=ValueInfo(0, "nonnegative"),
)
