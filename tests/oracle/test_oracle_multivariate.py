"""The multivariate families of issue 36 (MultivariateStudentT, the Wishart relatives, LKJ and
GPyTorch's LKJ priors, the structured normals, the directional and copula families, the time
series) against independent sources: scipy.stats where it has the distribution, mpmath's
arbitrary precision from the definition everywhere (log_prob, every partial derivative by
mpmath.diff, the generated edges), normalisation by quadrature where the event is small, and
the samplers' moments.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import mpmath
import numpy as np
import pytest
from scipy import stats

from conformance import reference
from conformance.cases.generators import cholesky, normal, spd
from tests.oracle.mp_partials import (
    assert_partial_close,
    input_scale,
    rounded_inputs,
    sensitivity_terms,
)

mp = mpmath.mp
MPF = mpmath.mpf
RTOL = 1e-12
GRAD_RTOL = 1e-8


def family(name: str) -> reference.Family:
    return reference.get_family(name)


def needs(*names: str) -> pytest.MarkDecorator:
    """Skip where a family of this file is not in the oracle (a checkout holding only some
    of them)."""
    missing = sorted(set(names) - set(reference.FAMILIES))
    return pytest.mark.skipif(bool(missing), reason=f"no oracle family {missing}")


def assert_close(actual: Any, expected: Any, rtol: float = RTOL) -> None:
    """Relative to the size of the log density, floored at 1 (an absolute error of eps nats is
    a relative error of eps in the density)."""
    a, e = np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    assert a.shape == e.shape, (a.shape, e.shape)
    same_inf = (a == e) & np.isinf(e)
    err = np.where(same_inf, 0.0, np.abs(a - e) / np.maximum(np.abs(e), 1.0))
    assert np.all(np.isfinite(a) == np.isfinite(e)), (a, e)
    assert np.nanmax(err, initial=0.0) <= rtol, f"{a} vs {e}"


# ----- mpmath helpers ---------------------------------------------------------------------
def mat(x: Any) -> mpmath.matrix:
    return mpmath.matrix(
        [[MPF(float(v)) if not isinstance(v, mpmath.mpf) else v for v in row] for row in x]
    )


def vec(x: Any) -> mpmath.matrix:
    return mpmath.matrix([MPF(float(v)) if not isinstance(v, mpmath.mpf) else v for v in x])


def mp_logdet(a: mpmath.matrix) -> Any:
    return mp.log(mp.det(a))


def mp_quad_form(a: mpmath.matrix, y: mpmath.matrix) -> Any:
    """yᵀ A⁻¹ y."""
    return (y.T * mp.lu_solve(a, y))[0]


def mp_log_mvgamma(a: Any, p: int) -> Any:
    return p * (p - 1) / 4 * mp.log(mp.pi) + mp.fsum(
        mp.loggamma(a + MPF(1 - j) / 2) for j in range(1, p + 1)
    )


# ----- the densities, from their definitions ------------------------------------------------
def mp_multivariate_student_t(p: dict, x: list) -> Any:
    nu, loc, chol = p["df"], p["loc"], mat(p["scale_tril"])
    n = chol.rows
    loc = [loc[0]] * n if len(loc) == 1 else loc
    sigma = chol * chol.T
    y = vec([x[i] - loc[i] for i in range(n)])
    m = mp_quad_form(sigma, y)
    return (
        mp.loggamma((nu + n) / 2)
        - mp.loggamma(nu / 2)
        - MPF(n) / 2 * mp.log(nu * mp.pi)
        - mp_logdet(sigma) / 2
        - (nu + n) / 2 * mp.log1p(m / nu)
    )


def _mp_scale(p: dict, parametrization: str) -> mpmath.matrix:
    """Σ (Wishart) or Ψ (InverseWishart) from whichever matrix the parametrisation gives."""
    m = mat(p[parametrization])
    if parametrization in ("precision_matrix", "rate_matrix"):
        return mp.inverse(m)
    if parametrization == "scale_tril":
        return m * m.T
    return m


def mp_wishart(p: dict, x: mpmath.matrix, parametrization: str) -> Any:
    nu, sigma = p["df"], _mp_scale(p, parametrization)
    d = x.rows
    trace = sum((mp.inverse(sigma) * x)[i, i] for i in range(d))
    return (
        (nu - d - 1) / 2 * mp_logdet(x)
        - trace / 2
        - nu * d / 2 * mp.log(2)
        - nu / 2 * mp_logdet(sigma)
        - mp_log_mvgamma(nu / 2, d)
    )


def mp_inverse_wishart(p: dict, x: mpmath.matrix, parametrization: str) -> Any:
    nu, psi = p["concentration"], _mp_scale(p, parametrization)
    d = x.rows
    trace = sum((psi * mp.inverse(x))[i, i] for i in range(d))
    return (
        nu / 2 * mp_logdet(psi)
        - nu * d / 2 * mp.log(2)
        - mp_log_mvgamma(nu / 2, d)
        - (nu + d + 1) / 2 * mp_logdet(x)
        - trace / 2
    )


def mp_cholesky_jacobian(chol: mpmath.matrix) -> Any:
    """log |∂(L Lᵀ)/∂L| over the lower triangles: p·log 2 + Σ (p − i + 1)·log L_ii."""
    d = chol.rows
    return d * mp.log(2) + mp.fsum((d - i) * mp.log(chol[i, i]) for i in range(d))


def mp_on_factor(density: Callable, parametrization: str) -> Callable[[dict, Any], Any]:
    """The density of L with L Lᵀ ~ ``density`` (the value is L)."""

    def f(p: dict, value: Any) -> Any:
        chol = mat(value)
        return density(p, chol * chol.T, parametrization) + mp_cholesky_jacobian(chol)

    return f


def mp_on_matrix(density: Callable, parametrization: str) -> Callable[[dict, Any], Any]:
    return lambda p, value: density(p, mat(value), parametrization)


def mp_lkj_log_normalizer(d: int, eta: Any) -> Any:
    """LKJ (2009), the vine form: log of 2^Σ(2η-2+d-k)(d-k) · Π B(η+(d-k-1)/2, same)^(d-k)."""
    out = MPF(0)
    for k in range(1, d):
        b = eta + MPF(d - k - 1) / 2
        out += (2 * eta - 2 + d - k) * (d - k) * mp.log(2) + (d - k) * mp.log(mp.beta(b, b))
    return out


def mp_lkj(p: dict, c: Any) -> Any:
    """det(C)^(η−1)/c_d(η) over the strictly-lower entries of a correlation matrix."""
    d, eta = int(p["dimension"]), p["concentration"]
    return (eta - 1) * mp_logdet(mat(c)) - mp_lkj_log_normalizer(d, eta)


def mp_lkj_covariance(p: dict, x: Any) -> Any:
    """C = D⁻¹XD⁻¹ ~ LKJ, sd_i = √X_ii ~ Gamma(α, β) iid, and X = D C D's Jacobian 2^d·Π sd_i^d."""
    d, alpha, beta = int(p["dimension"]), p["sd_concentration"], p["sd_rate"]
    xm = mat(x)
    sd = [mp.sqrt(xm[i, i]) for i in range(d)]
    c = [[xm[i, j] / (sd[i] * sd[j]) for j in range(d)] for i in range(d)]
    gamma = mp.fsum(
        alpha * mp.log(beta) - mp.loggamma(alpha) + (alpha - 1) * mp.log(s) - beta * s for s in sd
    )
    return mp_lkj(p, c) + gamma - d * mp.log(2) - d * mp.fsum(mp.log(s) for s in sd)


def mp_mvn(loc: list, cov: mpmath.matrix, x: list) -> Any:
    n = cov.rows
    y = vec([x[i] - loc[i if len(loc) > 1 else 0] for i in range(n)])
    return -MPF(n) / 2 * mp.log(2 * mp.pi) - mp_logdet(cov) / 2 - mp_quad_form(cov, y) / 2


def mp_matrix_normal(p: dict, x: Any) -> Any:
    """vec(X) ~ Normal(vec M, V ⊗ U), written on vec (column-major) with the Kronecker product."""
    lr, lc = mat(p["scale_tril_row"]), mat(p["scale_tril_column"])
    u, v = lr * lr.T, lc * lc.T
    n, q = u.rows, v.rows
    cov = mpmath.matrix(n * q, n * q)
    for a in range(q):
        for b in range(q):
            for i in range(n):
                for j in range(n):
                    cov[a * n + i, b * n + j] = v[a, b] * u[i, j]
    vec_x = [x[i][a] for a in range(q) for i in range(n)]
    vec_m = [p["loc"][i][a] for a in range(q) for i in range(n)]
    return mp_mvn(vec_m, cov, vec_x)


def mp_zero_sum_normal(p: dict, x: Any) -> Any:
    """The n − 1 coordinates of x in an orthonormal basis of the hyperplane (Helmert's), each
    Normal(0, σ): the density of the hyperplane's isotropic normal, from its definition."""
    n, sigma = len(x), p["scale"]
    coords = []
    for k in range(1, n):  # Helmert: (1, …, 1, −k, 0, …)/√(k(k+1))
        coords.append((mp.fsum(x[:k]) - k * x[k]) / mp.sqrt(k * (k + 1)))
    return mp.fsum(-mp.log(sigma) - mp.log(2 * mp.pi) / 2 - (c / sigma) ** 2 / 2 for c in coords)


def mp_gaussian_random_walk(p: dict, x: Any) -> Any:
    """MultivariateNormal(0, σ²·min(s, t)): the walk's covariance, not its increments."""
    n, sigma = len(x), p["scale"]
    cov = mpmath.matrix(n, n)
    for i in range(n):
        for j in range(n):
            cov[i, j] = sigma**2 * (min(i, j) + 1)
    return mp_mvn([MPF(0)], cov, x)


def mp_car(p: dict, x: Any) -> Any:
    w = mat(p["adj_matrix"])
    n = w.rows
    q = mpmath.matrix(n, n)
    for i in range(n):
        for j in range(n):
            q[i, j] = p["conditional_precision"] * (
                (mp.fsum(w[i, k] for k in range(n)) if i == j else 0) - p["correlation"] * w[i, j]
            )
    return mp_mvn(p["loc"], mp.inverse(q), x)


