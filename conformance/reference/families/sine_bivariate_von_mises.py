"""SineBivariateVonMises(phi_loc μ, psi_loc ν, phi_concentration κ1, psi_concentration κ2,
correlation λ) on the torus [−π, π)² (NumPyro's; Singh, Hnizdo & Demchuk 2002):

    log p(φ, ψ) = κ1·cos(φ − μ) + κ2·cos(ψ − ν) + λ·sin(φ − μ)·sin(ψ − ν) − log C

C = ∫∫ exp(…) over the torus. Integrating ψ first in closed form, 2π·I0(√(κ2² + λ²·sin²θ)),
leaves one smooth periodic integral over θ = φ − μ, which the trapezoid rule on an equally
spaced grid sums to float64 accuracy (exponential convergence; the grid is refined with the
concentrations, and above 1e6 each peak of the integrand gets a grid of its own). NumPyro instead sums the series 4π²·Σ_m C(2m, m)·(λ²/(4κ1κ2))^m·I_m(κ1)·I_m(κ2)
to m = 49: tests hold the oracle to that series summed to convergence in mpmath. ∂ log C
w.r.t. κ1, κ2, λ are the expectations of cos θ, cos(ψ − ν) and sin θ·sin(ψ − ν), the same
quadrature with their weights.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from .. import projections
from ..constants import CIRCLE, LOG_2PI
from ..core import Arrays, Family, Options, ParamInfo, ValueInfo

#: Above this concentration scale the integrand's peaks (~1/√scale wide) are integrated on
#: their own grids; below it one equally spaced grid of up to 64·√scale points resolves them.
PEAKED_ABOVE = 1e6
#: Half-width of a peak's own grid in peak widths, and its points.
PEAK_SPAN, PEAK_POINTS = 40.0, 4001


def _log_integrand(theta, k1, k2, lam, with_ratio: bool = False):
    """log(e^(κ1 cos θ)·I0(ρ)) with ρ = √(κ2² + λ² sin²θ) (the ψ-integral over 2π), and
    I1(ρ)/(ρ·I0(ρ)) (→ ½ at ρ = 0) for the derivatives."""
    s = np.sin(theta)
    rho = np.sqrt(k2 * k2 + (lam * s) ** 2)
    log_terms = k1 * np.cos(theta) + np.log(special.i0e(rho)) + rho
    if not with_ratio:
        return log_terms
    safe = np.where(rho > 0, rho, 1.0)
    ratio = np.where(rho > 0, special.i1e(safe) / (special.i0e(safe) * safe), 0.5)
    return log_terms, ratio


def _nodes(k1: float, k2: float, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """Quadrature nodes over the circle and their weights (summing to 2π) for one element: an
    equally spaced grid (the trapezoid rule, exponentially convergent for a smooth periodic
    integrand) while it resolves the peaks, else trapezoid grids on each peak (the integrand
    is e^(−scale) smaller away from them). The peaks are those of the coarse grid, refined."""
    scale = max(abs(k1), abs(k2), abs(lam), 1.0)
    if scale <= PEAKED_ABOVE:
        n = int(min(max(512, 64 * np.sqrt(scale)), 1 << 16))
        return 2.0 * np.pi * np.arange(n) / n, np.full(n, 2.0 * np.pi / n)
    coarse = np.linspace(-np.pi, np.pi, 1 << 14, endpoint=False)
    g = _log_integrand(coarse, k1, k2, lam)
    width = 1.0 / np.sqrt(scale)
    peaks = []
    for start in (coarse[np.argmax(g)], -coarse[np.argmax(g)]):
        fine = start + np.linspace(-1e-3, 1e-3, 4001)
        peaks.append(fine[np.argmax(_log_integrand(fine, k1, k2, lam))])
    if abs(peaks[0] - peaks[1]) < PEAK_SPAN * width:
        peaks = peaks[:1]
    offsets = np.linspace(-PEAK_SPAN, PEAK_SPAN, PEAK_POINTS) * width
    nodes = np.concatenate([p + offsets for p in peaks])
    step = offsets[1] - offsets[0]
    return nodes, np.full(nodes.shape, step)


def log_normalizer(k1, k2, lam, derivatives: bool = False):
    """log C, and with ``derivatives`` (∂/∂κ1, ∂/∂κ2, ∂/∂λ) of it, elementwise (each distinct
    parameter triple integrated once)."""
    k1, k2, lam = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in (k1, k2, lam)))
    triples = np.stack([k1.ravel(), k2.ravel(), lam.ravel()], axis=-1)
    unique, inverse = np.unique(triples, axis=0, return_inverse=True)
    found = np.empty((len(unique), 4))
    for row, (a, b, c) in enumerate(unique):
        theta, weight = _nodes(a, b, c)
        log_terms, ratio = _log_integrand(theta, a, b, c, with_ratio=True)
        top = np.max(log_terms)
        w = weight * np.exp(log_terms - top)
        total = w.sum()
        s = np.sin(theta)
        found[row] = (
            LOG_2PI + np.log(total) + top,
            (w * np.cos(theta)).sum() / total,
            (w * ratio * b).sum() / total,
            (w * ratio * c * s * s).sum() / total,
        )
    per = found[np.ravel(inverse)].reshape(*k1.shape, 4)
    log_c = per[..., 0]
    return (log_c, (per[..., 1], per[..., 2], per[..., 3])) if derivatives else log_c


def _cos_sin_of_difference(x: np.ndarray, loc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """cos(x − loc), sin(x − loc) by the angle-difference formulas: x − loc itself loses x
    next to a large loc (the generated edge at 3.4e38), while cos and sin of each argument are
    reduced exactly."""
    cx, sx, cl, sl = np.cos(x), np.sin(x), np.cos(loc), np.sin(loc)
    return cx * cl + sx * sl, sx * cl - cx * sl


class SineBivariateVonMises(Family):
    def _event_shape(self, params: Arrays, parametrization: str | None) -> tuple[int, ...]:
        return (2,)

    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        k1, k2, lam = (params[k] for k in ("phi_concentration", "psi_concentration", "correlation"))
        ca, sa = _cos_sin_of_difference(value[..., 0], params["phi_loc"])
        cb, sb = _cos_sin_of_difference(value[..., 1], params["psi_loc"])
        body = k1 * ca + k2 * cb + lam * sa * sb
        return body - log_normalizer(k1, k2, lam)

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        k1, k2, lam = (params[k] for k in ("phi_concentration", "psi_concentration", "correlation"))
        ca, sa = _cos_sin_of_difference(value[..., 0], params["phi_loc"])
        cb, sb = _cos_sin_of_difference(value[..., 1], params["psi_loc"])
        _, (d_k1, d_k2, d_lam) = log_normalizer(k1, k2, lam, derivatives=True)
        d_a = -k1 * sa + lam * ca * sb
        d_b = -k2 * sb + lam * sa * cb
        return {
            "phi_loc": -d_a,
            "psi_loc": -d_b,
            "phi_concentration": ca - d_k1,
            "psi_concentration": cb - d_k2,
            "correlation": sa * sb - d_lam,
            "value": np.stack([d_a, d_b], axis=-1),
        }

    def _projections(self, params, parametrization, options):
        """Each angle: integrating the other out in closed form, φ has density ∝
        e^(κ1 cos(φ − μ))·I0(√(κ2² + λ²·sin²(φ − μ))) (ψ likewise, the roles swapped), a
        CDF the oracle integrates between the draws (:func:`projections.integrated_cdf`),
        cut also at the normaliser's quadrature nodes (which resolve the peaks)."""
        k1, k2, lam = (params[k] for k in ("phi_concentration", "psi_concentration", "correlation"))
        mu, nu = params["phi_loc"], params["psi_loc"]
        batch = np.broadcast_shapes(*(np.shape(a) for a in (k1, k2, lam, mu, nu)))
        k1, k2, lam, mu, nu = (np.broadcast_to(a, batch) for a in (k1, k2, lam, mu, nu))
        found = []
        for i, (name, own, other, loc) in enumerate((("φ", k1, k2, mu), ("ψ", k2, k1, nu))):

            def log_density(j, t, own=own, other=other, loc=loc):
                c, s = _cos_sin_of_difference(t, loc[j])
                rho = np.sqrt(other[j] ** 2 + (lam[j] * s) ** 2)
                return own[j] * c + np.log(special.i0e(rho)) + rho

            def breaks(j, own=own, other=other, loc=loc):
                theta, _ = _nodes(float(own[j]), float(other[j]), float(lam[j]))
                return (theta + loc[j] + np.pi) % (2.0 * np.pi) - np.pi

            def cdf(x, log_density=log_density, breaks=breaks):
                return projections.integrated_cdf(x, batch, log_density, breaks, -np.pi, np.pi)

            found.append(projections.coordinate(i, cdf, name))
        return found

    def _sample(self, params, shape, rng, parametrization):
        """Rejection from the product of two uniform angles with the density's bound
        exp(κ1 + κ2 + |λ|) (slow for large concentrations, exact for any). A position not
        accepted within the attempts is NaN: it was uninitialised memory, so the same seed gave
        other values from run to run (a fresh value's redraw then takes the case's own)."""
        k1, k2, lam = (params[k] for k in ("phi_concentration", "psi_concentration", "correlation"))
        out = np.full((*shape, 2), np.nan)
        todo = np.ones(shape, dtype=bool)
        bound = k1 + k2 + np.abs(lam)
        for _ in range(10000):
            if not todo.any():
                break
            a = rng.uniform(-np.pi, np.pi, shape)
            b = rng.uniform(-np.pi, np.pi, shape)
            body = k1 * np.cos(a) + k2 * np.cos(b) + lam * np.sin(a) * np.sin(b)
            accept = todo & (np.log(rng.random(shape)) < body - bound)
            out[..., 0] = np.where(accept, a, out[..., 0])
            out[..., 1] = np.where(accept, b, out[..., 1])
            todo &= ~accept
        wrapped = out + np.stack([params["phi_loc"], params["psi_loc"]], axis=-1)
        return (wrapped + np.pi) % (2.0 * np.pi) - np.pi


# The locations are "real" here though NumPyro constrains them to [−π, π]: float32's nearest
# π is 3.14159274 > π, which the float64 oracle would call outside while NumPyro, comparing in
# float32, accepts it (the generated edges at ±π would fail for that alone).
_LOC, _CONC = ParamInfo(0, "real"), ParamInfo(0, "positive")
SINE_BIVARIATE_VON_MISES = SineBivariateVonMises(
    name="SineBivariateVonMises",
    parametrizations={
        "correlation": {
            "phi_loc": _LOC,
            "psi_loc": _LOC,
            "phi_concentration": _CONC,
            "psi_concentration": _CONC,
            "correlation": ParamInfo(0, "real"),
        }
    },
    value=ValueInfo(1, CIRCLE),
)
