"""OrderedLogistic(predictor η, cutpoints c₀ < … < c_{K−1}) (NumPyro; Stan's ordered_logistic)
on the categories 0, …, K:

    P(k) = σ(c_k − η) − σ(c_{k−1} − η),   c_{−1} = −∞, c_K = +∞,

so P(0) = σ(c₀ − η) and P(K) = 1 − σ(c_{K−1} − η). Taken in log space: with a = c_{k−1} − η,
b = c_k − η,

    log(σ(b) − σ(a)) = log expm1(b − a) − softplus(−a) − softplus(b),

b − a = c_k − c_{k−1} formed from the cutpoints themselves, and the end categories as
−softplus(η − c₀) and −softplus(c_{K−1} − η): nothing cancels however far η lies from the
cutpoints (a difference of probabilities is 1 − 1 = 0 there). The cutpoints are a vector
parameter (event rank 1, strictly increasing); the value is a category index.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..core import Arrays, Family, Options, ParamInfo, Support, ValueInfo
from .categorical import index_of


def _softplus(t: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, t)


def _log_expm1(d: np.ndarray) -> np.ndarray:
    """log(e^d − 1) for d > 0, without overflow."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        big = d > 1.0
        return np.where(big, d + np.log1p(-np.exp(-np.where(big, d, 1.0))), np.log(np.expm1(d)))


def _log_sigmoid_prime(t: np.ndarray) -> np.ndarray:
    """log σ'(t) = log σ(t) + log σ(−t)."""
    return -_softplus(t) - _softplus(-t)


def _neighbours(
    params: Arrays, value: np.ndarray
) -> tuple[np.ndarray, int, np.ndarray, np.ndarray, np.ndarray]:
    """The category k, K, and the cutpoints below and above it (safe stand-ins at the ends)."""
    eta, cuts = params["predictor"], params["cutpoints"]
    n_cuts = cuts.shape[-1]
    k = index_of(value, n_cuts + 1)
    upper = np.take_along_axis(cuts, np.minimum(k, n_cuts - 1)[..., None], axis=-1)[..., 0]
    lower = np.take_along_axis(cuts, np.maximum(k - 1, 0)[..., None], axis=-1)[..., 0]
    return k, n_cuts, eta, lower, upper


class OrderedLogistic(Family):
    def _event_shape(self, params: Arrays, parametrization: str | None) -> tuple[int, ...]:
        return ()

    def support(self, params: Arrays, parametrization: str | None = None) -> Support:
        """Up to the last category, K (the number of cutpoints sets it)."""
        return Support(self.value.support, upper=float(np.shape(params["cutpoints"])[-1]))

    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        k, n_cuts, eta, lower, upper = _neighbours(params, value)
        with np.errstate(all="ignore"):
            first = -_softplus(eta - upper)
            last = -_softplus(lower - eta)
            middle = _log_expm1(upper - lower) - _softplus(eta - lower) - _softplus(upper - eta)
        return np.where(k == 0, first, np.where(k == n_cuts, last, middle))

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        k, n_cuts, eta, lower, upper = _neighbours(params, value)
        log_p = self._log_prob(params, value, parametrization, options)
        with np.errstate(all="ignore"):
            # ∂log P/∂c_k = σ'(b)/P, ∂log P/∂c_{k−1} = −σ'(a)/P, ∂log P/∂η = −(both).
            d_upper = np.where(
                k == 0,
                special.expit(eta - upper),  # σ'(b)/σ(b) = σ(−b)
                np.exp(_log_sigmoid_prime(upper - eta) - log_p),
            )
            d_lower = np.where(
                k == n_cuts,
                -special.expit(lower - eta),  # −σ'(a)/σ(−a) = −σ(a)
                -np.exp(_log_sigmoid_prime(lower - eta) - log_p),
            )
            d_upper = np.where(k == n_cuts, 0.0, d_upper)
            d_lower = np.where(k == 0, 0.0, d_lower)
        positions = np.arange(n_cuts)
        d_cuts = np.where(positions == k[..., None], d_upper[..., None], 0.0) + np.where(
            positions == (k - 1)[..., None], d_lower[..., None], 0.0
        )
        # ∂/∂η = −(σ'(b) − σ'(a))/(σ(b) − σ(a)) = σ(a) + σ(b) − 1 = σ(a) − σ(−b): the quotient
        # of differences would cancel for close cutpoints (σ(−∞) = 0 at the end categories).
        with np.errstate(all="ignore"):
            sig_a = np.where(k == 0, 0.0, special.expit(lower - eta))
            sig_minus_b = np.where(k == n_cuts, 0.0, special.expit(eta - upper))
        return {"predictor": sig_a - sig_minus_b, "cutpoints": d_cuts}

    def _sample(self, params, shape, rng, parametrization):
        # Latent logistic: category = number of cutpoints below η + Logistic noise.
        cuts = params["cutpoints"]
        latent = params["predictor"] + rng.logistic(size=shape)
        return np.sum(cuts < latent[..., None], axis=-1).astype(np.float64)

    def _mean(self, params, parametrization, options):
        # NumPyro's (a CategoricalProbs) is NaN: the categories are taken as labels.
        return np.full(np.shape(params["predictor"]), np.nan)

    def _variance(self, params, parametrization, options):
        return np.full(np.shape(params["predictor"]), np.nan)


ORDERED_LOGISTIC = OrderedLogistic(
    name="OrderedLogistic",
    parametrizations={
        "predictor_cutpoints": {
            "predictor": ParamInfo(0, "real"),
            "cutpoints": ParamInfo(1, "ordered_vector"),
        }
    },
    value=ValueInfo(0, "nonnegative_integer", discrete=True),
)