def mp_circulant_normal(par: str) -> Callable[[dict, Any], Any]:
    """The circulant covariance built entry by entry (C_ij = c_(j−i) mod n); from covariance_rfft
    its first row is the inverse real FFT of the eigenvalues. A row moved off symmetry (one
    entry at a time, in the gradient test) enters through its symmetric part (c_k + c_(n−k))/2,
    whose eigenvalues are Re FFT(c): the density as a function of every entry."""

    def f(p: dict, x: Any) -> Any:
        n = len(x)
        if par == "covariance_row":
            c = p["covariance_row"]
            row = [(c[k] + c[(n - k) % n]) / 2 for k in range(n)]
        else:
            lam = [p["covariance_rfft"][min(k, n - k)] for k in range(n)]
            row = [
                mp.fsum(lam[k] * mp.cos(2 * mp.pi * j * k / n) for k in range(n)) / n
                for j in range(n)
            ]
        cov = mpmath.matrix(n, n)
        for i in range(n):
            for j in range(n):
                cov[i, j] = row[(j - i) % n]
        return mp_mvn(p["loc"], cov, x)

    return f


def mp_projected_normal(p: dict, x: Any) -> Any:
    """The normal density of Normal(μ, I) integrated along the ray through x/‖x‖ (the density is
    constant along rays off the sphere, so its gradient there is the tangent one)."""
    mu = p["concentration"]
    d = len(mu)
    norm = mp.sqrt(mp.fsum(v * v for v in x))
    u = [v / norm for v in x]
    t = mp.fsum(m * v for m, v in zip(mu, u, strict=True))
    s = -t
    pts = [0, 1 / (1 + abs(s)), 10 / (1 + abs(s)), 60 / (1 + abs(s)) + abs(t) * (t > 0), mp.inf]
    # ∫ r^(d−1) e^(−(r−t)²/2) dr = e^(−t²/2)·∫ r^(d−1) e^(−r²/2 + r·t) dr
    j = mp.quad(lambda r: r ** (d - 1) * mp.exp(-r * r / 2 + r * t), pts)
    mu2 = mp.fsum(m * m for m in mu)
    return -MPF(d) / 2 * mp.log(2 * mp.pi) - mu2 / 2 + mp.log(j)


def mp_sine_bivariate(p: dict, x: Any) -> Any:
    """The density over its normaliser (:func:`_mp_sine_bivariate_log_normaliser`)."""
    k1, k2, lam = p["phi_concentration"], p["psi_concentration"], p["correlation"]
    a, b = x[0] - p["phi_loc"], x[1] - p["psi_loc"]
    body = k1 * mp.cos(a) + k2 * mp.cos(b) + lam * mp.sin(a) * mp.sin(b)
    return body - _mp_sine_bivariate_log_normaliser(k1, k2, lam, mp.prec)


@functools.lru_cache(maxsize=512)
def _mp_sine_bivariate_log_normaliser(k1: Any, k2: Any, lam: Any, prec: int) -> Any:
    """The log normaliser as Singh et al.'s series, 4π²·Σ C(2m, m)(λ²/(4κ1κ2))^m I_m(κ1) I_m(κ2),
    summed to convergence (NumPyro's, cut at m = 49); where that needs thousands of terms
    (|λ| > 200, κ > 1e4), mpmath's quadrature of 2π·∫ e^(κ1 cos θ) I0(√(κ2² + λ² sin²θ)) dθ
    with nodes packed around the integrand's peaks. Kept per working precision: the edge tests'
    second differences move the angles and the locations with it unchanged."""
    if abs(lam) <= 200 and max(k1, k2) <= 1e4:
        ratio = lam**2 / (4 * k1 * k2)
        series = mp.nsum(
            lambda m: mp.binomial(2 * m, m) * ratio**m * mp.besseli(m, k1) * mp.besseli(m, k2),
            [0, mp.inf],
        )
        return mp.log(4 * mp.pi**2 * series)
    scale = max(abs(k1), abs(k2), abs(lam))
    grid = np.linspace(-np.pi, np.pi, 1 << 14, endpoint=False)
    rho = np.sqrt(float(k2) ** 2 + (float(lam) * np.sin(grid)) ** 2)
    g = float(k1) * np.cos(grid) + rho - 0.5 * np.log(1.0 + rho)
    peak = abs(float(grid[np.argmax(g)]))
    width = 1 / mp.sqrt(scale)
    pts = {-mp.pi, mp.pi}
    for centre in (peak, -peak):
        pts |= {centre + k * width for k in range(-40, 41, 4)}
    nodes = sorted(t for t in pts if -mp.pi <= t <= mp.pi)

    def f(t: Any) -> Any:
        rho_t = mp.sqrt(k2**2 + (lam * mp.sin(t)) ** 2)
        return mp.exp(k1 * mp.cos(t) - scale) * mp.besseli(0, rho_t)

    return mp.log(4 * mp.pi**2 * mp.quad(f, nodes) / (2 * mp.pi)) + scale


def mp_sine_skewed(p: dict, x: Any) -> Any:
    n = len(x)

    def at(v: list, i: int) -> Any:
        return v[i if len(v) > 1 else 0]

    base = mp.fsum(
        at(p["concentration"], i) * mp.cos(x[i] - at(p["loc"], i))
        - mp.log(2 * mp.pi * mp.besseli(0, at(p["concentration"], i)))
        for i in range(n)
    )
    skew = mp.fsum(at(p["skewness"], i) * mp.sin(x[i] - at(p["loc"], i)) for i in range(n))
    return base + mp.log1p(skew)


def _mp_normal_quantile(tail: Any) -> Any:
    """Φ⁻¹(tail) for tail ≤ ½, by Newton's method on log Φ (1 − 2·tail is 1 at any working
    precision for tail = e^(−1.2e7))."""
    if tail > MPF("1e-20"):
        return -mp.sqrt(2) * mp.erfinv(1 - 2 * tail)
    log_tail = mp.log(tail)
    q = -mp.sqrt(-2 * log_tail)
    for _ in range(200):
        step = (mp.log(mp.ncdf(q)) - log_tail) * mp.ncdf(q) / mp.npdf(q)
        q -= step
        if abs(step) < mp.mpf(10) ** (-mp.dps + 5) * (1 + abs(q)):
            break
    return q


def _mp_copula(marginal: str, par: str) -> Callable[[dict, Any], Any]:
    """Σ log f(x_i) + log N(q; 0, R) − Σ log φ(q_i), q = Φ⁻¹(F(x)) from the smaller tail, at
    twice the working precision (F within 1e-33 of 1)."""

    def f(p: dict, x: Any) -> Any:
        n = len(x)
        with mp.workdps(2 * mp.dps):
            qs, logf = [], MPF(0)
            for i in range(n):
                xi = x[i]
                if marginal == "gamma":
                    a = p["concentration"][i if len(p["concentration"]) > 1 else 0]
                    b = p["rate"][i if len(p["rate"]) > 1 else 0]
                    lower = mp.gammainc(a, 0, b * xi, regularized=True)
                    upper = mp.gammainc(a, b * xi, mp.inf, regularized=True)
                    logf += a * mp.log(b) + (a - 1) * mp.log(xi) - b * xi - mp.loggamma(a)
                else:
                    a = p["concentration1"][i if len(p["concentration1"]) > 1 else 0]
                    b = p["concentration0"][i if len(p["concentration0"]) > 1 else 0]
                    # the smaller tail by its own series (the other's, with b = 1e6, needs
                    # ~1e5 terms), the larger as its complement
                    if xi < a / (a + b):
                        lower = mp.betainc(a, b, 0, xi, regularized=True)
                        upper = 1 - lower
                    else:
                        upper = mp.betainc(b, a, 0, 1 - xi, regularized=True)
                        lower = 1 - upper
                    logf += (a - 1) * mp.log(xi) + (b - 1) * mp.log1p(-xi) - mp.log(mp.beta(a, b))
                qs.append(
                    _mp_normal_quantile(lower) if lower <= upper else -_mp_normal_quantile(upper)
                )
            if par == "correlation_matrix":
                r = mat(p["correlation_matrix"])
            else:
                chol = mat(p["correlation_cholesky"])
                r = chol * chol.T
            qv = vec(qs)
            log_c = -mp_logdet(r) / 2 - mp_quad_form(r, qv) / 2 + mp.fsum(v * v for v in qs) / 2
            return logf + log_c

    return f


def mp_gaussian_state_space(par: str) -> Callable[[dict, Any], Any]:
    """The path (z_1 … z_T) as one MultivariateNormal: mean A^t·z_0, covariance
    Σ_(k ≤ min(i, j)) A^(i−k) Σ (A^(j−k))ᵀ — not the residuals' form the oracle uses."""

    def f(p: dict, x: Any) -> Any:
        a = mat(p["transition_matrix"])
        n, steps = a.rows, len(x)
        m = mat(p[par])
        sigma = (
            mp.inverse(m) if par == "precision_matrix" else (m * m.T if par == "scale_tril" else m)
        )
        powers = [mp.eye(n)]
        for _ in range(steps):
            powers.append(a * powers[-1])
        z0 = vec(p["initial_value"])
        mean, cov = [], mpmath.matrix(n * steps, n * steps)
        for i in range(steps):
            mean += list(powers[i + 1] * z0)
            for j in range(steps):
                block = mpmath.matrix(n, n)
                for k in range(min(i, j) + 1):
                    block += powers[i - k] * sigma * powers[j - k].T
                for r in range(n):
                    for c in range(n):
                        cov[i * n + r, j * n + c] = block[r, c]
        flat = [x[i][r] for i in range(steps) for r in range(n)]
        return mp_mvn(mean, cov, flat)

    return f


def mp_euler_maruyama(p: dict, x: Any) -> Any:
    theta, mu, sigma = p["theta"], p["mu"], p["sigma"]
    t = p["t"]

    def normal(v: Any, loc: Any, scale: Any) -> Any:
        return -mp.log(scale) - mp.log(2 * mp.pi) / 2 - ((v - loc) / scale) ** 2 / 2

    out = normal(x[0], p["init_loc"], p["init_scale"])
    for k in range(1, len(x)):
        dt = t[k] - t[k - 1]
        out += normal(x[k], x[k - 1] + dt * theta * (mu - x[k - 1]), sigma * mp.sqrt(dt))
    return out


