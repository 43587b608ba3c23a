"""What the check's last evaluation leaves for the item's reproducer script.

A run writes an item's script right after evaluating it, in the same process: the script
embeds the draws and numbers kept here instead of drawing them again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from conformance.checks.subject import Subject

#: The draws a script shows of an item's: per parameter its worst ones (draw by draw), or its
#: first ones (in expectation).
SHOWN_DRAWS = 16


@dataclass
class Evaluation:
    """What the check's last evaluation left for its reproducer (the item's script is written
    right after it, in the same process): the draws and comparisons a script embeds, and how
    the item failed."""

    subject: Subject
    #: The draws and each comparison's numbers (None: a vector draw, which gets no script).
    kept: dict[str, Any] | None
    raised: bool = False
    by_draw_failed: bool = False
    in_expectation_failed: bool = False
    #: What a univariate draw's script judged in expectation embeds (None: not judged so, or
    #: a vector draw).
    expectation: dict[str, Any] | None = None
    #: The pathwise call the item made last (the names, n, and a vector draw's copies and
    #: weights): where it raised, the script makes the same call.
    call: dict[str, Any] | None = None
