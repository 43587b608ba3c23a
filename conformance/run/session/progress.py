"""Progress lines for logs that are not a terminal (CI): pytest's percentage alone says
nothing of speed during a 30-minute first run. Every ``CONFORMANCE_PROGRESS_INTERVAL`` seconds
(default 30; 0: off) the controller writes case items done of collected, items/s and an ETA,
each on a line of its own. A run without case items (a project's own tests) writes none."""

from __future__ import annotations

import os
import sys
import time

import pytest

from conformance.records.results import is_case_nodeid

ENV = "CONFORMANCE_PROGRESS_INTERVAL"
DEFAULT_INTERVAL = 30.0


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    return (
        f"{minutes} min {seconds:02d} s"
        if minutes < 60
        else f"{minutes // 60} h {minutes % 60:02d} min"
    )


def line(done: int, total: int, elapsed: float) -> str:
    rate = done / elapsed if elapsed > 0 else 0.0
    eta = _duration((total - done) / rate) if rate > 0 and total >= done else "unknown"
    share = f" ({100 * done / total:.0f}%)" if total else ""
    return (
        f"conformance progress: {done:,}/{total:,} items{share}, {rate:.1f} items/s, "
        f"ETA {eta}, {_duration(elapsed)} so far"
    )


class Progress:
    """Registered on the controller when its output is not a terminal."""

    def __init__(self, config: pytest.Config, interval: float) -> None:
        self.config = config
        self.interval = interval
        self.started = time.monotonic()
        self.last = self.started
        self.total = 0
        self.done = 0

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.total = sum(is_case_nodeid(item.nodeid) for item in session.items)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node, ids) -> None:
        self.total = max(self.total, sum(is_case_nodeid(i) for i in ids))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not is_case_nodeid(report.nodeid):
            return
        if report.when == "teardown":
            self.done += 1
        now = time.monotonic()
        if now - self.last < self.interval or not self.total:
            return
        self.last = now
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        text = line(self.done, self.total, now - self.started)
        if reporter is None:
            print(text, file=sys.stderr)
            return
        # Off the line of progress dots pytest is writing (xdist's reporter included).
        if getattr(reporter._tw, "width_of_current_line", 0):
            reporter._tw.line()
        reporter.write_line(text)


def register(config: pytest.Config) -> None:
    """Add :class:`Progress` unless stdout is a terminal or the interval is 0."""
    try:
        interval = float(os.environ.get(ENV) or DEFAULT_INTERVAL)
    except ValueError:
        raise pytest.UsageError(f"{ENV}={os.environ[ENV]!r}: expected seconds, e.g. 30") from None
    if interval <= 0 or sys.stdout.isatty():
        return
    config.pluginmanager.register(Progress(config, interval), "conformance-progress")