# ----- cases: the oracle at one point against mpmath ----------------------------------------
@dataclass
class MpCase:
    id: str
    family: str
    parametrization: str | None
    params: dict[str, Any]
    value: Any
    mp_logpdf: Callable[[dict, Any], Any]
    #: Parameters whose gradient is compared on the lower triangle only.
    lower: tuple[str, ...] = ()
    #: Parameters compared on their symmetric part (∂ over X and Xᵀ together).
    symmetric: tuple[str, ...] = ()
    options: dict[str, Any] = field(default_factory=dict)

    def arrays(self) -> tuple[dict[str, np.ndarray], np.ndarray]:
        return {k: np.asarray(v, dtype=np.float64) for k, v in self.params.items()}, np.asarray(
            self.value, dtype=np.float64
        )


def to_mp(x: Any) -> Any:
    if isinstance(x, np.ndarray):
        x = x.tolist()
    if isinstance(x, list):
        return [to_mp(v) for v in x]
    return MPF(float(x))


def mp_params(params: dict[str, Any]) -> dict[str, Any]:
    return {k: to_mp(v) for k, v in params.items()}


_L3 = [[1.2, 0.0, 0.0], [0.3, 0.8, 0.0], [-0.5, 0.4, 1.5]]

MP_CASES: list[MpCase] = [
    MpCase(
        "mvt-literal",
        "MultivariateStudentT",
        None,
        {"df": 4.5, "loc": [0.5, -1.0, 0.25], "scale_tril": _L3},
        [1.0, 0.5, -2.0],
        mp_multivariate_student_t,
        lower=("scale_tril",),
    ),
    MpCase(
        "mvt-heavy",
        "MultivariateStudentT",
        None,
        {"df": 1e-3, "loc": [0.2, -0.3], "scale_tril": [[0.9, 0.0], [0.2, 1.1]]},
        [30.0, -4.0],
        mp_multivariate_student_t,
        lower=("scale_tril",),
    ),
    MpCase(
        "mvt-nearly-gaussian",
        "MultivariateStudentT",
        None,
        {"df": 1e7, "loc": [0.2, -0.3, 0.1], "scale_tril": _L3},
        [1.0, 0.0, -0.5],
        mp_multivariate_student_t,
        lower=("scale_tril",),
    ),
    MpCase(
        "mvt-scalar-loc",
        "MultivariateStudentT",
        None,
        {"df": 2.5, "loc": [0.7], "scale_tril": _L3},
        [0.1, 2.0, -1.0],
        mp_multivariate_student_t,
        lower=("scale_tril",),
    ),
    MpCase(
        "mvt-far-tail",
        "MultivariateStudentT",
        None,
        {"df": 3.0, "loc": [0.0, 0.0], "scale_tril": [[1.0, 0.0], [0.5, 0.5]]},
        [1e8, 1e8],
        mp_multivariate_student_t,
        lower=("scale_tril",),
    ),
]

_COV = [[2.0, 0.3], [0.3, 1.0]]
_COV3 = [[1.5, -0.4, 0.1], [-0.4, 0.9, 0.2], [0.1, 0.2, 1.1]]
_TRIL3 = [[0.8, 0.0, 0.0], [0.4, 1.3, 0.0], [-0.2, 0.5, 0.6]]
_X2 = [[1.5, -0.2], [-0.2, 0.7]]
_X3 = [[0.8, 0.1, -0.2], [0.1, 1.4, 0.3], [-0.2, 0.3, 0.6]]
_F2 = [[1.2, 0.0], [-0.2, 0.8]]
_F3 = [[0.9, 0.0, 0.0], [0.3, 1.4, 0.0], [-0.6, 0.2, 0.7]]
_WISHART_LIKE = [
    # (family, density, on the factor?, {parametrization: (matrix, structure)}, df name)
    (
        "WishartCholesky",
        mp_wishart,
        True,
        "df",
        ["covariance_matrix", "precision_matrix", "scale_tril"],
    ),
    (
        "InverseWishart",
        mp_inverse_wishart,
        False,
        "concentration",
        ["scale_matrix", "rate_matrix", "scale_tril"],
    ),
    (
        "InverseWishartCholesky",
        mp_inverse_wishart,
        True,
        "concentration",
        ["scale_matrix", "rate_matrix", "scale_tril"],
    ),
]
for _name, _density, _factor, _df, _pars in _WISHART_LIKE:
    for _par in _pars:
        for _nu, _m2, _m3 in ((3.5, _COV, _COV3), (2.05, _COV, _COV3), (60.0, _COV, _COV3)):
            _three = _nu != 2.05
            _m = _TRIL3 if (_par == "scale_tril" and _three) else (_COV3 if _three else _COV)
            if _par == "scale_tril" and not _three:
                _m = np.linalg.cholesky(np.array(_COV)).tolist()
            _v = (_F3 if _three else _F2) if _factor else (_X3 if _three else _X2)
            MP_CASES.append(
                MpCase(
                    f"{_name}-{_par}-{_nu:g}",
                    _name,
                    _par,
                    {_df: _nu, _par: _m},
                    _v,
                    (mp_on_factor if _factor else mp_on_matrix)(_density, _par),
                    lower=("scale_tril",),
                    symmetric=tuple(p for p in _pars if p != "scale_tril"),
                )
            )

_C3 = [[1.0, 0.6, 0.0], [0.6, 1.0, 0.48], [0.0, 0.48, 1.0]]
_C4 = [
    [1.0, 0.3, -0.2, 0.1],
    [0.3, 1.0, 0.4, 0.0],
    [-0.2, 0.4, 1.0, -0.5],
    [0.1, 0.0, -0.5, 1.0],
]
MP_CASES += [
    MpCase(
        f"lkj-d{len(c)}-{eta:g}",
        "LKJ",
        None,
        {"dimension": len(c), "concentration": eta},
        c,
        mp_lkj,
    )
    for c in ([[1.0, -0.45], [-0.45, 1.0]], _C3, _C4)
    for eta in (0.05, 0.7, 1.0, 6.0)
]
_X_COV = [[0.49, 0.546, 0.0], [0.546, 1.69, 1.3104], [0.0, 1.3104, 4.41]]
MP_CASES += [
    MpCase(
        f"lkj-covariance-{eta:g}-{a:g}-{b:g}",
        "LKJCovariancePrior",
        None,
        {"dimension": 3, "concentration": eta, "sd_concentration": a, "sd_rate": b},
        _X_COV,
        mp_lkj_covariance,
    )
    for eta, a, b in ((1.5, 2.0, 1.0), (0.3, 0.5, 4.0), (8.0, 20.0, 0.1))
] + [
    MpCase(
        "lkj-covariance-d2",
        "LKJCovariancePrior",
        None,
        {"dimension": 2, "concentration": 0.6, "sd_concentration": 3.0, "sd_rate": 2.0},
        [[1.2, -0.3], [-0.3, 0.5]],
        mp_lkj_covariance,
    )
]

MP_CASES += [
    MpCase(
        "matrix-normal",
        "MatrixNormal",
        None,
        {
            "loc": [[0.5, -1.0], [0.25, 0.0], [1.0, 2.0]],
            "scale_tril_row": _L3,
            "scale_tril_column": [[0.9, 0.0], [-0.4, 0.6]],
        },
        [[1.0, 0.5], [-2.0, 0.3], [0.7, 1.1]],
        mp_matrix_normal,
        lower=("scale_tril_row", "scale_tril_column"),
    ),
    MpCase(
        "zero-sum-normal",
        "ZeroSumNormal",
        None,
        {"scale": 1.5, "event_size": 4},
        [0.5, -1.25, 1.0, -0.25],
        mp_zero_sum_normal,
    ),
    MpCase(
        "random-walk",
        "GaussianRandomWalk",
        None,
        {"scale": 0.7, "num_steps": 4},
        [0.5, -1.0, 0.25, 2.0],
        mp_gaussian_random_walk,
    ),
    MpCase(
        "car",
        "CAR",
        None,
        {
            "loc": [0.5, -1.0, 0.25, 0.0],
            "correlation": 0.6,
            "conditional_precision": 2.0,
            "adj_matrix": [[0, 1, 1, 0], [1, 0, 1, 1], [1, 1, 0, 0], [0, 1, 0, 0]],
        },
        [1.0, 0.5, -2.0, 0.3],
        mp_car,
    ),
    MpCase(
        "car-near-minus-one",
        "CAR",
        None,
        {
            "loc": [0.5],
            "correlation": -0.999,
            "conditional_precision": 0.3,
            "adj_matrix": [[0, 2, 0], [2, 0, 0.5], [0, 0.5, 0]],
        },
        [1.0, 0.5, -2.0],
        mp_car,
    ),
    MpCase(
        "circulant-row",
        "CirculantNormal",
        "covariance_row",
        {"loc": [0.5, -1.0, 0.25, 0.0, 1.0], "covariance_row": [2.0, 0.6, -0.2, -0.2, 0.6]},
        [1.0, 0.5, -2.0, 0.3, 0.0],
        mp_circulant_normal("covariance_row"),
    ),
    MpCase(
        "circulant-rfft",
        "CirculantNormal",
        "covariance_rfft",
        {"loc": [0.5, -1.0, 0.25, 0.0, 1.0, -0.5], "covariance_rfft": [3.0, 1.5, 0.4, 2.2]},
        [1.0, 0.5, -2.0, 0.3, 0.0, 0.7],
        mp_circulant_normal("covariance_rfft"),
    ),
]

