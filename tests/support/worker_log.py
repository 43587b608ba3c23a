"""A pytest plugin for the scheduling test (``-p worker_log``): each xdist worker appends the
node ids it runs, in order, to ``$CONFORMANCE_TEST_WORKER_LOG.<worker id>``."""

from __future__ import annotations

import os


def pytest_runtest_logstart(nodeid: str) -> None:
    base = os.environ.get("CONFORMANCE_TEST_WORKER_LOG")
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if base and worker:
        with open(f"{base}.{worker}", "a", encoding="utf-8") as out:
            out.write(nodeid + "\n")
