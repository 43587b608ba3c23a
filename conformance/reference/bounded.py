"""Bounded test functions of a draw, and their expectations by quadrature.

A heavy-tailed law (a Student t of small df, a Fisher–Snedecor) has no mean or variance to
differentiate, and a derivative's sample mean of E[s] or E[s²] would rest on its rarest draws. A
bounded, smooth test function g with a rapidly decaying derivative keeps the identity every
reparameterisation x = T(θ, ε) satisfies, d/dθ E[g(s)] = E[g'(s)·∂s/∂θ], with terms that stay
light-tailed wherever ∂s/∂θ grows no faster than a power of s.

The functions are Gaussian bumps in a standardised coordinate z = (y − centre)/width, y = s on
the real line and y = log s on the positive half-line (a positive law's log has light tails where
its own right tail is heavy): g₁ = exp(−z²/2) (even: a spread or shape error) and
g₂ = z·exp(−z²/2) (odd: a shift or skew error), the bounded counterparts of s² and s. Their
centre and width are the law's median and quartile spread of y at the item's parameters,
constants of the item, never of the parameters being differentiated.

The expectations are trapezoidal sums of g·p(y), p the density of y, over
y = centre + core·sinh(u) with u uniform: a heavy-tailed law's quartiles can lie 10⁵ times
farther out than the structure of its density at the median (a Student t of df 0.05), and the
map's nodes are spaced like the core near the centre and geometrically beyond, out to
Z_MAX widths. A sum on every other node must agree with the full one (:data:`AGREEMENT`), else
the element is not judged; the sums are smooth in θ, so their Richardson differences
(``reference.Family.bounded_pathwise``) converge like closed forms'.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

#: The bumps are negligible beyond this many widths (exp(−Z_MAX²/2) ≈ 5e-32).
Z_MAX = 12.0
#: The largest step in u of the quadrature's map y = centre + core·sinh(u).
STEP = 1.0 / 64.0
#: How closely the sum over every other node must agree with the full sum, relative to the sum
#: of the terms' magnitudes, for the element's expectations to count as converged.
AGREEMENT = 1e-10
#: Draws of the law (per batch element) that fix each item's centre and width.
PLACEMENT_DRAWS = 4096
PLACEMENT_SEED = 20261129
#: The test functions' names, in the order the oracle's derivatives are given.
NAMES = ("exp(-z²/2)", "z·exp(-z²/2)")


def in_log_scale(support: str) -> bool:
    """Whether the bumps are placed on log s (a positive support) rather than on s."""
    return support == "positive"


def coordinate(s: np.ndarray, log_scale: bool) -> np.ndarray:
    """y of a weighted draw s (log s on the positive half-line); not finite where s leaves the
    scale's domain."""
    with np.errstate(all="ignore"):
        return np.log(s) if log_scale else np.asarray(s, dtype=np.float64)


@dataclass(frozen=True)
class Placement:
    """Per batch element: the bumps' centre and width, and the quadrature's core (the scale of
    the law's density at its median, a fraction of the width for a heavy-tailed law)."""

    centre: np.ndarray
    width: np.ndarray
    core: np.ndarray

    @property
    def placed(self) -> np.ndarray:
        """Where the bumps stand on finite numbers apart."""
        with np.errstate(all="ignore"):
            return (
                np.isfinite(self.centre)
                & np.isfinite(self.width)
                & (self.width > 0)
                & np.isfinite(self.core)
                & (self.core > 0)
            )

    def where(self, mask: np.ndarray) -> Placement:
        """This placement where ``mask``, a harmless stand-in (0, 1, 1) elsewhere."""
        return Placement(
            np.where(mask, self.centre, 0.0),
            np.where(mask, self.width, 1.0),
            np.where(mask, self.core, 1.0),
        )


def placement(y: np.ndarray) -> Placement:
    """From draws of y (n, *batch): the median, the interquartile range over 1.349 (the
    standard deviation of a normal y) and an eighth of the central tenth's range (about σ/32
    for a normal y), never above the width."""
    with np.errstate(all="ignore"):
        q25, q45, centre, q55, q75 = np.nanquantile(y, (0.25, 0.45, 0.5, 0.55, 0.75), axis=0)
        width = (q75 - q25) / 1.349
        core = np.minimum((q55 - q45) / 8.0, width)
    return Placement(centre, width, core)