MP_CASES += [
    MpCase(
        "projected-3",
        "ProjectedNormal",
        None,
        {"concentration": [1.0, -0.5, 0.3]},
        [0.6, 0.0, 0.8],
        mp_projected_normal,
    ),
    MpCase(
        "projected-2-opposite",
        "ProjectedNormal",
        None,
        {"concentration": [-6.0, -8.0]},
        [0.6, 0.8],
        mp_projected_normal,
    ),
    MpCase(
        "projected-3-along",
        "ProjectedNormal",
        None,
        {"concentration": [30.0, 40.0, 0.0]},
        [0.6, 0.8, 0.0],
        mp_projected_normal,
    ),
    MpCase(
        "sine-bivariate",
        "SineBivariateVonMises",
        None,
        {
            "phi_loc": 0.3,
            "psi_loc": -1.0,
            "phi_concentration": 2.0,
            "psi_concentration": 1.0,
            "correlation": 0.5,
        },
        [0.5, 2.0],
        mp_sine_bivariate,
    ),
    MpCase(
        "sine-bivariate-bimodal",
        "SineBivariateVonMises",
        None,
        {
            "phi_loc": 0.0,
            "psi_loc": 0.0,
            "phi_concentration": 2.0,
            "psi_concentration": 2.0,
            "correlation": -10.0,
        },
        [1.2, -0.8],
        mp_sine_bivariate,
    ),
    MpCase(
        "sine-skewed",
        "SineSkewed",
        None,
        {"loc": [0.5, -1.0], "concentration": [2.0, 0.7], "skewness": [0.3, -0.4]},
        [1.0, 2.5],
        mp_sine_skewed,
    ),
    MpCase(
        "copula-gamma-matrix",
        "GaussianCopula",
        "correlation_matrix",
        {
            "concentration": [2.0, 0.7, 5.0],
            "rate": [1.0, 3.0, 0.5],
            "correlation_matrix": [[1.0, 0.5, 0.2], [0.5, 1.0, -0.3], [0.2, -0.3, 1.0]],
        },
        [1.5, 0.1, 9.0],
        _mp_copula("gamma", "correlation_matrix"),
        symmetric=("correlation_matrix",),
    ),
    MpCase(
        "copula-gamma-upper-tail",
        "GaussianCopula",
        "correlation_cholesky",
        {
            "concentration": [2.0, 2.0],
            "rate": [1.0],
            "correlation_cholesky": [[1.0, 0.0], [0.6, 0.8]],
        },
        [40.0, 3.0],
        _mp_copula("gamma", "correlation_cholesky"),
        lower=("correlation_cholesky",),
    ),
    MpCase(
        "copula-beta-cholesky",
        "GaussianCopulaBeta",
        "correlation_cholesky",
        {
            "concentration1": [2.0, 0.7],
            "concentration0": [1.5],
            "correlation_cholesky": [[1.0, 0.0], [0.6, 0.8]],
        },
        [0.3, 0.999999],
        _mp_copula("beta", "correlation_cholesky"),
        lower=("correlation_cholesky",),
    ),
]

_GSS = {
    "num_steps": 3,
    "transition_matrix": [[0.9, 0.2], [-0.1, 0.8]],
    "initial_value": [0.5, -1.0],
}
_GSS_PATH = [[1.0, -0.5], [0.4, 0.2], [-0.3, 1.1]]
MP_CASES += [
    MpCase(
        f"state-space-{par}",
        "GaussianStateSpace",
        par,
        {**_GSS, par: m},
        _GSS_PATH,
        mp_gaussian_state_space(par),
        lower=("scale_tril",),
        symmetric=("covariance_matrix", "precision_matrix"),
    )
    for par, m in (
        ("covariance_matrix", [[1.0, 0.3], [0.3, 0.5]]),
        ("precision_matrix", [[1.2, -0.72], [-0.72, 2.4]]),
        ("scale_tril", [[1.0, 0.0], [0.3, 0.6403124237]]),
    )
] + [
    MpCase(
        "euler-maruyama",
        "EulerMaruyama",
        None,
        {
            "t": [0.0, 0.5, 1.0, 2.0],
            "theta": 1.5,
            "mu": 0.5,
            "sigma": 0.8,
            "init_loc": 0.0,
            "init_scale": 1.0,
        },
        [0.3, 0.1, 0.9, 0.4],
        mp_euler_maruyama,
    ),
    MpCase(
        "euler-maruyama-stiff",
        "EulerMaruyama",
        None,
        {
            "t": [0.0, 1e-6, 1.0, 100.0],
            "theta": 5.0,
            "mu": 1.0,
            "sigma": 0.2,
            "init_loc": -1.0,
            "init_scale": 0.3,
        },
        [0.5, 0.5001, 2.6, -5.0],
        mp_euler_maruyama,
    ),
]
MP_CASES = [c for c in MP_CASES if c.family in reference.FAMILIES]


def _mp_eval(case: MpCase, params: dict, value: Any) -> Any:
    return case.mp_logpdf(params, value)


@pytest.mark.parametrize("case", MP_CASES, ids=lambda c: c.id)
def test_log_prob_matches_mpmath(case: MpCase) -> None:
    params, value = case.arrays()
    got = family(case.family).log_prob(params, value, case.parametrization, case.options)
    with mpmath.workdps(40):
        expected = float(_mp_eval(case, mp_params(case.params), to_mp(case.value)))
    assert_close(got, np.array(expected))


def _set(nested: Any, idx: tuple[int, ...], t: Any) -> Any:
    if not idx:
        return t
    copy = list(nested)
    copy[idx[0]] = _set(nested[idx[0]], idx[1:], t)
    return copy


def _get(nested: Any, idx: tuple[int, ...]) -> Any:
    for i in idx:
        nested = nested[i]
    return nested


def _coordinates(case: MpCase) -> list[tuple[str, tuple[int, ...]]]:
    fam = family(case.family)
    info = fam.params(case.parametrization)
    params, value = case.arrays()
    out = []
    for name, pinfo in info.items():
        if pinfo.integer or pinfo.static:
            continue
        for idx in np.ndindex(*params[name].shape):
            if name in case.lower + case.symmetric and idx[-1] > idx[-2]:
                continue  # the lower triangle is the coordinate (a symmetric pair moves together)
            out.append((name, idx))
    if not fam.value.discrete:
        lower = fam.value.structure in ("lower_triangular", "symmetric")
        out += [("value", i) for i in np.ndindex(*value.shape) if not (lower and i[-1] > i[-2])]
    return out


def _moved(nested: Any, idx: tuple[int, ...], t: Any, symmetric: bool) -> Any:
    out = _set(nested, idx, t)
    if symmetric and idx[-1] != idx[-2]:
        out = _set(out, (*idx[:-2], idx[-1], idx[-2]), t)
    return out


@pytest.mark.parametrize("case", MP_CASES, ids=lambda c: c.id)
def test_elementwise_grad_matches_mpmath_diff(case: MpCase) -> None:
    """Every partial derivative against mpmath.diff of the definition. A symmetric matrix moves
    an off-diagonal pair together: the oracle's gradient, taken over the entries as
    independent variables, is then compared as G + Gᵀ there (what the suite compares)."""
    params, value = case.arrays()
    fam = family(case.family)
    grads = fam.elementwise_grad(params, value, case.parametrization, case.options)
    value_symmetric = fam.value.structure == "symmetric"
    with mpmath.workdps(40):
        mp_p, mp_v = mp_params(case.params), to_mp(case.value)
        for name, idx in _coordinates(case):
            symmetric = name in case.symmetric or (name == "value" and value_symmetric)

            def f(t, n=name, i=idx, s=symmetric):
                if n == "value":
                    return _mp_eval(case, mp_p, _moved(mp_v, i, t, s))
                return _mp_eval(case, {**mp_p, n: _moved(mp_p[n], i, t, s)}, mp_v)

            x0 = _get(mp_v, idx) if name == "value" else _get(mp_p[name], idx)
            want = float(mpmath.diff(f, x0))
            g = np.asarray(grads[name])
            got = float(g[idx])
            if symmetric and idx[-1] != idx[-2]:
                got += float(g[(*idx[:-2], idx[-1], idx[-2])])
            assert abs(got - want) <= GRAD_RTOL * max(abs(want), 1.0), (name, idx, got, want)


# ----- scipy.stats --------------------------------------------------------------------------
@needs("MultivariateStudentT")
def test_multivariate_student_t_vs_scipy() -> None:
    rng = np.random.default_rng(3)
    df = np.array([0.4, 1.0, 3.0, 25.0, 300.0])
    loc = normal((5, 3), 1)
    chol = cholesky((5, 3, 3), 2)
    x = loc + 3.0 * rng.standard_normal((5, 3))
    got = family("MultivariateStudentT").log_prob({"df": df, "loc": loc, "scale_tril": chol}, x)
    want = [
        stats.multivariate_t(m, c @ c.T, df=v).logpdf(xx)
        for v, m, c, xx in zip(df, loc, chol, x, strict=True)
    ]
    assert_close(got, np.array(want), rtol=1e-11)


@needs("MultivariateStudentT")
def test_multivariate_student_t_normaliser_survives_large_df() -> None:
    """scipy's lgamma difference loses 3e-10 at ν = 1e6; the oracle keeps the digits."""
    params = {"df": 1e6, "loc": [0.0, 0.0, 0.0], "scale_tril": _L3}
    x = [0.3, -0.2, 1.0]
    got = family("MultivariateStudentT").log_prob(params, np.array(x))
    with mpmath.workdps(40):
        want = float(mp_multivariate_student_t(mp_params(params), to_mp(x)))
    assert abs(float(got) - want) <= 1e-14 * abs(want)


@needs("MultivariateStudentT")
def test_multivariate_student_t_is_normalised_and_samples_its_scale() -> None:
    """n = 2: the density integrates to 1 (quadrature in polar coordinates around loc), and
    for ν > 2 the draws' covariance is ν/(ν − 2)·LLᵀ."""
    from scipy import integrate

    fam = family("MultivariateStudentT")
    chol = np.array([[1.0, 0.0], [0.6, 0.8]])
    params = {"df": np.float64(3.0), "loc": np.array([0.5, -0.5]), "scale_tril": chol}

    def density(r: float, phi: float) -> float:
        z = np.array([r * np.cos(phi), r * np.sin(phi)])
        return float(np.exp(fam.log_prob(params, params["loc"] + chol @ z))) * r * 0.8

    total, _ = integrate.dblquad(density, 0.0, 2 * np.pi, 0.0, np.inf, epsabs=1e-11)
    assert total == pytest.approx(1.0, abs=1e-8)
    draws = fam.sample({**params, "df": np.float64(6.0)}, (200000,), np.random.default_rng(4))
    cov = np.cov(draws.T)
    assert cov == pytest.approx(1.5 * chol @ chol.T, rel=0.05, abs=0.02)


