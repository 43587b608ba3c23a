"""One-dimensional statistics of multivariate draws whose laws are known, for the families'
``_projections`` hooks: a Gaussian's linear projections are Normal, a Student t's are Student t,
a Wishart's quadratic forms are scaled χ², a Dirichlet's coordinates are Beta, an LKJ matrix's
off-diagonal entries are scaled Beta.

Each helper takes parameters already broadcast to a draw's batch and returns
:class:`~reference.core.Projection` objects whose CDFs broadcast with that batch. The directions
are fixed (coordinates, the sum, the alternating sum, one seeded random direction), so an item's
statistics are the same in every run.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import special

from .core import Projection

#: Projections whose variance is below this fraction of the total (a zero-sum vector's sum)
#: are degenerate: not tested.
DEGENERATE = 1e-10


def directions(d: int) -> list[tuple[str, np.ndarray]]:
    """Named unit vectors in d dimensions: the first and last coordinates, the sum, the
    alternating sum and one fixed random direction (each distinct one once)."""
    found: list[tuple[str, np.ndarray]] = []
    eye = np.eye(d)
    for i in sorted({0, d - 1}):
        found.append((f"x[{i}]", eye[i]))
    if d > 1:
        found.append(("sum", np.ones(d) / np.sqrt(d)))
        signs = (-1.0) ** np.arange(d)
        found.append(("alternating sum", signs / np.sqrt(d)))
        u = np.random.default_rng(d).standard_normal(d)
        found.append(("random direction", u / np.linalg.norm(u)))
    return found


def gaussian(
    mean: np.ndarray,
    cov: np.ndarray,
    flatten: Callable[[np.ndarray], np.ndarray],
    df: np.ndarray | None = None,
) -> list[Projection]:
    """uᵀx ~ Normal(uᵀμ, √(uᵀΣu)) for x ~ N(μ, Σ) (Student t with ``df`` for a multivariate t
    whose Σ is the scale matrix), ``flatten`` turning a draw's event into the vector x."""
    # A location given with a size-1 (or no) event dim broadcasts to Σ's dimension.
    d = cov.shape[-1]
    mean = np.broadcast_to(mean, np.broadcast_shapes(np.shape(mean), cov.shape[:-1]))
    total = np.trace(cov, axis1=-2, axis2=-1)
    found = []
    for name, u in directions(d):
        loc = mean @ u
        var = np.einsum("i,...ij,j->...", u, cov, u)
        if np.any(var <= DEGENERATE * total):
            continue
        scale = np.sqrt(var)

        def cdf(y: np.ndarray, loc=loc, scale=scale) -> np.ndarray:
            z = (y - loc) / scale
            return special.ndtr(z) if df is None else special.stdtr(df, z)

        found.append(Projection(name, _linear(u, flatten), cdf))
    return found


def vector(x: np.ndarray) -> np.ndarray:
    return x


def coordinate(i: int, cdf: Callable[[np.ndarray], np.ndarray], name: str = "") -> Projection:
    """The i-th coordinate of a vector draw, with its marginal CDF."""

    def entry(x: np.ndarray) -> np.ndarray:
        return x[..., i]

    return Projection(name or f"x[{i}]", entry, cdf)


def coordinates(d: int) -> list[int]:
    """Which coordinates of a d-vector are tested: the first and the last."""
    return sorted({0, d - 1})


def chi2_quadratic_forms(
    df: np.ndarray, scale: np.ndarray, as_matrix: Callable[[np.ndarray], np.ndarray]
) -> list[Projection]:
    """uᵀWu ~ (uᵀΣu)·χ²(df) for W ~ Wishart(df, Σ); ``as_matrix`` turns a draw into W."""
    found = []
    for name, u in directions(scale.shape[-1]):
        s = np.einsum("i,...ij,j->...", u, scale, u)

        def cdf(y: np.ndarray, s=s) -> np.ndarray:
            return special.gammainc(0.5 * df, 0.5 * np.maximum(y, 0.0) / s)

        quad = f"uᵀWu, u = {name}"
        found.append(Projection(quad, _quadratic(u, as_matrix), cdf))
    return found


