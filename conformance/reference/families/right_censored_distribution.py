"""RightCensoredDistribution(base, censored) — NumPyro only: the likelihood of a value x that is
an exact observation (censored 0: log f(x)) or a lower bound (censored 1: the true value lies at
or above x, log S(x) = log(1 − F(x))), over a Normal(loc, scale) or LogNormal(loc, scale) base.
log S(x) is log Φ(−z) (``log_ndtr``), exact far in the right tail where 1 − F(x) is lost in
float arithmetic. See :mod:`.censoring`.
"""

from __future__ import annotations

from .censoring import REAL, OneSidedCensored, one_sided_parametrizations


class RightCensoredDistribution(OneSidedCensored):
    right = True


RIGHT_CENSORED_DISTRIBUTION = RightCensoredDistribution(
    name="RightCensoredDistribution",
    parametrizations=one_sided_parametrizations(),
    value=REAL,
)
