"""entropy() of the distribution at a case's parameters against the oracle: value, shape
(the batch shape) and dtype."""

from __future__ import annotations

from conformance.check_names import CheckName
from conformance.checks.summaries import SummariesCheck
from conformance.summaries import Summary


class EntropyCheck(SummariesCheck):
    name = CheckName.ENTROPY
    description = "entropy() vs the float64 oracle"
    methods = (Summary.ENTROPY,)