@needs("MultivariateStudentT")
def test_multivariate_student_t_domains() -> None:
    fam = family("MultivariateStudentT")
    chol = np.array([[1.0, 0.0], [0.5, 0.5]])
    got = fam.log_prob(
        {"df": np.array([0.0, -1.0, 3.0]), "loc": np.zeros(2), "scale_tril": chol}, np.zeros(2)
    )
    assert np.isnan(got[0]) and np.isnan(got[1]) and np.isfinite(got[2])
    bad = np.array([[1.0, 0.0], [0.5, 0.0]])
    assert np.isnan(fam.log_prob({"df": 3.0, "loc": np.zeros(2), "scale_tril": bad}, np.zeros(2)))
    assert (
        fam.log_prob({"df": 3.0, "loc": np.zeros(2), "scale_tril": chol}, [np.inf, 0.0]) == -np.inf
    )


@needs("InverseWishart", "InverseWishartCholesky")
def test_inverse_wishart_vs_scipy() -> None:
    psi = spd((3, 3, 3), 18, min_eigenvalue=0.2, max_eigenvalue=4.0)
    nu = np.array([2.2, 5.0, 40.0])
    x = spd((3, 3, 3), 19, min_eigenvalue=0.1, max_eigenvalue=6.0)
    want = np.array(
        [stats.invwishart(v, c).logpdf(xx) for v, c, xx in zip(nu, psi, x, strict=True)]
    )
    mats = {
        "scale_matrix": psi,
        "rate_matrix": np.linalg.inv(psi),
        "scale_tril": np.linalg.cholesky(psi),
    }
    chol_x = np.linalg.cholesky(x)
    diag = np.log(np.diagonal(chol_x, axis1=-2, axis2=-1))
    jacobian = 3 * np.log(2.0) + (diag * np.array([3.0, 2.0, 1.0])).sum(-1)
    for par, m in mats.items():
        params = {"concentration": nu, par: m}
        assert_close(family("InverseWishart").log_prob(params, x, par), want, rtol=1e-11)
        got = family("InverseWishartCholesky").log_prob(params, chol_x, par)
        assert_close(got, want + jacobian, rtol=1e-11)


@needs("WishartCholesky")
def test_wishart_cholesky_is_wishart_on_the_factor() -> None:
    cov = spd((3, 3, 3), 28, min_eigenvalue=0.2, max_eigenvalue=4.0)
    df = np.array([2.2, 5.0, 40.0])
    x = spd((3, 3, 3), 29, min_eigenvalue=0.1, max_eigenvalue=6.0)
    chol_x = np.linalg.cholesky(x)
    diag = np.log(np.diagonal(chol_x, axis1=-2, axis2=-1))
    jacobian = 3 * np.log(2.0) + (diag * np.array([3.0, 2.0, 1.0])).sum(-1)
    want = np.array([stats.wishart(v, c).logpdf(xx) for v, c, xx in zip(df, cov, x, strict=True)])
    got = family("WishartCholesky").log_prob({"df": df, "covariance_matrix": cov}, chol_x)
    assert_close(got, want + jacobian, rtol=1e-11)


@needs("WishartCholesky", "InverseWishart", "InverseWishartCholesky")
@pytest.mark.parametrize("name", ["WishartCholesky", "InverseWishart", "InverseWishartCholesky"])
def test_wishart_relatives_sample_their_mean(name: str) -> None:
    """E[X] = νΣ (Wishart) and Ψ/(ν − p − 1) (InverseWishart), X = L Lᵀ for the factors."""
    fam = family(name)
    scale = np.array(_COV3)
    df_name = "df" if name == "WishartCholesky" else "concentration"
    par = fam.default_parametrization
    draws = fam.sample({df_name: 9.0, par: scale}, (100000,), np.random.default_rng(6), par)
    if fam.value.support == "lower_cholesky":
        assert np.all(np.triu(draws, 1) == 0) and np.all(np.diagonal(draws, axis1=-2, axis2=-1) > 0)
        draws = draws @ np.swapaxes(draws, -1, -2)
    want = 9.0 * scale if name == "WishartCholesky" else scale / (9.0 - 3 - 1)
    assert draws.mean(0) == pytest.approx(want, rel=0.03, abs=0.01)


@needs("WishartCholesky", "InverseWishart", "InverseWishartCholesky")
@pytest.mark.parametrize("name", ["WishartCholesky", "InverseWishart", "InverseWishartCholesky"])
def test_wishart_relatives_domains(name: str) -> None:
    """The degrees of freedom must exceed p − 1; a value off the support is −inf."""
    fam = family(name)
    df_name = "df" if name == "WishartCholesky" else "concentration"
    par = fam.default_parametrization
    cov = np.array(_COV)
    value = np.array(_F2) if fam.value.support == "lower_cholesky" else np.array(_X2)
    got = fam.log_prob({df_name: np.array([1.0, 0.5, 1.01]), par: cov}, value, par)
    assert np.all(np.isnan(got[:2])) and np.isfinite(got[2])
    outside = np.array([[1.0, 0.2], [0.1, 1.0]])  # not symmetric, not lower-triangular
    assert fam.log_prob({df_name: 3.0, par: cov}, outside, par) == -np.inf
    assert np.isnan(
        fam.log_prob({df_name: 3.0, par: np.array([[1.0, 2.0], [2.0, 1.0]])}, value, par)
    )


@needs("Wishart")
def test_a_value_singular_within_rounding_is_outside_the_positive_definite_support() -> None:
    """LAPACK's Cholesky accepts this float64 matrix (last pivot 1.1e-16 against a diagonal of
    0.53), but its exact determinant is −1.4e-18: torch and NumPyro reject it, and the oracle
    must not score it (it once gave 31.63). A matrix 1e-6 from singular stays inside."""
    from fractions import Fraction

    fam = family("Wishart")
    params = {"df": np.array(1.01), "covariance_matrix": np.array([[2.0, 0.3], [0.3, 1.0]])}
    singular = np.array(
        [[0.0601022114291881, 0.1779672273380454], [0.1779672273380454, 0.5269745197929631]]
    )
    np.linalg.cholesky(singular)  # LAPACK: fine
    a, b, c = (Fraction(float(x)) for x in (singular[0, 0], singular[0, 1], singular[1, 1]))
    assert a * c - b * b < 0
    assert fam.log_prob(params, singular, "covariance_matrix") == -np.inf
    near = np.diag([1.0, 1e-6])
    assert np.isfinite(fam.log_prob({**params, "df": np.array(3.0)}, near, "covariance_matrix"))


@needs("LKJ")
def test_lkj_is_normalised() -> None:
    """d = 2: one correlation ρ on (−1, 1), quadrature; d = 3: uniform draws on the cube of the
    three correlations, the density times the indicator of positive definiteness, times 8."""
    from scipy import integrate

    fam = family("LKJ")
    for eta in (0.4, 1.0, 3.5):

        def density(r: float, eta: float = eta) -> float:
            c = np.array([[1.0, r], [r, 1.0]])
            return float(np.exp(fam.log_prob({"dimension": 2, "concentration": eta}, c)))

        total, _ = integrate.quad(density, -1.0, 1.0, epsabs=1e-12)
        assert total == pytest.approx(1.0, abs=1e-9)
    rng = np.random.default_rng(8)
    r = rng.uniform(-1.0, 1.0, (400000, 3))
    c = np.broadcast_to(np.eye(3), (len(r), 3, 3)).copy()
    for k, (i, j) in enumerate([(1, 0), (2, 0), (2, 1)]):
        c[:, i, j] = c[:, j, i] = r[:, k]
    with np.errstate(all="ignore"):
        lp = fam.log_prob({"dimension": 3, "concentration": 2.0}, c)
    assert 8.0 * np.mean(np.exp(lp)) == pytest.approx(1.0, abs=0.01)


@needs("LKJ")
def test_lkj_is_lkj_cholesky_on_the_factor_and_samples_correlations() -> None:
    """p(C) = p(L)/Π L_ii^(d−i) with L = chol C (the Jacobian of L ↦ L Lᵀ on correlation
    factors), and the draws are correlation matrices whose mean is the identity."""
    lkj, chol = family("LKJ"), family("LKJCholesky")
    c = np.array(_C4)
    factor = np.linalg.cholesky(c)
    jacobian = (np.array([3.0, 2.0, 1.0, 0.0]) * np.log(np.diag(factor))).sum()
    for eta in (0.2, 1.0, 9.0):
        p = {"dimension": 4, "concentration": eta}
        assert_close(lkj.log_prob(p, c), chol.log_prob(p, factor) - jacobian, rtol=1e-13)
    draws = lkj.sample({"dimension": 4, "concentration": 2.0}, (50000,), np.random.default_rng(9))
    assert np.all(np.diagonal(draws, axis1=-2, axis2=-1) == 1.0)
    assert np.all(np.isfinite(lkj.log_prob({"dimension": 4, "concentration": 2.0}, draws)))
    assert draws.mean(0) == pytest.approx(np.eye(4), abs=0.01)


@needs("LKJ", "LKJCovariancePrior")
def test_lkj_covariance_prior_jacobian_is_the_maps_own() -> None:
    """log p(X) − [LKJ(C) + Σ Gamma(sd_i)] is −log|det J| of (sd, C's lower entries) ↦ X's lower
    entries, J taken here by central differences of the map itself."""
    fam, lkj = family("LKJCovariancePrior"), family("LKJ")
    c, sd = np.array(_C3), np.array([0.7, 1.3, 2.1])
    x = sd[:, None] * c * sd[None, :]
    idx = [(1, 0), (2, 0), (2, 1)]

    def forward(t: np.ndarray) -> np.ndarray:
        cm = np.eye(3)
        for k, (i, j) in enumerate(idx):
            cm[i, j] = cm[j, i] = t[3 + k]
        xm = t[:3, None] * cm * t[None, :3]
        return np.array([xm[0, 0], xm[1, 1], xm[2, 2], *(xm[i, j] for i, j in idx)])

    t0 = np.array([*sd, *(c[i, j] for i, j in idx)])
    h = 1e-6
    jac = np.array([(forward(t0 + h * e) - forward(t0 - h * e)) / (2 * h) for e in np.eye(6)]).T
    params = {"dimension": 3, "concentration": 1.7, "sd_concentration": 2.5, "sd_rate": 1.2}
    want = (
        lkj.log_prob({"dimension": 3, "concentration": 1.7}, c)
        + stats.gamma(2.5, scale=1 / 1.2).logpdf(sd).sum()
        - np.log(abs(np.linalg.det(jac)))
    )
    assert_close(fam.log_prob(params, x), want, rtol=1e-9)
    draws = fam.sample(
        {k: np.asarray(v, dtype=np.float64) for k, v in params.items()},
        (100000,),
        np.random.default_rng(10),
    )
    assert np.sqrt(np.diagonal(draws, axis1=-2, axis2=-1)).mean(0) == pytest.approx(
        2.5 / 1.2, rel=0.01
    )