def inverse_chi2_quadratic_forms(
    df: np.ndarray, psi: np.ndarray, as_matrix: Callable[[np.ndarray], np.ndarray]
) -> list[Projection]:
    """uᵀΨu/uᵀXu ~ χ²(df − p + 1) for X ~ InverseWishart(df, Ψ): P(uᵀXu ≤ y) is the χ²'s
    survival function at uᵀΨu/y."""
    p = psi.shape[-1]
    found = []
    for name, u in directions(p):
        s = np.einsum("i,...ij,j->...", u, psi, u)

        def cdf(y: np.ndarray, s=s) -> np.ndarray:
            with np.errstate(divide="ignore"):
                return special.gammaincc(0.5 * (df - p + 1.0), 0.5 * s / np.maximum(y, 0.0))

        quad = f"uᵀXu, u = {name}"
        found.append(Projection(quad, _quadratic(u, as_matrix), cdf))
    return found


def lkj_correlations(
    concentration: np.ndarray, d: int, as_correlation: Callable[[np.ndarray], np.ndarray]
) -> list[Projection]:
    """An off-diagonal entry r of an LKJ(η) correlation matrix in d dimensions has
    (r + 1)/2 ~ Beta(η − 1 + d/2, η − 1 + d/2) (LKJ 2009): the entries (1, 0) and (d−1, 0)."""
    if d < 2:
        return []
    b = concentration - 1.0 + 0.5 * d
    found = []
    for i in sorted({1, d - 1}):

        def cdf(y: np.ndarray) -> np.ndarray:
            return special.betainc(b, b, np.clip(0.5 * (y + 1.0), 0.0, 1.0))

        found.append(Projection(f"r[{i}, 0]", _correlation(i, as_correlation), cdf))
    return found


def _linear(
    u: np.ndarray, flatten: Callable[[np.ndarray], np.ndarray]
) -> Callable[[np.ndarray], np.ndarray]:
    def apply(x: np.ndarray) -> np.ndarray:
        return flatten(x) @ u

    return apply


def _quadratic(
    u: np.ndarray, as_matrix: Callable[[np.ndarray], np.ndarray]
) -> Callable[[np.ndarray], np.ndarray]:
    def apply(x: np.ndarray) -> np.ndarray:
        return np.einsum("i,...ij,j->...", u, as_matrix(x), u)

    return apply


def _correlation(
    i: int, as_correlation: Callable[[np.ndarray], np.ndarray]
) -> Callable[[np.ndarray], np.ndarray]:
    def apply(x: np.ndarray) -> np.ndarray:
        return as_correlation(x)[..., i, 0]

    return apply


def gram(factor: np.ndarray) -> np.ndarray:
    """L Lᵀ of a Cholesky-factor draw."""
    return factor @ np.swapaxes(factor, -1, -2)


# ----- counts: discrete statistics (Projection.discrete) --------------------------------------
def counts_in(categories: list[int]) -> Callable[[np.ndarray], np.ndarray]:
    """The draw's counts in ``categories`` added (one category: its count)."""
    chosen = np.asarray(categories)

    def apply(x: np.ndarray) -> np.ndarray:
        return x[..., chosen].sum(-1)

    return apply


