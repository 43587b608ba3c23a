"""KL divergences between Gaussians (MultivariateNormal in each parametrisation,
LowRankMultivariateNormal, a diagonal Independent(Normal), CirculantNormal) and between
Wisharts.

Each side is reduced to its mean and the lower Cholesky factor L of its covariance (from a
precision P without inverting it: with J the exchange matrix and chol(J·P·J) = K,
L = J·K⁻ᵀ·J and L⁻¹ = J·Kᵀ·J). With M = L_q⁻¹·L_p (lower triangular, diagonal
L_p,ii/L_q,ii) and z = L_q⁻¹·(μ_q − μ_p):

    KL = ½·(tr(Σq⁻¹Σp) − n + log|Σq|/|Σp| + ‖z‖²)
       = ½·(Σ_{i>j} M_ij² + Σ_i (e^{2ℓ_i} − 1 − 2ℓ_i) + ‖z‖²),   ℓ_i = log(L_p,ii/L_q,ii),

every term ≥ 0: no cancellation when p ≈ q. Both sides' parameters are broadcast to the one
batch before anything is factored, so p's and q's batch shapes may differ (the Mahalanobis term
of a batch of p against a batch of q is where frameworks have slipped).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg

from ..core import OracleError
from ..families.circulant_normal import CIRCULANT_NORMAL
from ..families.low_rank_multivariate_normal import low_rank_covariance
from .continuous import normal_normal
from .numerics import expm1mx, lgamma_bregman, log_ratio
from .registry import Side, closed_form


@dataclass(frozen=True)
class _Factor:
    """A side's mean (None for a Wishart), L (Σ = L·Lᵀ) and, where it came without a solve,
    L⁻¹."""

    loc: np.ndarray | None
    chol: np.ndarray
    chol_inv: np.ndarray | None = None


def _exchange(m: np.ndarray) -> np.ndarray:
    return m[..., ::-1, ::-1]


def _matrix_factor(side: Side, loc: np.ndarray | None) -> _Factor:
    """From a covariance_matrix, scale_tril or precision_matrix parameter."""
    key = side.parametrization
    mat = side[key]
    if key == "scale_tril":
        return _Factor(loc, mat)
    if key == "covariance_matrix":
        return _Factor(loc, np.linalg.cholesky(mat))
    k = np.linalg.cholesky(_exchange(mat))
    k_inv_t = np.swapaxes(np.linalg.inv(k), -1, -2)
    return _Factor(loc, _exchange(k_inv_t), _exchange(np.swapaxes(k, -1, -2)))


def _factor(side: Side) -> _Factor:
    name = side.family
    if name == "MultivariateNormal":
        return _matrix_factor(side, side["loc"])
    if name == "LowRankMultivariateNormal":
        cov = low_rank_covariance(side["cov_factor"], side["cov_diag"])
        return _Factor(side["loc"], np.linalg.cholesky(cov))
    if name == "Independent":
        loc, scale = np.broadcast_arrays(side["loc"], side["scale"])
        return _Factor(loc, scale[..., :, None] * np.eye(loc.shape[-1]))
    if name == "CirculantNormal":
        n = side["loc"].shape[-1]
        lam = CIRCULANT_NORMAL._eigenvalues(side.params, side.parametrization, n)
        row = np.fft.ifft(lam, axis=-1).real
        cov = row[..., (np.arange(n)[None, :] - np.arange(n)[:, None]) % n]
        return _Factor(side["loc"], np.linalg.cholesky(cov))
    raise OracleError(f"the KL module has no Gaussian factor of {name}")


def _whitened(p: _Factor, q: _Factor) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(M = L_q⁻¹·L_p, ℓ = log diag(M), z = L_q⁻¹·(μ_q − μ_p) or None without means)."""
    n_p, n_q = p.chol.shape[-1], q.chol.shape[-1]
    if n_p != n_q:
        raise OracleError(f"KL: p's event size is {n_p}, q's {n_q}")
    delta = None if p.loc is None or q.loc is None else (q.loc - p.loc)[..., None]
    diag_p = np.diagonal(p.chol, axis1=-2, axis2=-1)
    if q.chol_inv is not None:
        m = q.chol_inv @ p.chol
        z = None if delta is None else q.chol_inv @ delta
        ell = np.log(diag_p) + np.log(np.diagonal(q.chol_inv, axis1=-2, axis2=-1))
    else:
        m = linalg.solve_triangular(q.chol, p.chol, lower=True)
        z = None if delta is None else linalg.solve_triangular(q.chol, delta, lower=True)
        ell = log_ratio(diag_p, np.diagonal(q.chol, axis1=-2, axis2=-1))
    return m, ell, None if z is None else z[..., 0]


def _trace_logdet(m: np.ndarray, ell: np.ndarray) -> np.ndarray:
    """tr(M·Mᵀ) − n − 2·Σ ℓ as a sum of terms ≥ 0."""
    off = np.tril(m, -1)
    return (off * off).sum((-2, -1)) + expm1mx(2.0 * ell).sum(-1)


@closed_form(
    ("MultivariateNormal", "MultivariateNormal"),
    ("MultivariateNormal", "LowRankMultivariateNormal"),
    ("LowRankMultivariateNormal", "MultivariateNormal"),
    ("LowRankMultivariateNormal", "LowRankMultivariateNormal"),
    ("Independent", "CirculantNormal"),
)
def _gaussian_gaussian(p: Side, q: Side) -> np.ndarray:
    m, ell, z = _whitened(_factor(p), _factor(q))
    assert z is not None
    return 0.5 * (_trace_logdet(m, ell) + (z * z).sum(-1))


@closed_form(("Independent", "Independent"))
def _independent_independent(p: Side, q: Side) -> np.ndarray:
    """The Normals' KL coordinate by coordinate, summed over the event."""
    shapes = [np.shape(s[k])[-1] for s in (p, q) for k in ("loc", "scale")]
    n_p, n_q = max(shapes[:2]), max(shapes[2:])
    if n_p != n_q:
        raise OracleError(f"KL: p's event size is {n_p}, q's {n_q}")
    return normal_normal(p, q).sum(-1)


@closed_form(("Wishart", "Wishart"))
def _wishart_wishart(p: Side, q: Side) -> np.ndarray:
    """−(ν_q/2)·log|Σq⁻¹Σp| + (ν_p/2)·(tr(Σq⁻¹Σp) − d) + log Γ_d(ν_q/2) − log Γ_d(ν_p/2)
    + ((ν_p − ν_q)/2)·ψ_d(ν_p/2)
    = (ν_p/2)·(Σ_{i>j} M_ij² + Σ_i (e^{2ℓ_i} − 1 − 2ℓ_i)) + (ν_p − ν_q)·Σ ℓ
      + Σ_{i=1..d} G(ν_p/2 + (1 − i)/2, (ν_q − ν_p)/2),
    G the Bregman divergence of lnΓ (the multivariate gamma is a product of gammas)."""
    nu_p, nu_q = p["df"], q["df"]
    m, ell, _ = _whitened(_matrix_factor(p, None), _matrix_factor(q, None))
    d = m.shape[-1]
    offsets = 0.5 * (1.0 - np.arange(1, d + 1))
    gammas = lgamma_bregman(0.5 * nu_p[..., None] + offsets, 0.5 * (nu_q - nu_p)[..., None])
    return 0.5 * nu_p * _trace_logdet(m, ell) + (nu_p - nu_q) * ell.sum(-1) + gammas.sum(-1)
