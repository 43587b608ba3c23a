"""MultivariateStudentT(df ν, loc μ, scale_tril L) on ℝⁿ (NumPyro's; torch has none):

    log p(x) = lgamma((ν+n)/2) − lgamma(ν/2) − n/2·log(νπ) − log|det L| − (ν+n)/2·log1p(M/ν)

with M = ‖L⁻¹(x − μ)‖². The two lgammas are huge and nearly equal for large ν (6e-10 absolute
lost at ν = 1e6), so the normaliser is summed in half steps, each a log B that does not
cancel: lgamma((ν+n)/2) − lgamma(ν/2) − n/2·log π = −Σ_{k<n} log B((ν+k)/2, ½). ∂/∂ν is written
with the same gap functions as the univariate StudentT (n = 1 is that family).
"""

from __future__ import annotations

import numpy as np

from .. import projections
from ..core import Arrays, Family, Options, OracleError, ParamInfo, ValueInfo
from ..pathwise import fold_to
from .beta import digamma_gap, f_gap, log_beta
from .student_t import STUDENT_T


def _solve_lower(chol: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.linalg.solve(chol, b[..., None])[..., 0]


def _valid_or_identity(chol: np.ndarray) -> np.ndarray:
    """The identity in place of a factor with a diagonal entry ≤ 0 or not finite (its
    log_prob is NaN anyway), so one bad element does not stop the others' solves."""
    diag = np.diagonal(chol, axis1=-2, axis2=-1)
    ok = np.all(diag > 0, axis=-1) & np.all(np.isfinite(chol), axis=(-1, -2))
    return np.where(ok[..., None, None], chol, np.eye(chol.shape[-1]))


def log1p_ratio(m: np.ndarray, df: np.ndarray) -> np.ndarray:
    """log(1 + m/df) for m ≥ 0, finite for every finite m (log m − log df where 1 is lost)."""
    t = m / df
    big = ~(t < 1e17)
    return np.where(big, np.log(m) - np.log(df), np.log1p(np.where(big, 1.0, t)))


def log_normalizer(df: np.ndarray, n: int) -> np.ndarray:
    """lgamma((ν+n)/2) − lgamma(ν/2) − n/2·log(νπ), as −Σ_{k<n} log B((ν+k)/2, ½) − n/2·log ν."""
    k = np.arange(n)
    return -log_beta(0.5 * (df[..., None] + k), 0.5).sum(-1) - 0.5 * n * np.log(df)


class MultivariateStudentT(Family):
    def _event_shape(self, params: Arrays, parametrization: str | None) -> tuple[int, ...]:
        shape, loc_n = np.shape(params["scale_tril"]), np.shape(params["loc"])[-1]
        if shape[-1] != shape[-2] or loc_n not in (1, shape[-1]):
            raise OracleError(
                f"MultivariateStudentT: scale_tril {shape} is not (..., n, n) for loc of event "
                f"size {loc_n}"
            )
        return (shape[-1],)

    def _parts(self, params: Arrays, value: np.ndarray):
        chol = _valid_or_identity(params["scale_tril"])
        z = _solve_lower(chol, value - params["loc"])
        return chol, z, (z * z).sum(-1)

    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        df = params["df"]
        chol, _, m = self._parts(params, value)
        n = value.shape[-1]
        log_det = np.log(np.diagonal(chol, axis1=-2, axis2=-1)).sum(-1)
        return log_normalizer(df, n) - log_det - 0.5 * (df + n) * log1p_ratio(m, df)

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        df = params["df"]
        chol, z, m = self._parts(params, value)
        n = value.shape[-1]
        w = _solve_lower(np.swapaxes(chol, -1, -2), z)  # L⁻ᵀ z = Σ⁻¹(x − μ)
        c = (df + n) / (df + m)
        # ∂/∂ν = ½·[ψ((ν+n)/2) − ψ(ν/2) − n/ν] + ½·[q − log1p(t)] + n·q/(2ν), t = M/ν,
        # q = t/(1 + t): each bracket whole (large ν makes them O(1/ν²) sums of O(1/ν) terms).
        t = m / df
        q = m / (df + m)
        gap_t = np.where(t < 1.0, f_gap(np.minimum(t, 1.0)), q - log1p_ratio(m, df))
        g_df = 0.5 * digamma_gap(0.5 * df, 0.5 * n) + 0.5 * gap_t + 0.5 * n * q / df
        d_loc = c[..., None] * w
        diag = np.diagonal(chol, axis1=-2, axis2=-1)
        g_chol = c[..., None, None] * np.tril(w[..., :, None] * z[..., None, :])
        g_chol = g_chol - (1.0 / diag)[..., None] * np.eye(n)
        return {
            "df": g_df,
            "loc": _fold(d_loc, params["loc"]),
            "scale_tril": g_chol,
            "value": -d_loc,
        }

    def _projections(self, params, parametrization, options):
        chol = params["scale_tril"]
        cov = chol @ np.swapaxes(chol, -1, -2)
        return projections.gaussian(params["loc"], cov, projections.vector, df=params["df"])

    def _pathwise(self, params, draws, weights, parametrization, options):
        """x = loc + L·y, y = z·√(df/V) (NumPyro's: a normal draw over the root of a χ² one):
        with y = L⁻¹(x − loc) held, ∂(w·x)/∂loc = w and ∂/∂L_jk = w_j·y_k. df reaches x through
        V, which the draw does not show (``pathwise_without``)."""
        loc, chol = params["loc"], params["scale_tril"]
        y = np.linalg.solve(chol, (draws - loc)[..., None])[..., 0]
        w = np.broadcast_to(weights, draws.shape)
        return {"loc": fold_to(w, loc), "scale_tril": w[..., :, None] * y[..., None, :]}

    def _weighted_law(self, params, weights, parametrization):
        """s = wᵀx ~ StudentT(df, wᵀloc, ‖Lᵀw‖): what ``rsample_grad`` judges df's pathwise
        derivative by (``bounded_pathwise``), the draw not showing its χ² noise."""
        w = np.asarray(weights, dtype=np.float64)
        loc = (params["loc"] * w).sum(-1)
        spread = np.linalg.norm(np.einsum("...ji,j->...i", params["scale_tril"], w), axis=-1)
        batch = np.broadcast_shapes(np.shape(params["df"]), loc.shape, spread.shape)
        law = {"df": params["df"], "loc": loc, "scale": spread}
        return STUDENT_T, {k: np.broadcast_to(v, batch) for k, v in law.items()}, "df_loc_scale"

    def _sample(self, params, shape, rng, parametrization):
        chol = params["scale_tril"]
        n = chol.shape[-1]
        eps = rng.standard_normal((*shape, n))
        scale = np.sqrt(params["df"] / rng.chisquare(params["df"], size=shape))
        return params["loc"] + np.einsum("...ij,...j->...i", chol, eps) * scale[..., None]

    def _mean(self, params, parametrization, options):
        # loc for ν > 1; undefined below, where ∫|x| p(x) dx diverges (NumPyro returns +inf).
        df = params["df"][..., None]
        return np.where(df > 1.0, params["loc"], np.nan)

    def _variance(self, params, parametrization, options):
        # diag(L Lᵀ)·ν/(ν − 2) for ν > 2, +inf for 1 < ν ≤ 2, undefined (no mean) for ν ≤ 1.
        chol = params["scale_tril"]
        df = params["df"][..., None]
        found = (chol * chol).sum(-1) * (df / (df - 2.0))
        return np.where(df > 2.0, found, np.where(df > 1.0, np.inf, np.nan))


def _fold(grad: np.ndarray, like: np.ndarray) -> np.ndarray:
    """Sum the event axis back to size 1 where loc had size 1 there (a scalar loc)."""
    return grad.sum(-1, keepdims=True) if like.shape[-1] == 1 else grad


MULTIVARIATE_STUDENT_T = MultivariateStudentT(
    name="MultivariateStudentT",
    pathwise_without={
        "df": "df reaches the draws through the χ² draw that divides the normal one (two "
        "noises): the draw does not show it"
    },
    parametrizations={
        "scale_tril": {
            "df": ParamInfo(0, "positive"),
            "loc": ParamInfo(1, "real"),
            "scale_tril": ParamInfo(2, "lower_cholesky", structure="lower_triangular"),
        }
    },
    value=ValueInfo(1, "real_vector"),
)
