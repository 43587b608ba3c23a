"""NegativeBinomial(total_count, probs | logits), torch's and NumPyro's convention:

    P(k) = Γ(r + k) / (Γ(r) k!) · (1 - p)^r · p^k,  k = 0, 1, …

the number of successes (each of probability ``probs``) before ``total_count`` failures. scipy's
``nbinom(n, p)`` puts p on the other side: scipy's p is 1 - probs. ``total_count`` is real, and
0 is its limit: a point mass at 0 (torch handles it). p = 1 has no distribution (all mass
escapes to infinity): probs lies in [0, 1).

Declared convention ``total_count_lower``: torch takes r = 0 (``closed``, the default); NumPyro
builds a Gamma of concentration r and requires r > 0 (``open``), so there r = 0 is a parameter
outside the domain, which a validating NumPyro rejects.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..core import Arrays, Family, Options, ParamInfo, ValueInfo
from .binomial import digamma_diff, log_rising, softplus


def log_nb_coefficient(r: np.ndarray, k: np.ndarray) -> np.ndarray:
    """log Γ(r+k) / (Γ(r) k!), 0 at k = 0 (any r ≥ 0).

    As a rising factorial over the shorter stretch: Γ(r+k)/Γ(r) / k! when k < r, else
    Γ(k+1+(r-1))/Γ(k+1) / Γ(r) — so r = 3, k = 2500 costs O(log k), not lgamma(2503).
    """
    r, k = np.broadcast_arrays(np.asarray(r, np.float64), np.asarray(k, np.float64))
    with np.errstate(divide="ignore", invalid="ignore"):
        from_r = log_rising(r, k) - special.gammaln(k + 1.0)
        from_k = log_rising(k + 1.0, r - 1.0) - special.gammaln(r)
    return np.where(k == 0, 0.0, np.where(k < r, from_r, from_k))


class NegativeBinomial(Family):
    def _params_valid(self, params: Arrays, parametrization: str, options: Options) -> np.ndarray:
        ok = super()._params_valid(params, parametrization, options)
        if options.get("total_count_lower", "closed") == "open":
            return ok & (params["total_count"] > 0)
        return ok

    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        r, k = params["total_count"], value
        if parametrization == "probs":
            p = params["probs"]
            terms = special.xlog1py(r, -p) + special.xlogy(k, p)
        else:
            logits = params["logits"]
            terms = -r * softplus(logits) - k * softplus(-logits)
        return log_nb_coefficient(r, k) + terms

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        r, k = params["total_count"], value
        with np.errstate(divide="ignore", invalid="ignore"):
            d_coef = digamma_diff(r, k)
            if parametrization == "probs":
                p = params["probs"]
                return {
                    "total_count": d_coef + np.log1p(-p),
                    "probs": np.where(k == 0, 0.0, k / p) - r / (1.0 - p),
                }
        logits = params["logits"]
        return {
            "total_count": d_coef - softplus(logits),
            "logits": k * special.expit(-logits) - r * special.expit(logits),
        }

    def _sample(self, params, shape, rng, parametrization):
        r = params["total_count"]
        if parametrization == "probs":
            odds = params["probs"] / (1.0 - params["probs"])
        else:
            odds = np.exp(params["logits"])
        # Gamma–Poisson mixture: works for any real r ≥ 0 (r = 0 gives 0).
        lam = rng.gamma(np.where(r > 0, r, 1.0), odds) * (r > 0)
        return np.asarray(rng.poisson(lam), np.float64)


_R = ParamInfo(0, "nonnegative")
NEGATIVE_BINOMIAL = NegativeBinomial(
    name="NegativeBinomial",
    parametrizations={
        "probs": {"total_count": _R, "probs": ParamInfo(0, "half_open:0,1")},
        "logits": {"total_count": _R, "logits": ParamInfo(0, "real")},
    },
    value=ValueInfo(0, "nonnegative_integer", discrete=True),
    options={"total_count_lower": ("closed", "open")},
)
