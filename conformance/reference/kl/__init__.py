"""KL(p‖q) in closed form, float64, for the (p, q) family pairs the frameworks register.

:func:`kl_divergence` is the entry point; :func:`kl_pairs` lists the pairs and
:func:`kl_pair` says which parametrisations a pair takes. The closed forms live by kind:
``continuous`` (families on the line, Dirichlet), ``discrete``, ``gaussian`` (multivariate
Gaussians, Wishart) and ``wrappers`` (NumPyro's Delta, ExpandedDistribution and
MaskedDistribution); ``registry`` keys them by the oracle's family names and does the checks,
broadcasting and masking once. Which framework rule each pair answers for is the registry's
data (``conformance/registry/kl_pairs.yaml``).
"""

from __future__ import annotations

from . import continuous, discrete, gaussian, wrappers
from .registry import KLPair, kl_divergence, kl_pair, kl_pairs

#: The modules whose import registers the closed forms.
MODULES = (continuous, discrete, gaussian, wrappers)

__all__ = ["MODULES", "KLPair", "kl_divergence", "kl_pair", "kl_pairs"]