@needs("LKJ", "LKJCovariancePrior")
def test_lkj_domains() -> None:
    lkj = family("LKJ")
    c = np.array(_C3)
    assert np.isnan(lkj.log_prob({"dimension": 3, "concentration": 0.0}, c))
    assert np.isnan(lkj.log_prob({"dimension": 1, "concentration": 1.0}, np.eye(1)))
    for bad in (
        [[1.0, 0.6, 0.0], [0.6, 1.0, 0.48], [0.0, 0.48, 1.1]],  # diagonal not 1
        [[1.0, 0.6, 0.0], [0.5, 1.0, 0.48], [0.0, 0.48, 1.0]],  # not symmetric
        [[1.0, 0.9, -0.9], [0.9, 1.0, 0.9], [-0.9, 0.9, 1.0]],  # not positive definite
    ):
        assert lkj.log_prob({"dimension": 3, "concentration": 0.7}, np.array(bad)) == -np.inf
    cov = family("LKJCovariancePrior")
    p = {"dimension": 2, "concentration": 1.5, "sd_concentration": 2.0, "sd_rate": 1.0}
    assert cov.log_prob(p, np.array([[-1.0, 0.0], [0.0, 1.0]])) == -np.inf
    assert np.isnan(cov.log_prob({**p, "sd_rate": 0.0}, np.eye(2)))


# ----- the generated edge cases (conformance.plan.derived.edges) -------------------------------------
#: family → parametrization → the mpmath density (params, value) of a case there.
MP_DENSITIES: dict[str, Callable[[str | None], Callable[[dict, Any], Any]]] = {
    "MultivariateStudentT": lambda par: mp_multivariate_student_t,
    "WishartCholesky": lambda par: mp_on_factor(mp_wishart, par),
    "InverseWishart": lambda par: mp_on_matrix(mp_inverse_wishart, par),
    "InverseWishartCholesky": lambda par: mp_on_factor(mp_inverse_wishart, par),
    "LKJ": lambda par: mp_lkj,
    "LKJCovariancePrior": lambda par: mp_lkj_covariance,
    "MatrixNormal": lambda par: mp_matrix_normal,
    "ZeroSumNormal": lambda par: mp_zero_sum_normal,
    "GaussianRandomWalk": lambda par: mp_gaussian_random_walk,
    "CAR": lambda par: mp_car,
    "CirculantNormal": mp_circulant_normal,
    "ProjectedNormal": lambda par: mp_projected_normal,
    "SineBivariateVonMises": lambda par: mp_sine_bivariate,
    "SineSkewed": lambda par: mp_sine_skewed,
    "GaussianCopula": lambda par: _mp_copula("gamma", par),
    "GaussianCopulaBeta": lambda par: _mp_copula("beta", par),
    "GaussianStateSpace": mp_gaussian_state_space,
    "EulerMaruyama": lambda par: mp_euler_maruyama,
}


def _edge_cases() -> list[tuple[str, str, str | None, dict, Any, list[str]]]:
    """Every generated edge case (float32's too) of these families: (id, family,
    parametrization, params, value, the inputs whose partial derivative it judges)."""
    from conformance.cases.builtin import builtin_cases
    from conformance.cases.loader import find_case_files, load_case_file
    from conformance.expect.materialize import float64_inputs
    from conformance.plan.derived import edges

    out = []
    for path in find_case_files(builtin_cases()):
        for case in edges.edge_file(load_case_file(path).cases, path.name, bulk=True).cases:
            if case.family not in MP_DENSITIES or case.family not in reference.FAMILIES:
                continue
            params, value = float64_inputs(case)
            judged = case.spec.grad_wrt or (
                case.differentiable_inputs if "grad" in case.spec.checks else []
            )
            out.append(
                (
                    f"{path.stem}-{case.id}",
                    case.family,
                    case.parametrization,
                    params,
                    value,
                    list(judged),
                )
            )
    return out


EDGE_CASES = _edge_cases()


@pytest.mark.parametrize(
    ("case_id", "name", "par", "params", "value", "judged"),
    EDGE_CASES,
    ids=[c[0] for c in EDGE_CASES],
)
def test_generated_edges_match_mpmath(case_id, name, par, params, value, judged) -> None:
    """At every generated edge with a finite log_prob the oracle agrees with mpmath (40 digits,
    more where an input is huge or tiny), and every judged partial of a scalar parameter with
    mpmath.diff (one-sided at an end of its domain; relative, beside its inputs' conditioning:
    mp_partials)."""
    from conformance.reference.domains import interval

    fam = family(name)
    with np.errstate(all="ignore"):
        got = fam.log_prob(params, value, par)
        grads = fam.elementwise_grad(params, value, par)
    if not np.all(np.isfinite(got)):
        pytest.skip("no finite log_prob here: the support and domain tests cover it")
    flat = np.concatenate([np.ravel(a) for a in [*params.values(), value]])
    flat = np.abs(flat[np.isfinite(flat) & (flat != 0)])
    digits = 40 + int(np.ceil(np.max(np.abs(np.log10(flat))))) if flat.size else 40
    if name == "SineBivariateVonMises":
        digits -= 10  # Bessel functions of 1e38 at 80 digits in a quadrature take minutes
    density = MP_DENSITIES[name](par)
    b = fam.broadcast(params, value, par)
    info = fam.params(par)
    with mpmath.workdps(digits):
        want = np.empty(b.lp_shape)
        for idx in np.ndindex(*b.lp_shape):
            p = {k: v if info[k].static else v[idx] for k, v in b.params.items()}
            want[idx] = float(density(mp_params(p), to_mp(b.value[idx])))
        # A matrix with condition number 1e6 (`near-singular`, CAR's correlation 1e-6 from ±1):
        # a backward-stable float64 factorisation keeps its log-determinant (and the partials)
        # to about 1e-16 × 1e6.
        conditioned = ("near-singular", "correlation-below-1", "correlation-above-minus-1")
        rtol = 1e-9 if any(c in case_id for c in conditioned) else RTOL
        assert_close(got, want, rtol=rtol)
        if np.shape(got) != ():
            return
        mp_p, mp_v = mp_params(params), to_mp(value)
        rounded = rounded_inputs(fam, par, params, value)
        for k in judged:
            if k == "value" or np.ndim(params[k]) != 0:
                continue
            x0 = mp_p[k]
            iv = interval(info[k].domain)
            direction = 1 if iv is not None and float(x0) == iv.lo else 0

            def f(t, n=k):
                return density({**mp_p, n: t}, mp_v)

            # Relative to a tiny point, else 1e-20 (see test_oracle_continuous: mpmath's
            # default step reads a partial of 1e-77 at float32's largest df as 1e-50).
            step = {"h": min(abs(x0) * MPF("1e-15"), MPF("1e-20"))} if x0 else {}
            want_g = float(mpmath.diff(f, x0, direction=direction, **step))
            assert_partial_close(
                float(np.ravel(grads[k])[0]),
                want_g,
                input_scale(fam, par, k, float(params[k])),
                lambda k=k: sensitivity_terms(density, mp_p, mp_v, k, rounded),
                k,
                rtol,
            )


# ----- the structured normals against scipy ------------------------------------------------------
@needs("MatrixNormal")
def test_matrix_normal_vs_scipy() -> None:
    loc = normal((4, 3, 2), 31)
    rows, cols = cholesky((4, 3, 3), 32), cholesky((4, 2, 2), 33)
    x = loc + 2.0 * normal((4, 3, 2), 34)
    got = family("MatrixNormal").log_prob(
        {"loc": loc, "scale_tril_row": rows, "scale_tril_column": cols}, x
    )
    want = [
        stats.matrix_normal(m, r @ r.T, c @ c.T).logpdf(v)
        for m, r, c, v in zip(loc, rows, cols, x, strict=True)
    ]
    assert_close(got, np.array(want), rtol=1e-12)


@needs("CAR")
def test_car_is_a_multivariate_normal_with_its_precision() -> None:
    w = np.array([[0, 1, 1, 0], [1, 0, 1, 1], [1, 1, 0, 0], [0, 1, 0, 0]], dtype=np.float64)
    loc, x = normal((4,), 41), normal((4,), 42)
    for alpha, tau in ((0.6, 2.0), (-0.95, 0.3), (0.999, 7.0)):
        q = tau * (np.diag(w.sum(1)) - alpha * w)
        params = {"loc": loc, "correlation": alpha, "conditional_precision": tau, "adj_matrix": w}
        got = family("CAR").log_prob(params, x)
        want = stats.multivariate_normal(loc, np.linalg.inv(q)).logpdf(x)
        assert_close(got, want, rtol=1e-11)
    draws = family("CAR").sample(
        {
            "loc": loc,
            "correlation": np.float64(0.6),
            "conditional_precision": np.float64(2.0),
            "adj_matrix": w,
        },
        (200000,),
        np.random.default_rng(43),
    )
    q = 2.0 * (np.diag(w.sum(1)) - 0.6 * w)
    assert np.cov(draws.T) == pytest.approx(np.linalg.inv(q), abs=0.01)


