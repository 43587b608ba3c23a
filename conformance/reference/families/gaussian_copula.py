"""GaussianCopula(marginal, correlation_matrix R | correlation_cholesky L) (NumPyro's) and
GaussianCopulaBeta, its Beta-marginal form: each component x_i has the univariate marginal
F_i, and q = Φ⁻¹(F(x)) is Normal(0, R):

    log p(x) = Σ_i log f_i(x_i) − ½·log|R| − ½·qᵀ(R⁻¹ − I)q.

GaussianCopula's cases take Gamma(concentration, rate) marginals (parametrisations
``correlation_matrix``, ``correlation_cholesky``); GaussianCopulaBeta's are its
Beta(concentration1, concentration0). The marginal parameters are vectors over the event (a
size-1 one broadcasts). q is taken from the smaller tail and from its logarithm,
Φ⁻¹(F) = ndtri_exp(log F) below the median and −ndtri_exp(log(1 − F)) above it, the tails' logs
from their series and continued fractions where they underflow: F = 1 − 1e-20 is 1 in float64,
and Gamma(1e6)'s F(1.5) is e^(−1.2e7). Where a coordinate of q is infinite (x at an end of a
bounded marginal) the quadratic form's sign over those coordinates decides ±∞.

Gradients: R's and L's in closed form as for MultivariateNormal's covariance and scale_tril
(R's compared off its fixed unit diagonal, structure ``off_diagonal_symmetric``), the value's
through ∂q/∂x = f/φ(q), a marginal parameter's through ∂F/∂θ/φ(q) = ±(∂ log T/∂θ)·T/φ(q) for the
tail T used: in closed form for the Gamma's rate, as a truncated mean of log T (a series, or
quadrature of the truncated density) for the shape parameters.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import integrate, special

from .. import projections
from ..constants import HALF_LOG_2PI
from ..core import Arrays, Family, Options, OracleError, ParamInfo, ValueInfo
from .wishart import _chol_or_identity

#: Below this a tail is taken from its series or continued fraction instead of scipy's value.
TINY = 1e-280
EPS = np.finfo(float).eps


def _log_gamma_lower_series(a: float, x: float) -> float:
    """log P(a, x) = a·log x − x − lgamma(a + 1) + log Σ_k x^k/((a+1)…(a+k))."""
    total, term, k = 1.0, 1.0, 0
    while term > EPS * total and k < 100000:
        k += 1
        term *= x / (a + k)
        total += term
    return a * np.log(x) - x - special.gammaln(a + 1.0) + np.log(total)


def _log_gamma_upper_fraction(a: float, x: float) -> float:
    """log Q(a, x) by the Legendre continued fraction (modified Lentz), for x > a + 1."""
    tiny = 1e-300
    b = x + 1.0 - a
    c, d = 1.0 / tiny, 1.0 / b
    h = d
    for i in range(1, 100000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        step = d * c
        h *= step
        if abs(step - 1.0) < EPS:
            break
    return -x + a * np.log(x) - special.gammaln(a) + np.log(h)


def _log_beta_lower_fraction(a: float, b: float, x: float) -> float:
    """log I_x(a, b) = a·log x + b·log(1 − x) − log a − log B(a, b) + log(betacf), the continued
    fraction of Numerical Recipes (converges for x < (a + 1)/(a + b + 2))."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (tiny if abs(d) < tiny else d)
    h = d
    for m in range(1, 100000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (tiny if abs(d) < tiny else d)
        c = 1.0 + aa / c
        c = tiny if abs(c) < tiny else c
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (tiny if abs(d) < tiny else d)
        c = 1.0 + aa / c
        c = tiny if abs(c) < tiny else c
        step = d * c
        h *= step
        if abs(step - 1.0) < EPS:
            break
    return a * np.log(x) + b * np.log1p(-x) - np.log(a) - special.betaln(a, b) + np.log(h)


def _elementwise(fn, *arrays: np.ndarray) -> np.ndarray:
    arrays = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in arrays))
    out = np.empty(arrays[0].shape)
    for idx in np.ndindex(*out.shape):
        out[idx] = fn(*(float(a[idx]) for a in arrays))
    return out


