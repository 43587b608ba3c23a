"""Installed versions of distributions, read once per process (every record carries one, and
reading package metadata is slow). The one place the suite asks what is installed."""

from __future__ import annotations

import importlib.metadata
from functools import cache

NOT_INSTALLED = "not installed"


@cache
def installed_version(distribution: str) -> str | None:
    """The installed version of ``distribution``, or None when it is not installed."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def version_text(distribution: str) -> str:
    """The version as records and headers show it: ``not installed`` when absent."""
    return installed_version(distribution) or NOT_INSTALLED