@needs("CirculantNormal")
@pytest.mark.parametrize("n", [5, 6])
def test_circulant_normal_vs_scipy_toeplitz(n: int) -> None:
    from scipy.linalg import toeplitz

    row = (
        np.array([2.0, 0.7, 0.2, -0.1, 0.2, 0.7])[:n]
        if n == 6
        else np.array([2.0, 0.6, -0.2, -0.2, 0.6])
    )
    loc, x = normal((n,), 51), normal((3, n), 52)
    want = stats.multivariate_normal(loc, toeplitz(row)).logpdf(x)
    fam = family("CirculantNormal")
    got = fam.log_prob({"loc": loc, "covariance_row": row}, x, "covariance_row")
    assert_close(got, want, rtol=1e-12)
    rfft = np.fft.rfft(row).real
    got = fam.log_prob({"loc": loc, "covariance_rfft": rfft}, x, "covariance_rfft")
    assert_close(got, want, rtol=1e-12)
    draws = fam.sample(
        {"loc": loc, "covariance_row": row}, (200000,), np.random.default_rng(53), "covariance_row"
    )
    assert np.cov(draws.T) == pytest.approx(toeplitz(row), abs=0.03)


@needs("GaussianRandomWalk")
def test_gaussian_random_walk_is_a_multivariate_normal() -> None:
    steps, scale = 6, 1.3
    cov = scale**2 * np.minimum.outer(np.arange(1, steps + 1), np.arange(1, steps + 1))
    x = normal((4, steps), 61, scale=3.0)
    got = family("GaussianRandomWalk").log_prob({"scale": scale, "num_steps": steps}, x)
    assert_close(got, stats.multivariate_normal(np.zeros(steps), cov).logpdf(x), rtol=1e-12)
    draws = family("GaussianRandomWalk").sample(
        {"scale": np.float64(scale), "num_steps": np.float64(steps)},
        (100000,),
        np.random.default_rng(62),
    )
    assert np.cov(draws.T) == pytest.approx(cov, rel=0.03, abs=0.03)


@needs("ZeroSumNormal")
def test_zero_sum_normal_is_isotropic_on_the_hyperplane() -> None:
    """Its draws sum to 0 with variance σ²(1 − 1/n) per coordinate, and its density is the
    Normal(0, σ) of n − 1 orthonormal coordinates of the hyperplane (an orthonormal basis from
    scipy's null space of the all-ones row)."""
    from scipy.linalg import null_space

    n, scale = 5, 1.7
    basis = null_space(np.ones((1, n)))  # n × (n − 1), orthonormal
    coords = normal((3, n - 1), 71)
    x = coords @ basis.T
    fam = family("ZeroSumNormal")
    got = fam.log_prob({"scale": scale, "event_size": n}, x)
    assert_close(got, stats.norm(0.0, scale).logpdf(coords).sum(-1), rtol=1e-13)
    draws = fam.sample(
        {"scale": np.float64(scale), "event_size": np.float64(n)},
        (100000,),
        np.random.default_rng(72),
    )
    assert np.max(np.abs(draws.sum(-1))) < 1e-12
    assert draws.var(0) == pytest.approx(scale**2 * (1 - 1 / n), rel=0.02)
    assert fam.log_prob({"scale": scale, "event_size": n}, np.ones(n)) == -np.inf


# ----- the directional families ---------------------------------------------------------------
@needs("ProjectedNormal")
def test_projected_normal_is_normalised_and_samples_its_density() -> None:
    """On the circle the trapezoid rule over the angle; on S² Gauss–Legendre in cos θ times the
    trapezoid rule in φ; and E[x₃] of the density against the draws' mean."""
    fam = family("ProjectedNormal")
    angle = -np.pi + 2.0 * np.pi * np.arange(2048) / 2048
    circle = np.stack([np.cos(angle), np.sin(angle)], axis=-1)
    for mu in ([0.8, 1.5], [-3.0, 0.5], [0.0, 0.0], [12.0, -5.0]):
        total = (
            np.exp(fam.log_prob({"concentration": np.array(mu)}, circle)).sum() * 2.0 * np.pi / 2048
        )
        assert total == pytest.approx(1.0, abs=1e-12)
    mu3 = np.array([1.0, -0.5, 2.0])
    z, wz = np.polynomial.legendre.leggauss(200)
    phi = -np.pi + 2.0 * np.pi * np.arange(400) / 400
    zz, pp = np.meshgrid(z, phi, indexing="ij")
    r = np.sqrt(1.0 - zz * zz)
    sphere = np.stack([r * np.cos(pp), r * np.sin(pp), zz], axis=-1)
    dens = np.exp(fam.log_prob({"concentration": mu3}, sphere)) * wz[:, None] * 2.0 * np.pi / 400
    assert dens.sum() == pytest.approx(1.0, abs=1e-12)
    draws = fam.sample({"concentration": mu3}, (200000,), np.random.default_rng(81))
    assert np.allclose(np.linalg.norm(draws, axis=-1), 1.0)
    assert draws[:, 2].mean() == pytest.approx(float((dens * zz).sum()), abs=0.005)


@pytest.mark.parametrize(
    "mu",
    [
        [0.0, 0.0],
        [0.8, 1.5],
        [-30.0, -40.0],
        [0.0, 0.0, 0.0],
        [1.0, -0.5, 2.0],
        [300.0, 400.0, 0.0],
    ],
)
def test_projected_normal_projection_is_the_densitys_and_the_draws(mu: list[float]) -> None:
    """The statistic sample_fit judges (the signed angle from μ̂ on the circle, 1 − μ̂·x on
    S²): its CDF is the density's integral (mpmath's quadrature of the oracle's density over
    the angle, against the integral of the closed form or of the panels), and the oracle's
    draws fit it (scipy's KS test, p > 1e-4 at 50,000 draws)."""
    fam = family("ProjectedNormal")
    params = {"concentration": np.array(mu)}
    (projection,) = fam.projections(params, ())
    d, r = len(mu), float(np.linalg.norm(mu))
    unit = np.array(mu) / r if r > 0 else np.eye(d)[0]
    perp = np.array([-unit[1], unit[0]]) if d == 2 else np.cross(unit, [0.0, 1.0, 0.0])
    if d == 3 and np.linalg.norm(perp) < 0.5:
        perp = np.cross(unit, [1.0, 0.0, 0.0])
    perp = perp / np.linalg.norm(perp)

    def density(t: Any) -> Any:  # of the angle from μ̂ (two dimensions), of θ on S²
        x = np.cos(float(t)) * unit + np.sin(float(t)) * perp
        p = float(np.exp(fam.log_prob(params, x)))
        return p if d == 2 else 2.0 * mpmath.pi * p * mpmath.sin(t)

    for angle in (0.003, 0.3, 1.2, 2.9):
        if r > 100 and angle > 0.3:
            continue  # the density underflows there: nothing to integrate
        breaks = [0.0, min(angle, 1.0 / max(r, 1e-9)), angle]
        mass = float(mpmath.quad(density, sorted(set(breaks))))
        if d == 2:
            got = projection.cdf(np.array([angle]))[0] - 0.5
        else:
            got = projection.cdf(np.array([1.0 - np.cos(angle)]))[0]
        assert got == pytest.approx(mass, rel=1e-9, abs=1e-13), angle
    draws = fam.sample(params, (50_000,), np.random.default_rng(d))
    assert stats.kstest(projection.apply(draws), projection.cdf).pvalue > 1e-4


ANGLE_LAWS = [
    (
        "SineSkewed",
        {"loc": [0.5, -1.0], "concentration": [2.0, 0.7], "skewness": [0.3, -0.4]},
    ),
    (
        "SineSkewed",
        {"loc": [0.0, 3.0], "concentration": [1e-3, 30.0], "skewness": [0.5, -0.5]},
    ),
    (
        "SineBivariateVonMises",
        {"phi_loc": 0.3, "psi_loc": -1.0, "phi_concentration": 2.0, "psi_concentration": 1.0,
         "correlation": 0.5},
    ),
    (
        "SineBivariateVonMises",
        {"phi_loc": 2.5, "psi_loc": -3.0, "phi_concentration": 1.0, "psi_concentration": 2.0,
         "correlation": -6.0},
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "raw"), ANGLE_LAWS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(ANGLE_LAWS)]
)
def test_torus_angles_marginal_laws_are_the_joint_densitys(name: str, raw: dict) -> None:
    """Each angle's CDF (sample_fit's projections of SineSkewed and SineBivariateVonMises) has
    the joint density integrated over the other angle as its derivative (mpmath's quadrature,
    against central differences of the CDF), runs from 0 at −π to 1 at π, and fits the oracle's
    own draws (scipy's KS test, p > 1e-4 at 20,000 draws)."""
    fam = family(name)
    params = {k: np.array(v) for k, v in raw.items()}
    found = fam.projections(params, ())
    assert len(found) == 2
    for i, projection in enumerate(found):
        assert projection.cdf(np.array([-np.pi, np.pi])) == pytest.approx([0.0, 1.0], abs=1e-12)
        for t in (-2.0, 0.3, 1.7):

            def joint(u: Any, t: float = t, i: int = i) -> Any:
                x = np.array([t, float(u)]) if i == 0 else np.array([float(u), t])
                return float(np.exp(fam.log_prob(params, x)))

            marginal = float(mpmath.quad(joint, [-mpmath.pi, 0, mpmath.pi]))
            h = 1e-5
            slope = (projection.cdf(np.array([t + h])) - projection.cdf(np.array([t - h])))[0]
            assert slope / (2 * h) == pytest.approx(marginal, rel=1e-7, abs=1e-9)
        draws = fam.sample(params, (20_000,), np.random.default_rng(12 + i))
        draws = draws[~np.isnan(draws).any(-1)]
        assert stats.kstest(projection.apply(draws), projection.cdf).pvalue > 1e-4


def _torus_total(
    fam: reference.Family, params: dict, n: int = 1024
) -> tuple[float, np.ndarray, np.ndarray]:
    """∫∫ exp(log_prob) over [−π, π)² by the 2-D trapezoid rule on an n × n grid (exponentially
    convergent for a smooth periodic density), with the grid and the density on it."""
    a = -np.pi + 2.0 * np.pi * np.arange(n) / n
    grid = np.stack(np.meshgrid(a, a, indexing="ij"), axis=-1)
    dens = np.exp(fam.log_prob(params, grid))
    return float(dens.sum() * (2.0 * np.pi / n) ** 2), grid, dens


