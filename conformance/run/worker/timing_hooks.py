"""The pytest side of :mod:`conformance.timing`: phases around collection and items in every
process, and each xdist worker's totals handed back to the controller for results.json."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.timing import phase, snapshot

WORKER_KEY = "conformance_timing"


class TimingPlugin:
    """Times collection and items in every process; workers hand their totals back."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.workers: dict[str, dict[str, Any]] = {}

    @pytest.hookimpl(wrapper=True)
    def pytest_collection(self, session: pytest.Session):
        with phase("collection"):
            return (yield)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item):
        with phase("items"):
            return (yield)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        workeroutput = getattr(self.config, "workeroutput", None)
        if workeroutput is not None:
            workeroutput[WORKER_KEY] = snapshot()

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        output = getattr(node, "workeroutput", None) or {}
        if WORKER_KEY in output:
            self.workers[node.gateway.id] = output[WORKER_KEY]

    def summary(self) -> dict[str, Any]:
        """This process's totals, and each worker's when the run used xdist."""
        return {"controller": snapshot(), "workers": dict(sorted(self.workers.items()))}


def summary(config: pytest.Config) -> dict[str, Any] | None:
    plugin = config.pluginmanager.get_plugin("conformance-timing")
    return plugin.summary() if plugin is not None else None