class Marginal:
    """A univariate marginal: its parameter names, log density, the logs of its two tails
    (accurate where they underflow) and the derivatives the copula needs."""

    names: tuple[str, ...] = ()

    def log_pdf(self, p: Arrays, x: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def log_tails(self, p: Arrays, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(log F(x), log(1 − F(x)))."""
        raise NotImplementedError

    def d_log_pdf(self, p: Arrays, x: np.ndarray) -> dict[str, np.ndarray]:
        """∂ log f/∂x (key ``value``) and ∂ log f/∂θ."""
        raise NotImplementedError

    def d_log_tail(self, p: Arrays, x: np.ndarray, lower: np.ndarray) -> dict[str, np.ndarray]:
        """∂ log T/∂θ for the tail T used (F where ``lower``, else 1 − F)."""
        raise NotImplementedError

    def sample(self, p: Arrays, u: np.ndarray) -> np.ndarray:
        raise NotImplementedError


def _quad(fn, lo: float, hi: float) -> float:
    """QUADPACK near float64's limit; its 'roundoff error' warning there is expected (the
    result is good to ~1e-15, held to mpmath in the oracle tests)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        return integrate.quad(fn, lo, hi, epsabs=0.0, epsrel=1.2e-14, limit=400)[0]


def _gamma_d_log_tail(a: float, y: float, lower: bool) -> float:
    """∂ log P(a, y)/∂a (``lower``) or ∂ log Q(a, y)/∂a, to ~1e-16: Richardson differences of
    log P lose 1e-13, which the copula's partial cancellations turn into 5e-13 of the answer.
    Lower: log y − Σ_k ψ(a + k + 1)·t_k / Σ_k t_k with t_k = Π_(j≤k) y/(a + j) (the series of P).
    Upper: log y − ψ(a) + E[log1p(S/y)] for S = T − y given T > y, whose density
    ∝ (1 + s/y)^(a−1)·e^(−s) is integrated by quadrature."""
    if lower:
        t, total, weighted, k = 1.0, 0.0, 0.0, 0
        while True:
            total += t
            weighted += t * special.digamma(a + k + 1.0)
            k += 1
            t *= y / (a + k)
            if t < EPS * total or k > 1_000_000:
                break
        return float(np.log(y) - weighted / total)

    def w(s: float) -> float:
        return float(np.exp((a - 1.0) * np.log1p(s / y) - s))

    mean = _quad(lambda s: w(s) * np.log1p(s / y), 0.0, np.inf) / _quad(w, 0.0, np.inf)
    return float(np.log(y) - special.digamma(a) + mean)


def _beta_lower_log_moments(a: float, b: float, x: float) -> tuple[float, float]:
    """(E[log X], E[log(1 − X)]) for X ~ Beta(a, b) given X < x, by quadrature in v with
    X = x·v^(1/a) (which takes away X^(a−1)'s singularity at 0)."""

    def w(v: float) -> float:
        return float(np.exp((b - 1.0) * np.log1p(-x * v ** (1.0 / a))))

    mass = _quad(w, 0.0, 1.0)
    log_x = np.log(x) + _quad(lambda v: w(v) * np.log(v), 0.0, 1.0) / (a * mass)
    log_1mx = _quad(lambda v: w(v) * np.log1p(-x * v ** (1.0 / a)), 0.0, 1.0) / mass
    return float(log_x), float(log_1mx)


class GammaMarginal(Marginal):
    names = ("concentration", "rate")

    def log_pdf(self, p, x):
        a, b = p["concentration"], p["rate"]
        return special.xlogy(a, b) + special.xlogy(a - 1.0, x) - b * x - special.gammaln(a)

    def log_tails(self, p, x):
        a, y = np.broadcast_arrays(p["concentration"], p["rate"] * x)
        with np.errstate(divide="ignore"):
            f, s = special.gammainc(a, y), special.gammaincc(a, y)
            log_f, log_s = np.log(f), np.log(s)
        small_f = (f < TINY) & (y > 0) & np.isfinite(y)
        small_s = (s < TINY) & (y > a + 1.0) & np.isfinite(y)
        if small_f.any():
            log_f = np.where(
                small_f,
                _elementwise(
                    _log_gamma_lower_series, np.where(small_f, a, 1.0), np.where(small_f, y, 1.0)
                ),
                log_f,
            )
        if small_s.any():
            log_s = np.where(
                small_s,
                _elementwise(
                    _log_gamma_upper_fraction, np.where(small_s, a, 1.0), np.where(small_s, y, 3.0)
                ),
                log_s,
            )
        return log_f, log_s

    def d_log_pdf(self, p, x):
        a, b = p["concentration"], p["rate"]
        return {
            "value": (a - 1.0) / x - b,
            "concentration": np.log(b) + np.log(x) - special.digamma(a),
            "rate": a / b - x,
        }

    def d_log_tail(self, p, x, lower):
        a = np.broadcast_to(p["concentration"], x.shape)
        y = p["rate"] * x
        d_a = np.empty(x.shape)
        for idx in np.ndindex(*x.shape):
            d_a[idx] = _gamma_d_log_tail(float(a[idx]), float(y[idx]), bool(lower[idx]))
        # ∂F/∂b = x·f(x)/b = −∂(1 − F)/∂b, divided by the tail used.
        log_f, log_s = self.log_tails(p, x)
        ratio = np.exp(self.log_pdf(p, x) - np.where(lower, log_f, log_s))
        return {
            "concentration": d_a,
            "rate": np.where(lower, 1.0, -1.0) * x * ratio / p["rate"],
        }

    def sample(self, p, u):
        return special.gammaincinv(p["concentration"], u) / p["rate"]


class BetaMarginal(Marginal):
    names = ("concentration1", "concentration0")

    def log_pdf(self, p, x):
        a, b = p["concentration1"], p["concentration0"]
        return special.xlogy(a - 1.0, x) + special.xlog1py(b - 1.0, -x) - special.betaln(a, b)

    def log_tails(self, p, x):
        a, b, x = np.broadcast_arrays(p["concentration1"], p["concentration0"], x)
        with np.errstate(divide="ignore"):
            f = special.betainc(a, b, x)
            s = special.betainc(b, a, 1.0 - x)
            log_f, log_s = np.log(f), np.log(s)
        small_f = (f < TINY) & (x > 0) & (x < 1)
        small_s = (s < TINY) & (x > 0) & (x < 1)
        if small_f.any():
            log_f = np.where(
                small_f,
                _elementwise(
                    _log_beta_lower_fraction,
                    np.where(small_f, a, 1.0),
                    np.where(small_f, b, 1.0),
                    np.where(small_f, x, 0.5),
                ),
                log_f,
            )
        if small_s.any():
            log_s = np.where(
                small_s,
                _elementwise(
                    _log_beta_lower_fraction,
                    np.where(small_s, b, 1.0),
                    np.where(small_s, a, 1.0),
                    np.where(small_s, 1.0 - x, 0.5),
                ),
                log_s,
            )
        return log_f, log_s

    def d_log_pdf(self, p, x):
        a, b = p["concentration1"], p["concentration0"]
        dab = special.digamma(a + b)
        return {
            "value": (a - 1.0) / x - (b - 1.0) / (1.0 - x),
            "concentration1": np.log(x) - special.digamma(a) + dab,
            "concentration0": np.log1p(-x) - special.digamma(b) + dab,
        }

    def d_log_tail(self, p, x, lower):
        a, b = np.broadcast_arrays(p["concentration1"], p["concentration0"])
        a, b = np.broadcast_to(a, x.shape), np.broadcast_to(b, x.shape)
        d_a, d_b = np.empty(x.shape), np.empty(x.shape)
        for idx in np.ndindex(*x.shape):
            ai, bi, xi = float(a[idx]), float(b[idx]), float(x[idx])
            if lower[idx]:  # X < x
                log_x, log_1mx = _beta_lower_log_moments(ai, bi, xi)
            else:  # 1 − X < 1 − x, 1 − X ~ Beta(b, a)
                log_1mx, log_x = _beta_lower_log_moments(bi, ai, 1.0 - xi)
            dab = special.digamma(ai + bi)
            d_a[idx] = log_x - special.digamma(ai) + dab
            d_b[idx] = log_1mx - special.digamma(bi) + dab
        return {"concentration1": d_a, "concentration0": d_b}

    def sample(self, p, u):
        return special.betaincinv(p["concentration1"], p["concentration0"], u)


def _fold(grad: np.ndarray, like: np.ndarray) -> np.ndarray:
    """Sum the event axis back to size 1 where the parameter had size 1 there."""
    return grad.sum(-1, keepdims=True) if like.shape[-1] == 1 else grad


def normal_quantiles(marginal: Marginal, p: Arrays, x: np.ndarray):
    """(q = Φ⁻¹(F(x)) from the smaller tail's logarithm, whether that tail is the lower one,
    and log T of the tail used)."""
    log_f, log_s = marginal.log_tails(p, x)
    lower = log_f <= np.log(0.5)
    log_tail = np.where(lower, log_f, log_s)
    q = special.ndtri_exp(np.minimum(log_tail, np.log(0.5)))
    return np.where(lower, q, -q), lower, log_tail


def _quadratic(q: np.ndarray, z: np.ndarray, r_inv_minus_eye) -> np.ndarray:
    """−½·qᵀ(R⁻¹ − I)q = −½(‖z‖² − ‖q‖²), and where q has infinite coordinates the sign of
    the form over them (sᵀ(R⁻¹ − I)s for their signs s): −∞, +∞, or NaN where it is 0."""
    with np.errstate(invalid="ignore"):
        finite = -0.5 * ((z * z).sum(-1) - (q * q).sum(-1))
    inf = np.isinf(q)
    if not inf.any():
        return finite
    s = np.where(inf, np.sign(q), 0.0)
    form = np.einsum("...i,...ij,...j->...", s, r_inv_minus_eye(), s)
    limit = np.where(form > 0, -np.inf, np.where(form < 0, np.inf, np.nan))
    return np.where(inf.any(-1), limit, finite)


class GaussianCopula(Family):
    marginal: Marginal = GammaMarginal()

    def _event_shape(self, params: Arrays, parametrization: str | None) -> tuple[int, ...]:
        key = parametrization or self.default_parametrization
        n = np.shape(params[key])[-1]
        sizes = {np.shape(params[k])[-1] for k in self.marginal.names}
        if not sizes <= {1, n}:
            raise OracleError(
                f"{self.name}: marginal sizes {sorted(sizes)} do not match {key}'s {n}"
            )
        return (n,)

    def _factor(self, params: Arrays, parametrization: str) -> np.ndarray:
        mat = params[parametrization]
        if parametrization == "correlation_cholesky":
            diag = np.diagonal(mat, axis1=-2, axis2=-1)
            ok = np.all(diag > 0, axis=-1) & np.all(np.isfinite(mat), axis=(-1, -2))
            return np.where(ok[..., None, None], mat, np.eye(mat.shape[-1]))
        return _chol_or_identity(mat)[0]

    def _marginals(self, params: Arrays, value: np.ndarray) -> dict[str, np.ndarray]:
        return {k: np.broadcast_to(params[k], value.shape) for k in self.marginal.names}

    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        m = self._marginals(params, value)
        q, _, _ = normal_quantiles(self.marginal, m, value)
        chol = self._factor(params, parametrization)
        finite_q = np.where(np.isfinite(q), q, 0.0)
        z = np.linalg.solve(chol, finite_q[..., None])[..., 0]

        def r_inv_minus_eye() -> np.ndarray:
            inv = np.linalg.inv(chol)
            return np.swapaxes(inv, -1, -2) @ inv - np.eye(chol.shape[-1])

        log_det = np.log(np.diagonal(chol, axis1=-2, axis2=-1)).sum(-1)
        copula = -log_det + _quadratic(np.where(np.isinf(q), q, finite_q), z, r_inv_minus_eye)
        return copula + self.marginal.log_pdf(m, value).sum(-1)

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        m = self._marginals(params, value)
        q, lower, log_tail = normal_quantiles(self.marginal, m, value)
        chol = self._factor(params, parametrization)
        z = np.linalg.solve(chol, q[..., None])[..., 0]
        w = np.linalg.solve(np.swapaxes(chol, -1, -2), z[..., None])[..., 0]  # R⁻¹ q
        g_q = q - w  # ∂/∂q of −½ qᵀ(R⁻¹ − I)q
        log_phi = -0.5 * q * q - HALF_LOG_2PI
        d_log_pdf = self.marginal.d_log_pdf(m, value)
        log_f = self.marginal.log_pdf(m, value)
        out = {"value": d_log_pdf["value"] + g_q * np.exp(log_f - log_phi)}  # ∂q/∂x = f/φ(q)
        d_log_tail = self.marginal.d_log_tail(m, value, lower)
        sign = np.where(lower, 1.0, -1.0)
        tail_over_phi = np.exp(log_tail - log_phi)
        for k in self.marginal.names:
            d_q = sign * d_log_tail[k] * tail_over_phi  # ∂q/∂θ = (∂F/∂θ)/φ(q)
            out[k] = _fold(d_log_pdf[k] + g_q * d_q, params[k])
        if parametrization == "correlation_matrix":
            inv = np.linalg.inv(chol)
            r_inv = np.swapaxes(inv, -1, -2) @ inv
            out[parametrization] = -0.5 * r_inv + 0.5 * w[..., :, None] * w[..., None, :]
        else:
            diag = np.diagonal(chol, axis1=-2, axis2=-1)
            out[parametrization] = np.tril(w[..., :, None] * z[..., None, :]) - (1.0 / diag)[
                ..., None
            ] * np.eye(chol.shape[-1])
        return out

    def _projections(self, params, parametrization, options):
        # A Gaussian copula keeps its marginals: each coordinate follows its own marginal law.
        n = self._event_shape(params, parametrization)[0]
        batch = np.shape(params[parametrization])[:-2]
        found = []
        for i in projections.coordinates(n):
            p = {k: np.broadcast_to(params[k], (*batch, n))[..., i] for k in self.marginal.names}

            def cdf(y, p=p):
                return np.exp(self.marginal.log_tails(p, y)[0])

            found.append(projections.coordinate(i, cdf))
        return found

    def _sample(self, params, shape, rng, parametrization):
        chol = self._factor(params, parametrization)
        n = chol.shape[-1]
        q = np.einsum("...ij,...j->...i", chol, rng.standard_normal((*shape, n)))
        m = {k: np.broadcast_to(params[k], (*shape, n)) for k in self.marginal.names}
        return self.marginal.sample(m, special.ndtr(q))


class GaussianCopulaBeta(GaussianCopula):
    marginal = BetaMarginal()


def _parametrizations(names: tuple[str, ...]) -> dict[str, dict[str, ParamInfo]]:
    marginal = {k: ParamInfo(1, "positive") for k in names}
    return {
        "correlation_matrix": {
            **marginal,
            "correlation_matrix": ParamInfo(2, "corr_matrix", structure="off_diagonal_symmetric"),
        },
        "correlation_cholesky": {
            **marginal,
            "correlation_cholesky": ParamInfo(2, "corr_cholesky", structure="lower_triangular"),
        },
    }


GAUSSIAN_COPULA = GaussianCopula(
    name="GaussianCopula",
    parametrizations=_parametrizations(GammaMarginal.names),
    value=ValueInfo(1, "positive"),
)
GAUSSIAN_COPULA_BETA = GaussianCopulaBeta(
    name="GaussianCopulaBeta",
    parametrizations=_parametrizations(BetaMarginal.names),
    value=ValueInfo(1, "unit_interval"),
)
