"""EulerMaruyama(t, sde_fn, init_dist) (NumPyro's): the Euler–Maruyama discretisation of an SDE
dx = f(x, t)·dt + g(x, t)·dW on the time grid t_0 < … < t_(T−1), with x(t_0) ~ init_dist:

    log p(x) = log p_0(x_0) + Σ_(k≥1) log Normal(x_k | x_(k−1) + Δ_k·f(x_(k−1), t_(k−1)), √Δ_k·g(…))

(Δ_k = t_k − t_(k−1)). Parametrisation ``ornstein_uhlenbeck``: f = θ·(μ − x), g = σ, a scalar
state, init_dist = Normal(init_loc, init_scale). θ, μ and σ are static Python numbers: NumPyro
keeps sde_fn out of its batch semantics (a pytree aux field, vmapped over the time steps only),
so they are part of the function, not batched parameters. The event is the path (T,).
"""

from __future__ import annotations

import numpy as np

from .. import projections
from ..constants import HALF_LOG_2PI
from ..core import Arrays, Family, Options, ParamInfo, ValueInfo


def _parts(params: Arrays, value: np.ndarray):
    """Δ_k, the drift's mean step m_k = θ(μ − x_(k−1)), residuals r_k and variances σ²Δ_k."""
    theta, mu, sigma = (float(np.asarray(params[k])) for k in ("theta", "mu", "sigma"))
    dt = np.diff(params["t"], axis=-1)
    prev = value[..., :-1]
    drift = theta * (mu - prev)
    r = value[..., 1:] - prev - dt * drift
    return theta, sigma, dt, drift, r, sigma * sigma * dt


def path_gaussian(params: Arrays) -> tuple[np.ndarray, np.ndarray]:
    """The discretised Ornstein–Uhlenbeck path's mean and covariance: it is linear in its
    noises, x_0 = m_0 + s_0·ε_0 and x_k = a_k·x_(k−1) + θμΔ_k + s_k·ε_k with a_k = 1 − θΔ_k,
    s_k = σ√Δ_k, so x = m + M·ε with M[k, j] = s_j·Π_(j<i≤k) a_i and covariance M Mᵀ."""
    theta, mu, sigma = (float(np.asarray(params[k])) for k in ("theta", "mu", "sigma"))
    t = np.asarray(params["t"], dtype=np.float64)
    loc, scale = params["init_loc"], params["init_scale"]
    batch = np.broadcast_shapes(t.shape[:-1], np.shape(loc), np.shape(scale))
    steps = t.shape[-1]
    t = np.broadcast_to(t, (*batch, steps))
    dt = np.diff(t, axis=-1)
    a = 1.0 - theta * dt
    noise = np.concatenate([np.broadcast_to(scale, batch)[..., None], sigma * np.sqrt(dt)], axis=-1)
    mean = [np.broadcast_to(loc, batch)]
    factor = np.zeros((*batch, steps, steps))
    factor[..., 0, 0] = noise[..., 0]
    for k in range(1, steps):
        mean.append(a[..., k - 1] * mean[-1] + theta * mu * dt[..., k - 1])
        factor[..., k, :k] = a[..., k - 1, None] * factor[..., k - 1, :k]
        factor[..., k, k] = noise[..., k]
    return np.stack(mean, axis=-1), factor @ np.swapaxes(factor, -1, -2)


class EulerMaruyama(Family):
    def _event_shape(self, params: Arrays, parametrization: str | None) -> tuple[int, ...]:
        return (np.shape(params["t"])[-1],)

    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        _, _, _, _, r, var = _parts(params, value)
        loc, scale = params["init_loc"], params["init_scale"]
        z0 = (value[..., 0] - loc) / scale
        init = -0.5 * z0 * z0 - np.log(scale) - HALF_LOG_2PI
        steps = -0.5 * np.log(var) - HALF_LOG_2PI - 0.5 * r * r / var
        return init + steps.sum(-1)

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        theta, sigma, dt, drift, r, var = _parts(params, value)
        loc, scale = params["init_loc"], params["init_scale"]
        z0 = (value[..., 0] - loc) / scale
        q = r / var
        # ∂/∂Δ_k: −1/(2Δ_k) + r_k²/(2σ²Δ_k²) + q_k·m_k; t_k enters Δ_k (+) and Δ_(k+1) (−).
        d_dt = -0.5 / dt + 0.5 * r * r / (sigma * sigma * dt * dt) + q * drift
        d_t = np.zeros(params["t"].shape)
        d_t[..., 1:] += d_dt
        d_t[..., :-1] -= d_dt
        d_x = np.zeros(value.shape)
        d_x[..., 1:] -= q
        d_x[..., :-1] += q * (1.0 - dt * theta)  # ∂r_k/∂x_(k−1) = −(1 − Δ_k·θ)
        d_x[..., 0] -= z0 / scale
        return {
            "t": d_t,
            "init_loc": z0 / scale,
            "init_scale": (z0 * z0 - 1.0) / scale,
            "value": d_x,
        }

    def _projections(self, params, parametrization, options):
        """A Gaussian path (:func:`path_gaussian`): its linear projections are Normal."""
        mean, cov = path_gaussian(params)
        return projections.gaussian(mean, cov, projections.vector)

    def _sample(self, params, shape, rng, parametrization):
        theta, mu, sigma = (float(np.asarray(params[k])) for k in ("theta", "mu", "sigma"))
        t = np.broadcast_to(params["t"], (*shape, np.shape(params["t"])[-1]))
        x = params["init_loc"] + params["init_scale"] * rng.standard_normal(shape)
        path = [x]
        for k in range(1, t.shape[-1]):
            dt = t[..., k] - t[..., k - 1]
            x = x + dt * theta * (mu - x) + sigma * np.sqrt(dt) * rng.standard_normal(shape)
            path.append(x)
        return np.stack(path, axis=-1)


EULER_MARUYAMA = EulerMaruyama(
    name="EulerMaruyama",
    parametrizations={
        "ornstein_uhlenbeck": {
            "t": ParamInfo(1, "ordered_vector"),
            "theta": ParamInfo(0, "real", static=True),
            "mu": ParamInfo(0, "real", static=True),
            "sigma": ParamInfo(0, "positive", static=True),
            "init_loc": ParamInfo(0, "real"),
            "init_scale": ParamInfo(0, "positive"),
        }
    },
    value=ValueInfo(1, "real_vector"),
)
