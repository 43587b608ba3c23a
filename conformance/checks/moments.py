"""mean, variance, stddev and mode of the distribution at a case's parameters against the
oracle: values, shape (batch + event) and dtype."""

from __future__ import annotations

from conformance.check_names import CheckName
from conformance.checks.summaries import SummariesCheck
from conformance.summaries import Summary


class MomentsCheck(SummariesCheck):
    name = CheckName.MOMENTS
    description = "mean, variance, stddev and mode vs the float64 oracle"
    methods = (Summary.MEAN, Summary.VARIANCE, Summary.STDDEV, Summary.MODE)