def count_groups(d: int) -> list[tuple[str, list[int]]]:
    """Which counts of d categories are tested: the first and the last category, and with four
    or more categories the first half together (the counts sum to the total, so with two
    categories the last repeats the first, with three the half repeats the last)."""
    found = [("x[0]", [0])] + ([(f"x[{d - 1}]", [d - 1])] if d > 2 else [])
    if d >= 4:
        found.append((f"x[0] + … + x[{d // 2 - 1}]", list(range(d // 2))))
    return found


def binomial_cdf(total: np.ndarray, q: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """P(X ≤ k) for X ~ Binomial(total, q), at any real k (read as ⌊k⌋)."""

    # SciPy deprecates non-integer arguments to bdtr: a multinomial's total and ⌊k⌋ are
    # whole numbers held as floats, so integer arrays give the same values without the warning.
    whole = np.asarray(total, dtype=np.float64).astype(np.int64)

    def cdf(k: np.ndarray) -> np.ndarray:
        k = np.floor(k)
        counts = np.clip(k, 0.0, np.maximum(total - 1.0, 0.0)).astype(np.int64)
        with np.errstate(all="ignore"):
            inner = special.bdtr(counts, whole, q)
        return np.where(k < 0, 0.0, np.where(k >= total, 1.0, inner))

    return cdf


def tabulated_cdf(pmf: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """P(X ≤ k) of a law on 0 … G − 1 given its pmf table (G, *batch), at values k whose
    trailing dims broadcast with the batch (any real k, read as ⌊k⌋)."""
    table = np.minimum(np.cumsum(pmf, axis=0), 1.0)
    top, batch = table.shape[0] - 1, table.shape[1:]

    def cdf(k: np.ndarray) -> np.ndarray:
        k = np.floor(np.asarray(k, dtype=np.float64))
        lead = k.shape[: max(k.ndim - len(batch), 0)]
        k = np.broadcast_to(k, lead + np.broadcast_shapes(k.shape[len(lead) :], batch))
        index = np.clip(k, 0, top).astype(np.int64).reshape((-1, *batch))
        at = np.take_along_axis(table, index, axis=0).reshape(k.shape)
        return np.where(k < 0, 0.0, np.where(k >= top, 1.0, at))

    return cdf


#: Gauss–Legendre nodes between neighbouring points of :func:`integrated_cdf`.
INTEGRATION_NODES = 16


def integrated_cdf(
    values: np.ndarray,
    batch: tuple[int, ...],
    log_density: Callable[[tuple[int, ...], np.ndarray], np.ndarray],
    breaks: Callable[[tuple[int, ...]], np.ndarray],
    lower: float,
    upper: float,
) -> np.ndarray:
    """The CDF on [lower, upper] of a density known up to a constant and with no closed-form
    integral, at ``values`` (shape (..., *batch)): per batch element j, ``log_density(j, t)``
    is integrated by Gauss–Legendre between neighbouring points of the sorted values and of
    ``breaks(j)`` (where the density bends: a peak's own grid), the pieces summed once and
    divided by their total, so every value's F comes from one pass and F(upper) = 1 exactly.
    A NaN value gives NaN; values beyond the interval give 0 or 1."""
    x, w = np.polynomial.legendre.leggauss(INTEGRATION_NODES)
    values = np.asarray(values, dtype=np.float64)
    shape = np.broadcast_shapes(values.shape, batch)
    full = np.broadcast_to(values, shape)
    out = np.full(shape, np.nan)
    for j in np.ndindex(*batch):
        column = full[(Ellipsis, *j)] if batch else full
        finite = ~np.isnan(column)
        v = np.clip(column[finite], lower, upper)
        points = np.unique(np.concatenate([[lower, upper], np.clip(breaks(j), lower, upper), v]))
        a, b = points[:-1, None], points[1:, None]
        logs = log_density(j, a + (b - a) * (x + 1.0) / 2.0)
        top = np.max(logs[np.isfinite(logs)]) if np.isfinite(logs).any() else 0.0
        pieces = (np.exp(logs - top) * w).sum(-1) * (b - a)[:, 0] / 2.0
        total = np.concatenate([[0.0], np.cumsum(pieces)])
        found = np.full(column.shape, np.nan)
        found[finite] = total[np.searchsorted(points, v)] / total[-1]
        if batch:
            out[(Ellipsis, *j)] = found
        else:
            out = found
    return out
