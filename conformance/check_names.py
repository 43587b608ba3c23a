"""The names of the checks, stated once: an item's ``check``, ``--check``, a case's ``checks:``
and a known-failure entry's ``check:`` all name one of these.

:class:`CheckName` is a ``str`` enum, as :class:`~conformance.operations.Operation` is: ids,
records and YAML keep the plain strings, and a check nobody declared cannot be registered
(``CheckName("finit")`` raises). The checks themselves are in :mod:`conformance.checks`.
"""

from __future__ import annotations

from enum import StrEnum


class CheckName(StrEnum):
    """What an item checks (the last part of its id: ``[torch-float32-log_prob]``)."""

    SHAPES = "shapes"
    LOG_PROB = "log_prob"
    GRAD = "grad"
    GRAD_FUNCTIONAL = "grad_functional"
    VMAP = "vmap"
    JIT = "jit"
    EAGER = "eager"
    PLATE = "plate"
    SCAN = "scan"
    PLATE_IN_SCAN = "plate_in_scan"
    BROADCAST = "broadcast"
    PROPERTY = "property"
    SAMPLE_SHAPES = "sample_shapes"
    SAMPLE_FIT = "sample_fit"
    RSAMPLE_GRAD = "rsample_grad"
    CONTEXT = "context"
    MOMENTS = "moments"
    ENTROPY = "entropy"
    CDF = "cdf"
    ICDF = "icdf"
    KL = "kl"
    # Items that run no check: a case that could not be loaded, a family a framework lacks
    # (known-failure entries and filters may name them too).
    LOAD = "load"
    UNSUPPORTED = "unsupported"


#: The ``check`` of items that run no check.
NON_CHECK_ITEMS = frozenset({CheckName.LOAD, CheckName.UNSUPPORTED})
