"""LeftCensoredDistribution(base, censored) — NumPyro only: the likelihood of a value x that is
an exact observation (censored 0: log f(x)) or an upper bound (censored 1: the true value lies
at or below x, log F(x)), over a Normal(loc, scale) or LogNormal(loc, scale) base. Its log F(x)
is log Φ(z) (``log_ndtr``), exact in the far left tail. See :mod:`.censoring`.
"""

from __future__ import annotations

from .censoring import REAL, OneSidedCensored, one_sided_parametrizations


class LeftCensoredDistribution(OneSidedCensored):
    right = False


LEFT_CENSORED_DISTRIBUTION = LeftCensoredDistribution(
    name="LeftCensoredDistribution",
    parametrizations=one_sided_parametrizations(),
    value=REAL,
)
