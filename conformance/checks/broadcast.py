"""One item per broadcast variant: its shapes, log_prob values and gradient together (see
:mod:`conformance.checks.composite` for why one item)."""

from __future__ import annotations

from conformance.check_names import CheckName
from conformance.checks.composite import CompositeCheck


class BroadcastCheck(CompositeCheck):
    name = CheckName.BROADCAST
    description = "a broadcast variant's shapes, log_prob and gradient vs the oracle"
