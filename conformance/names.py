"""How a name that matches nothing is reported: what it is not, the closest known name, and
the known names, so a typo in an option or a known-failure file is fixed in one read."""

from __future__ import annotations

import difflib
import fnmatch
from collections.abc import Iterable

MAX_LISTED = 25


def unknown_name(what: str, name: str, known: Iterable[str], verb: str = "matches no") -> str:
    """``'Norml' matches no family (did you mean 'Normal'?); known: Bernoulli, …``."""
    known = sorted(known)
    close = difflib.get_close_matches(name, known, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    listed = ", ".join(known[:MAX_LISTED]) + (", …" if len(known) > MAX_LISTED else "")
    return f"{name!r} {verb} {what}{hint}; known: {listed}"


def unmatched_pattern(what: str, pattern: str, known: Iterable[str]) -> str | None:
    """What is wrong with a glob (``--family``, a known-failure ``family:``) that matches none
    of the ``known`` names, or None when it matches one."""
    known = list(known)
    if any(fnmatch.fnmatchcase(name, pattern) for name in known):
        return None
    return unknown_name(what, pattern, known)
