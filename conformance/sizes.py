"""Sizes as users write them (``8G``, ``512M``, ``1.5GiB``, ``off``): memory caps, memory
budgets, cache limits."""

from __future__ import annotations

import re


def parse_size(text: str) -> int | None:
    """``"8G"``, ``"512M"``, ``"1.5GiB"``, ``"1000000"`` → bytes; ``"0"``/``"off"`` → None."""
    text = text.strip().lower()
    if text in ("", "0", "off", "none", "unlimited"):
        return None
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?", text)
    if not match:
        raise ValueError(f"not a size: {text!r} (e.g. 8G, 512M, off)")
    scale = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}[match.group(2)]
    return int(float(match.group(1)) * scale)