@needs("SineBivariateVonMises")
def test_sine_bivariate_von_mises_is_normalised() -> None:
    """The density itself summed over the torus (2-D, independent of the oracle's 1-D integral
    of the ψ-marginal and of the series), for a unimodal and a bimodal density."""
    fam = family("SineBivariateVonMises")
    for k1, k2, lam in ((2.0, 1.0, 0.5), (1.0, 2.0, -6.0), (20.0, 5.0, 15.0)):
        p = {
            "phi_loc": 0.3,
            "psi_loc": -1.0,
            "phi_concentration": k1,
            "psi_concentration": k2,
            "correlation": lam,
        }
        total, _, _ = _torus_total(fam, p)
        assert total == pytest.approx(1.0, abs=1e-12)


@needs("SineSkewed")
def test_sine_skewed_is_normalised_and_samples_its_skew() -> None:
    fam = family("SineSkewed")
    p = {
        "loc": np.array([0.5, -1.0]),
        "concentration": np.array([2.0, 0.7]),
        "skewness": np.array([0.3, -0.4]),
    }
    total, grid, dens = _torus_total(fam, p)
    assert total == pytest.approx(1.0, abs=1e-12)
    mean_sin = float((dens * np.sin(grid[..., 0] - 0.5)).sum() * (2.0 * np.pi / 1024) ** 2)
    draws = fam.sample(p, (200000,), np.random.default_rng(91))
    assert np.sin(draws[:, 0] - 0.5).mean() == pytest.approx(mean_sin, abs=0.005)
    assert np.isnan(fam.log_prob({**p, "skewness": np.array([0.8, 0.5])}, np.array([0.1, 0.2])))


# ----- the Gaussian copulas ------------------------------------------------------------------------
@needs("GaussianCopula", "GaussianCopulaBeta")
@pytest.mark.parametrize("name", ["GaussianCopula", "GaussianCopulaBeta"])
def test_gaussian_copulas_vs_scipy(name: str) -> None:
    """log N(q; 0, R) − Σ log φ(q_i) + Σ log f(x_i) with scipy's marginals and its
    multivariate normal, q = Φ⁻¹(F(x)) with scipy's quantile function."""
    r = np.array([[1.0, 0.5, 0.2], [0.5, 1.0, -0.3], [0.2, -0.3, 1.0]])
    if name == "GaussianCopula":
        params = {"concentration": np.array([2.0, 0.7, 5.0]), "rate": np.array([1.0, 3.0, 0.5])}
        marginal = stats.gamma(params["concentration"], scale=1 / params["rate"])
        x = np.array([[1.5, 0.1, 9.0], [0.2, 1.0, 30.0]])
    else:
        params = {
            "concentration1": np.array([2.0, 0.7, 5.0]),
            "concentration0": np.array([1.5, 3.0, 0.5]),
        }
        marginal = stats.beta(params["concentration1"], params["concentration0"])
        x = np.array([[0.3, 0.05, 0.9], [0.7, 0.5, 0.999]])
    q = stats.norm.ppf(marginal.cdf(x))
    want = (
        stats.multivariate_normal(np.zeros(3), r).logpdf(q)
        - stats.norm.logpdf(q).sum(-1)
        + marginal.logpdf(x).sum(-1)
    )
    fam = family(name)
    assert_close(
        fam.log_prob({**params, "correlation_matrix": r}, x, "correlation_matrix"), want, rtol=1e-10
    )
    chol = np.linalg.cholesky(r)
    got = fam.log_prob({**params, "correlation_cholesky": chol}, x, "correlation_cholesky")
    assert_close(got, want, rtol=1e-10)


@needs("GaussianCopula")
def test_gaussian_copula_keeps_the_upper_tail() -> None:
    """At Gamma(2, 1)'s x = 80, F = 1 − 1.4e-33 is 1 in float64; the oracle's q is −Φ⁻¹(1 − F)
    from the survival function, 12.0, where Φ⁻¹(F) would be inf."""
    fam = family("GaussianCopula")
    params = {
        "concentration": np.array([2.0, 2.0]),
        "rate": np.array([1.0, 1.0]),
        "correlation_matrix": np.array([[1.0, 0.5], [0.5, 1.0]]),
    }
    x = np.array([80.0, 1.0])
    with mpmath.workdps(60):
        want = float(_mp_copula("gamma", "correlation_matrix")(mp_params(params), to_mp(x)))
    assert_close(fam.log_prob(params, x), want, rtol=1e-13)
    draws = fam.sample(params, (100000,), np.random.default_rng(101))
    assert np.corrcoef(stats.norm.ppf(stats.gamma(2.0).cdf(draws)).T)[0, 1] == pytest.approx(
        0.5, abs=0.01
    )


# ----- the time series ------------------------------------------------------------------------
@needs("GaussianStateSpace")
def test_gaussian_state_space_vs_scipy_and_its_sampler() -> None:
    """The path's MultivariateNormal with scipy (batched initial values), and the sampler's
    covariance at the last step, Σ_k A^k Σ (A^k)ᵀ."""
    a = np.array([[0.9, 0.2], [-0.1, 0.8]])
    sigma = np.array([[1.0, 0.3], [0.3, 0.5]])
    steps = 4
    z0 = normal((3, 2), 111)
    x = normal((3, steps, 2), 112)
    cov = np.zeros((2 * steps, 2 * steps))
    power = [np.linalg.matrix_power(a, k) for k in range(steps + 1)]
    for i in range(steps):
        for j in range(steps):
            cov[2 * i : 2 * i + 2, 2 * j : 2 * j + 2] = sum(
                power[i - k] @ sigma @ power[j - k].T for k in range(min(i, j) + 1)
            )
    fam = family("GaussianStateSpace")
    params = {
        "num_steps": steps,
        "transition_matrix": a,
        "covariance_matrix": sigma,
        "initial_value": z0,
    }
    got = fam.log_prob(params, x, "covariance_matrix")
    want = [
        stats.multivariate_normal(
            np.concatenate([power[t + 1] @ z for t in range(steps)]), cov
        ).logpdf(v.ravel())
        for z, v in zip(z0, x, strict=True)
    ]
    assert_close(got, np.array(want), rtol=1e-12)
    draws = fam.sample(
        {**params, "num_steps": np.float64(steps), "initial_value": np.zeros(2)},
        (100000,),
        np.random.default_rng(113),
        "covariance_matrix",
    )
    assert np.cov(draws[:, -1].T) == pytest.approx(cov[-2:, -2:], rel=0.03)
    # sample_fit's projections of the path: draws of scipy's Gaussian of the whole path (the
    # covariance built here) fit every one of them.
    one = {**params, "initial_value": z0[0]}
    path = stats.multivariate_normal(
        np.concatenate([power[t + 1] @ z0[0] for t in range(steps)]), cov
    ).rvs(50_000, random_state=114)
    found = fam.projections(one, (), "covariance_matrix")
    assert len(found) == 5
    for projection in found:
        values = projection.apply(path.reshape(-1, steps, 2))
        assert stats.kstest(values, projection.cdf).pvalue > 1e-4, projection.name


@needs("EulerMaruyama")
def test_euler_maruyama_is_the_chain_of_normal_steps_and_samples_it() -> None:
    """log p is scipy's Normal log densities of each step summed, and the sampler's last state
    has the scheme's mean and variance (the recursions m ← m + Δθ(μ − m), v ← (1 − θΔ)²v + σ²Δ)."""
    fam = family("EulerMaruyama")
    t = np.array([0.0, 0.2, 0.5, 1.5])
    theta, mu, sigma = 1.2, 0.4, 0.7
    params = {
        "t": t,
        "theta": theta,
        "mu": mu,
        "sigma": sigma,
        "init_loc": np.float64(-0.5),
        "init_scale": np.float64(0.3),
    }
    x = np.array([[-0.4, 0.0, 0.3, 0.9], [-1.0, -2.0, 1.0, 0.0]])
    want = stats.norm(-0.5, 0.3).logpdf(x[:, 0])
    for k in range(1, 4):
        dt = t[k] - t[k - 1]
        want = want + stats.norm(
            x[:, k - 1] + dt * theta * (mu - x[:, k - 1]), sigma * np.sqrt(dt)
        ).logpdf(x[:, k])
    assert_close(fam.log_prob(params, x), want, rtol=1e-13)
    draws = fam.sample(params, (200000,), np.random.default_rng(121))
    m, v = -0.5, 0.09
    for k in range(1, 4):
        dt = t[k] - t[k - 1]
        m, v = m + dt * theta * (mu - m), (1 - theta * dt) ** 2 * v + sigma**2 * dt
    assert draws[:, -1].mean() == pytest.approx(m, abs=0.01)
    assert draws[:, -1].var() == pytest.approx(v, rel=0.02)
    bad = fam.log_prob({**params, "t": np.array([0.0, 0.5, 0.2, 1.0])}, x[0])
    assert np.isnan(bad)
    # sample_fit's law: the path's Gaussian, whose log density is log_prob's chain of steps,
    # with batched time grids too.
    from conformance.reference.families.euler_maruyama import path_gaussian

    grids = {**params, "t": np.array([t, [0.0, 1e-3, 1.0, 100.0]]), "init_scale": np.float64(2.0)}
    mean, cov = path_gaussian(grids)
    for row in range(2):
        gauss = [_gaussian_log_density_mp(mean[row], cov[row], xi) for xi in x]
        one = {**grids, "t": grids["t"][row]}
        # Held to 50 digits: the second grid's steps, 1e-3 beside 100, leave a float64
        # factorisation (scipy's) 2e-10 to 5e-9 off, as the BLAS kernel has it.
        assert_close(fam.log_prob(one, x), gauss, rtol=1e-12)


def _gaussian_log_density_mp(mean: np.ndarray, cov: np.ndarray, x: np.ndarray) -> float:
    """A Gaussian's log density at ``x`` in 50 digits (the float64 mean and covariance exact)."""
    with mpmath.workdps(50):
        c = mpmath.matrix([[mpmath.mpf(float(v)) for v in r] for r in cov])
        d = mpmath.matrix(
            [mpmath.mpf(float(a)) - mpmath.mpf(float(m)) for a, m in zip(x, mean, strict=True)]
        )
        quad = (d.T * mpmath.inverse(c) * d)[0]
        log_det = mpmath.log(mpmath.det(c))
        return float(-(len(x) * mpmath.log(2 * mpmath.pi) + log_det + quad) / 2)
