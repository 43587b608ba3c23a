"""LogisticNormal(loc, scale) (torch): Normal(loc, scale) (K coordinates, event rank 1) pushed
through torch's StickBreakingTransform onto the simplex of K + 1 coordinates, the density torch's
own construction defines. With z_i = σ(x_i − log(K − i)) (i = 0 … K−1, an offset that maps
x = 0 to the simplex's centre),

    y_i = z_i·Π_{j<i}(1 − z_j),   y_K = Π_{j<K}(1 − z_j),

so x_i = log y_i − log s_i + log(K − i) with s_i = 1 − Σ_{j≤i} y_j, and, the Jacobian of
y_{<K} ↦ x being triangular with diagonal y_i·(1 − z_i) and Π(1 − z_i) = s_{K−1},

    log p(y) = Σ_{i<K} log N(x_i; loc_i, scale_i) − Σ_{i<K} log y_i − log s_{K−1}.

That is torch's log_prob; it reads only y_{<K} (the last coordinate is 1 − their sum), so
∂/∂y_K is 0. It is not the additive log-ratio logistic-normal (Aitchison's: log(y_{<K}/y_K) ~
N), nor what torch's docstring states (log(y/(1 − cumsum y)) ~ N, without the offset log(K − i));
for K = 1 all three agree. At a face of the simplex (some y_i = 0) the density's limit is 0:
log N(x_i) falls as −(log y_i)²/(2σ²), faster than −log y_i rises.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from .. import projections
from ..constants import HALF_LOG_2PI
from ..core import Arrays, Family, Options, OracleError, ParamInfo, Projection, ValueInfo


def _fold(grad: np.ndarray, like: np.ndarray) -> np.ndarray:
    """Sum the event axis back to size 1 where the parameter had size 1 there."""
    return grad.sum(-1, keepdims=True) if like.shape[-1] == 1 else grad


def _pre_image(value: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """x (the Normal's coordinates), s_i = 1 − Σ_{j≤i} y_j, and y_{<K}."""
    head = value[..., :-1]
    k = head.shape[-1]
    rest = 1.0 - np.cumsum(head, axis=-1)
    offset = np.log(k - np.arange(k, dtype=np.float64))
    with np.errstate(divide="ignore", invalid="ignore"):
        x = np.log(head) - np.log(rest) + offset
    return x, rest, head


class LogisticNormal(Family):
    def _event_shape(self, params: Arrays, parametrization: str | None) -> tuple[int, ...]:
        loc_n, scale_n = np.shape(params["loc"])[-1], np.shape(params["scale"])[-1]
        try:
            (k,) = np.broadcast_shapes((loc_n,), (scale_n,))
        except ValueError:
            raise OracleError(
                f"LogisticNormal: loc ({loc_n}) and scale ({scale_n}) sizes do not broadcast"
            ) from None
        return (k + 1,)

    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        loc, scale = params["loc"], params["scale"]
        x, rest, head = _pre_image(value)
        with np.errstate(all="ignore"):
            z = (x - loc) / scale
            normal = (-0.5 * z * z - np.log(scale) - HALF_LOG_2PI).sum(-1)
            out = normal - np.log(head).sum(-1) - np.log(rest[..., -1])
        # On a face (a coordinate, or the remainder, 0) the limit is 0: −inf, not inf − inf.
        face = np.any(head <= 0.0, axis=-1) | (rest[..., -1] <= 0.0)
        return np.where(face, -np.inf, out)

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        loc, scale = params["loc"], params["scale"]
        x, rest, head = _pre_image(value)
        with np.errstate(all="ignore"):
            z = (x - loc) / scale
            u = -z / scale  # ∂ log N/∂x_i
            # ∂x_i/∂y_m = [m = i]/y_i + [m ≤ i]/s_i, so ∂/∂y_m = u_m/y_m + Σ_{i≥m} u_i/s_i,
            # and the Jacobian's −Σ log y_i − log s_{K−1} adds −1/y_m + 1/s_{K−1}.
            tail = np.flip(np.cumsum(np.flip(u / rest, -1), axis=-1), -1)
            d_head = (u - 1.0) / head + tail + 1.0 / rest[..., -1:]
        d_value = np.concatenate([d_head, np.zeros_like(d_head[..., :1])], axis=-1)
        return {
            "loc": _fold(z / scale, loc),
            "scale": _fold((z * z - 1.0) / scale, scale),
            "value": d_value,
        }

    def _projections(self, params, parametrization, options):
        # Stick-breaking: z_i = y_i/(1 − Σ_{j<i} y_j) and logit(z_i) + log(K − i) ~ N(loc_i, scale_i).
        loc, scale = np.broadcast_arrays(params["loc"], params["scale"])
        k = loc.shape[-1]
        found = []
        for i in projections.coordinates(k):

            def stick(y, i=i):
                rest = 1.0 - y[..., :i].sum(-1)
                z = y[..., i] / rest
                return np.log(z) - np.log1p(-z) + np.log(k - i)

            def cdf(t, i=i):
                return special.ndtr((t - loc[..., i]) / scale[..., i])

            found.append(Projection(f"stick {i}", stick, cdf))
        return found

    def _pathwise(self, params, draws, weights, parametrization, options):
        """y = stick(loc + scale·ε), torch's map (a normal draw through its StickBreakingTransform),
        the noise read back through :func:`_pre_image`. With z_i = y_i/s_{i−1} (s_{−1} = 1) and
        dz_i/dx_i = z_i·(1 − z_i), ∂y_i/∂z_i = s_{i−1} and ∂y_c/∂z_i = −y_c/(1 − z_i) for every
        later coordinate c (the last one's y_K = s_{K−1} included), so

            ∂(Σ_c w_c·y_c)/∂x_i = (y_i/s_{i−1})·(w_i·s_i − Σ_{c>i} w_c·y_c),

        ∂/∂loc_i is that and ∂/∂scale_i that times ε_i."""
        loc, scale = params["loc"], params["scale"]
        x, rest, head = _pre_image(draws)
        w = np.broadcast_to(weights, draws.shape)
        with np.errstate(all="ignore"):
            noise = (x - loc) / scale
            before = np.concatenate([np.ones_like(rest[..., :1]), rest[..., :-1]], axis=-1)
            # Σ_{c>i} w_c·y_c: the later head coordinates, then the last one, s_{K−1}.
            later = np.flip(np.cumsum(np.flip(w[..., :-1] * head, -1), axis=-1), -1)
            later = later - w[..., :-1] * head + w[..., -1:] * rest[..., -1:]
            by_x = head / before * (w[..., :-1] * rest - later)
        return {"loc": _fold(by_x, loc), "scale": _fold(by_x * noise, scale)}

    def _sample(self, params, shape, rng, parametrization):
        loc, scale = np.broadcast_arrays(params["loc"], params["scale"])
        x = loc + scale * rng.standard_normal(loc.shape)
        k = x.shape[-1]
        z = 0.5 * (1.0 + np.tanh(0.5 * (x - np.log(k - np.arange(k, dtype=np.float64)))))
        stick = np.cumprod(1.0 - z, axis=-1)
        before = np.concatenate([np.ones_like(z[..., :1]), stick[..., :-1]], axis=-1)
        return np.concatenate([z * before, stick[..., -1:]], axis=-1)


LOGISTIC_NORMAL = LogisticNormal(
    name="LogisticNormal",
    parametrizations={
        "loc_scale": {"loc": ParamInfo(1, "real"), "scale": ParamInfo(1, "positive")}
    },
    value=ValueInfo(1, "simplex"),
)
