"""What a distribution says without a value, named once: the ``moments`` and ``entropy`` checks,
the adapters' :class:`~conformance.adapters.capabilities.Summarizes` and coverage read these."""

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
    def per_event(self) -> bool:
        """Whether it has the event's shape after the batch's (the entropy has the batch's)."""
        return self is not Summary.ENTROPY

    @property
    def called(self) -> bool:
        """Whether the frameworks call it (``entropy()``) rather than read it (``mean``)."""
        return self is Summary.ENTROPY
