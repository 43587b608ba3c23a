"""pytest plugin: apply the mutant named by ``CONFORMANCE_MUTANT`` in this process.

Loaded with ``-p conformance.mutants.plugin`` (``conformance mutants`` and ``conformance run``
add it when the variable is set). pytest-xdist workers load the same ``-p`` plugins and inherit
the environment, so every process that runs items is patched — the patch is applied in
``pytest_configure``, before any item runs, and never touches a file.
"""

from __future__ import annotations

import os

import pytest

from conformance.mutants import ENV, Patcher, activate, get

_PATCH = pytest.StashKey[Patcher]()


def pytest_configure(config: pytest.Config) -> None:
    name = os.environ.get(ENV)
    if not name:
        return
    try:
        get(name)
    except KeyError as exc:
        raise pytest.UsageError(f"{ENV}={name}: {exc}") from None
    config.stash[_PATCH] = activate(name)


def pytest_unconfigure(config: pytest.Config) -> None:
    patch = config.stash.get(_PATCH, None)
    if patch is not None:
        patch.undo()


def pytest_report_header(config: pytest.Config) -> list[str]:
    name = os.environ.get(ENV)
    if not name:
        return []
    mutant = get(name)
    return [f"conformance MUTANT {mutant.name} applied: {mutant.title}"]
