"""KL divergences of NumPyro's wrappers, as NumPyro defines them: a Delta against any family on
the line, an ExpandedDistribution (of a Normal) against a Normal or another, a
MaskedDistribution (of a Gamma) against another.

These follow the oracle's reading of each wrapper's log_prob, so each is E_p[log p − log q]
with the families' own log_prob:

- Delta(v, log_density): log p is log_density at its atom v, so KL = log_density − log q(v)
  (+inf where v is outside q's support). Against a mass function and with log_density = 0 it is
  the KL of the point mass; against a density it is the formal value NumPyro returns (a point
  mass has no density, so the measure-theoretic KL would be +inf).
- ExpandedDistribution: its base's KL, broadcast to the expanded batch.
- MaskedDistribution: log_prob is 0 where masked out; NumPyro scores the pair where both masks
  are on and gives 0 elsewhere (``p.mask & q.mask``), which the oracle follows.
"""

from __future__ import annotations

import numpy as np

from ..families import FAMILIES
from .continuous import gamma_gamma, normal_normal
from .registry import Side, closed_form


def _delta_pairs() -> list[tuple[str, str]]:
    return [("Delta", name) for name, f in FAMILIES.items() if f.value.event_rank == 0]


@closed_form(*_delta_pairs())
def _delta_any(p: Side, q: Side) -> np.ndarray:
    """log_density − log q(v)."""
    log_q = FAMILIES[q.family].log_prob(q.params, p["v"], q.parametrization, q.options)
    return p["log_density"] - log_q


closed_form(
    ("ExpandedDistribution", "ExpandedDistribution"),
    ("ExpandedDistribution", "Normal"),
    ("Normal", "ExpandedDistribution"),
)(normal_normal)


@closed_form(("MaskedDistribution", "MaskedDistribution"))
def _masked_masked(p: Side, q: Side) -> np.ndarray:
    scored = (p["mask"] == 1.0) & (q["mask"] == 1.0)
    with np.errstate(invalid="ignore"):
        return np.where(scored, gamma_gamma(p, q), 0.0)
