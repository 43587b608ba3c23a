"""A pytest plugin for the determinism test (``-p reverse_items``): items run in reverse order."""

from __future__ import annotations

import pytest


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.reverse()
