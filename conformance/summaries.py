"""The distribution methods a class may define or leave to its framework's base, named once: the
``moments``, ``entropy``, ``cdf`` and ``icdf`` checks, the adapters and coverage read these."""

from __future__ import annotations

from enum import StrEnum


class Summary(StrEnum):
    """A summary as the frameworks name it: a property, or ``entropy()``, a method."""

    MEAN = "mean"
    VARIANCE = "variance"
    STDDEV = "stddev"
    MODE = "mode"
    ENTROPY = "entropy"

    @property
    def called(self) -> bool:
        """Whether the frameworks call it (``entropy()``) rather than read it (``mean``)."""
        return self is Summary.ENTROPY


#: Every method a check reads that a class may leave to its base: the summaries, ``cdf`` and
#: ``icdf``.
CDF = "cdf"
ICDF = "icdf"
METHODS: tuple[str, ...] = (*(s.value for s in Summary), CDF, ICDF)
