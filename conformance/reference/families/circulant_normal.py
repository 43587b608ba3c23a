"""CirculantNormal(loc, covariance_row c | covariance_rfft r) (NumPyro's): a MultivariateNormal
on ℝⁿ whose covariance is the symmetric circulant matrix with first row c (c_k = c_{n−k}). Its
eigenvalues are λ_k = Re FFT(c)_k (λ_k = λ_{n−k}; r holds λ_0 … λ_{n//2}) and its
eigenvectors the Fourier modes, so with x̂ = FFT(x − loc)

    log p(x) = −½·(n·log 2π + Σ_k log λ_k + Σ_k |x̂_k|²/(n·λ_k)),

scipy's multivariate_normal with the Toeplitz (here circulant) covariance being the
independent reference. Gradients: ∂/∂λ_k summed back through λ_k = Σ_j c_j cos(2πjk/n)
(a cosine transform) or onto r's index min(k, n − k).
"""

from __future__ import annotations

import numpy as np

from .. import projections
from ..constants import LOG_2PI
from ..core import Arrays, Family, Options, OracleError, ParamInfo, ValueInfo
from .multivariate_normal import gaussian_entropy


def _rfft_index(n: int) -> np.ndarray:
    """For each of the n eigenvalues, its index in the rfft half: min(k, n − k)."""
    k = np.arange(n)
    return np.minimum(k, n - k)


class CirculantNormal(Family):
    def _event_shape(self, params: Arrays, parametrization: str | None) -> tuple[int, ...]:
        key = parametrization or self.default_parametrization
        n = np.shape(params["loc"])[-1]
        m = np.shape(params[key])[-1]
        if m != (n if key == "covariance_row" else n // 2 + 1):
            raise OracleError(f"CirculantNormal: {key} has {m} entries for loc of size {n}")
        return (n,)

    def _eigenvalues(self, params: Arrays, parametrization: str, n: int) -> np.ndarray:
        if parametrization == "covariance_row":
            return np.fft.fft(params["covariance_row"], axis=-1).real
        return params["covariance_rfft"][..., _rfft_index(n)]

    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        n = value.shape[-1]
        lam = self._eigenvalues(params, parametrization, n)
        lam = np.where(lam > 0, lam, 1.0)  # outside the domain: NaN from the base class
        xhat = np.fft.fft(value - params["loc"], axis=-1)
        quad = (np.abs(xhat) ** 2 / lam).sum(-1) / n
        return -0.5 * (n * LOG_2PI + np.log(lam).sum(-1) + quad)

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        n = value.shape[-1]
        lam = self._eigenvalues(params, parametrization, n)
        lam = np.where(lam > 0, lam, 1.0)
        xhat = np.fft.fft(value - params["loc"], axis=-1)
        g_lam = -0.5 / lam + 0.5 * np.abs(xhat) ** 2 / (n * lam * lam)
        if parametrization == "covariance_row":
            g_mat = np.fft.fft(g_lam, axis=-1).real  # Σ_k g_k cos(2πjk/n)
        else:
            idx = _rfft_index(n)
            g_mat = np.zeros((*lam.shape[:-1], n // 2 + 1))
            for k in range(n):
                g_mat[..., idx[k]] += g_lam[..., k]
        solved = np.fft.ifft(xhat / lam, axis=-1).real  # Σ⁻¹ (x − loc)
        return {"loc": solved, parametrization: g_mat, "value": -solved}

    def _projections(self, params, parametrization, options):
        n = np.shape(params["loc"])[-1]
        row = np.fft.ifft(self._eigenvalues(params, parametrization, n), axis=-1).real
        idx = (np.arange(n)[None, :] - np.arange(n)[:, None]) % n
        return projections.gaussian(params["loc"], row[..., idx], projections.vector)

    def _sample(self, params, shape, rng, parametrization):
        n = np.shape(params["loc"])[-1]
        lam = self._eigenvalues(params, parametrization, n)
        # x − loc = Re(FFT(√λ ⊙ ε)/√n) + Im(…)/√n with ε complex standard normal has
        # covariance circulant(c): the real and imaginary parts are each such a draw.
        eps = rng.standard_normal((*shape, n)) + 1j * rng.standard_normal((*shape, n))
        z = np.fft.fft(np.sqrt(lam) * eps, axis=-1) / np.sqrt(n)
        return params["loc"] + z.real

    def _mean(self, params, parametrization, options):
        return params["loc"]

    def _variance(self, params, parametrization, options):
        # Every diagonal entry is c_0 (given, or the eigenvalues' mean), shaped like loc.
        n = np.shape(params["loc"])[-1]
        if parametrization == "covariance_row":
            c0 = params["covariance_row"][..., 0]
        else:
            c0 = self._eigenvalues(params, parametrization, n).mean(-1)
        return np.repeat(c0[..., None], n, axis=-1)

    def _entropy(self, params, parametrization, options):
        n = np.shape(params["loc"])[-1]
        lam = self._eigenvalues(params, parametrization, n)
        return gaussian_entropy(n, np.log(np.where(lam > 0, lam, 1.0)).sum(-1))


_LOC = ParamInfo(1, "real")
CIRCULANT_NORMAL = CirculantNormal(
    name="CirculantNormal",
    parametrizations={
        "covariance_row": {"loc": _LOC, "covariance_row": ParamInfo(1, "circulant_covariance")},
        "covariance_rfft": {"loc": _LOC, "covariance_rfft": ParamInfo(1, "positive")},
    },
    value=ValueInfo(1, "real_vector"),
)
