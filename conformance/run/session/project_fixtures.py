"""A project's autouse fixtures, set up for case items as for its own tests.

Case items are not test functions, so pytest gives them no fixtures by itself. A project that
runs the suite beside its own tests expects its ``conftest.py`` to hold for both: a
session-scoped fixture that patches the framework under test (a fix tried in place), selects a
device or seeds a generator must run before the case items it concerns, and tear down after.
Only autouse fixtures (and ``usefixtures`` marks) apply: a case item takes no arguments.

pytest has no public API for fixtures on non-function items; this uses the one its own
``Function`` items use (``FixtureManager.getfixtureinfo`` and ``TopRequest``). A pytest without
them leaves case items without fixtures, as before, and says so once.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest

_warned = False


def fill(item: pytest.Item) -> None:
    """Set up the fixtures in ``item``'s scope (none: nothing to do, nearly free)."""
    global _warned
    manager: Any = getattr(item.session, "_fixturemanager", None)
    try:
        from _pytest.fixtures import TopRequest

        info = manager.getfixtureinfo(node=item, func=None, cls=None)
    except (ImportError, AttributeError, TypeError) as exc:
        if not _warned:
            _warned = True
            warnings.warn(
                f"conformance: this pytest cannot give case items fixtures ({exc})",
                stacklevel=1,
            )
        return
    if not info.names_closure:
        return
    # What pytest's fixture machinery reads from a Function item (TopRequest takes one); a
    # plain Item declares none of it, hence the ignores.
    item._fixtureinfo = info  # type: ignore[attr-defined]
    item.fixturenames = info.names_closure  # type: ignore[attr-defined]
    item.funcargs = {}  # type: ignore[attr-defined]
    request = TopRequest(item, _ispytest=True)  # type: ignore[arg-type]
    item._request = request  # type: ignore[attr-defined]
    request._fillfixtures()