#: The widths either side of the centre within which every draw must be representable in
#: the draws' dtype (the bumps weigh exp(−GUARD²/2) ≈ 1.5e-8 beyond).
GUARD = 6.0


def within_range(
    centre: np.ndarray, width: np.ndarray, log_scale: bool, dtype: np.dtype
) -> np.ndarray:
    """Per batch element: whether the bumps stay where draws of ``dtype`` can be: below its
    largest number and (on the log scale) above its smallest positive one, where a draw would
    round to 0 and lie on the flat part of no bump. Beyond, the framework's draws cannot show
    the law the oracle integrates over."""
    info = np.finfo(dtype)
    if log_scale:
        low, high = float(np.log(info.smallest_subnormal)), float(np.log(info.max))
    else:
        low, high = -float(info.max), float(info.max)
    with np.errstate(all="ignore"):
        return (centre - GUARD * width >= low) & (centre + GUARD * width <= high)


def derivative_terms(
    s: np.ndarray, ds: np.ndarray, centre: np.ndarray, width: np.ndarray, log_scale: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Each draw's g₁'(s)·∂s/∂θ and g₂'(s)·∂s/∂θ, ``ds`` broadcasting against ``s`` (with the
    parameter's event dimensions after the batch). Where g' is 0 to float64's last bit (a draw
    far outside both bumps, an overflowed heavy tail, an underflowed positive draw) the term is
    0 whatever the derivative: a derivative that overflowed there does not matter to the
    expectation (the caller judges NaN derivatives at finite draws on their own)."""
    y = coordinate(s, log_scale)
    with np.errstate(all="ignore"):
        z = (y - centre) / width
        dz_ds = (1.0 / s if log_scale else np.ones_like(s)) / width
        bump = np.exp(-0.5 * z * z)
        slopes = [-z * bump * dz_ds, (1.0 - z * z) * bump * dz_ds]
    extra = (1,) * (np.ndim(ds) - np.ndim(s))
    out = []
    for slope in slopes:
        slope = np.where(np.isfinite(slope), slope, 0.0).reshape(slope.shape + extra)
        with np.errstate(all="ignore"):
            out.append(np.where(slope == 0.0, 0.0, slope * ds))
    return out[0], out[1]


def expectations(
    log_density: Callable[[np.ndarray], np.ndarray], at: Placement, log_scale: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(E[g₁], E[g₂]) per batch element under the law whose log density at draws x
    (nodes, *batch) ``log_density`` gives, and whether both sums converged (the sum over every
    other node agrees with the full one)."""
    span = np.arcsinh(Z_MAX * at.width / at.core)  # u's reach: Z_MAX widths from the centre
    half = int(np.ceil(float(np.max(span)) / STEP / 2.0)) * 2  # even: u = 0 is a coarse node
    t = np.linspace(-1.0, 1.0, 2 * half + 1).reshape((2 * half + 1,) + (1,) * np.ndim(span))
    u = span * t
    y = at.centre + at.core * np.sinh(u)
    z = (y - at.centre) / at.width
    with np.errstate(all="ignore"):
        x = np.exp(y) if log_scale else y
        log_p = log_density(x) + (y if log_scale else 0.0)
        jacobian = at.core * np.cosh(u) * span * (t[1] - t[0])
        weight = np.exp(log_p - 0.5 * z * z) * jacobian
        weight = np.where(np.isneginf(log_p), 0.0, weight)  # outside the support
    fine, coarse, converged = [], [], np.ones(np.shape(span), dtype=bool)
    for g in (np.ones_like(z), z):
        terms = g * weight
        full = terms.sum(0)
        every_other = 2.0 * terms[::2].sum(0)
        with np.errstate(all="ignore"):
            converged &= np.abs(full - every_other) <= AGREEMENT * np.abs(terms).sum(0)
        fine.append(full)
        coarse.append(every_other)
    return fine[0], fine[1], converged
