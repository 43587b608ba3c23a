"""The controller's record of a run: reports turned into records, results.json written, the
run's verdict, the summary lines. Registered by :mod:`conformance.run.session.hooks` on the
controller only (an xdist worker sends its reports to it)."""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conformance import __version__
from conformance.adapters import installed_adapter_classes, reported_packages
from conformance.cases import CASE_SUFFIXES
from conformance.kinds import Kind
from conformance.known_failures import entries as known_failures
from conformance.known_failures.entries import Coverage, Entry
from conformance.records.record import Record
from conformance.records.results import (
    RESULT_KEY,
    SCHEMA_VERSION,
    STATIC_KEY,
    ResultsCollector,
    counts,
    write_atomic,
)
from conformance.report.publish import publish_after_run
from conformance.run.config.settings import Settings
from conformance.run.session.case_files import run_not_offered
from conformance.run.session.items import SETTINGS_KEY
from conformance.run.worker import robustness, timing_hooks
from conformance.versions import version_text

#: What the oracle runs on, reported after the adapters' own distributions.
ORACLE_PACKAGES = ("numpy", "scipy")


def reported_versions() -> dict[str, str]:
    """Each adapter's reported distributions (frameworks and what they run on), then the
    oracle's."""
    return {name: version_text(name) for name in (*reported_packages(), *ORACLE_PACKAGES)}


def conformance_env() -> dict[str, str]:
    return {k: v for k, v in sorted(os.environ.items()) if k.startswith("CONFORMANCE_")}


def run_verdict(
    records: list[Record], shard: tuple[int, int] | None, exitstatus: int
) -> tuple[int, str] | None:
    """(exit status, why) where a run's own status would mislead a CI job, else None.

    A shard with no items (a small selection over many shards) is a complete, empty part of
    the run: exit 0, with a results.json for ``conformance report`` to merge. A run whose every
    item was skipped tested nothing (no framework installed, say): a usage error, not green.
    """
    if not records and shard is not None and exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
        k, n = shard
        return pytest.ExitCode.OK, f"conformance: shard {k}/{n} has no items (exit 0)"
    skipped_all = records and all(r.outcome == "skipped" for r in records)
    if skipped_all and exitstatus == pytest.ExitCode.OK:
        return (
            pytest.ExitCode.USAGE_ERROR,
            f"conformance: all {len(records)} items were skipped, nothing was tested "
            "(are the frameworks installed? see the skip reasons)",
        )
    return None


class Recorder:
    """Turns reports into records and writes results.json; lives on the controller only."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.collector = ResultsCollector()
        self.started = time.time()
        self.report_lines: list[str] = []
        self.dump_dir: str | None = None
        #: Crashed items put back in the queue, and how often (``--crash-retries``).
        self.crash_runs: dict[str, int] = {}
        #: Known failures that matched no item, and those whose version gate left them out.
        self.stale: list[Entry] = []
        self.inactive: list[Entry] = []
        #: The run's own verdict where pytest's exit status would mislead (see run_verdict).
        self.verdict: tuple[int, str] | None = None
        self.verdict_line = ""

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.collector.set_collected([i.nodeid for i in session.items], session.items)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node) -> None:
        """Tell each xdist worker where its crash dumps go (read back if it dies)."""
        if self.dump_dir is None:
            self.dump_dir = tempfile.mkdtemp(prefix="conformance-dumps-")
        node.workerinput[robustness.DUMP_DIR_KEY] = self.dump_dir

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report, sched) -> None:
        """A worker died running ``crashitem``: record why (crash, or the hard timeout)."""
        settings: Settings = self.config.stash[SETTINGS_KEY]
        worker = getattr(getattr(report, "node", None), "gateway", None)
        dump = robustness.read_dump(self.dump_dir, worker.id) if self.dump_dir and worker else ""
        result = robustness.crash_result(str(report.longrepr), dump, settings.item_timeout)
        report.longrepr = f"[{result['kind']}] {result['message']}"
        if self._retry_crash(crashitem, result, sched):
            report.outcome = "rerun"  # the collector keeps the message; the item runs again
        report.user_properties = [
            *(report.user_properties or ()),
            (RESULT_KEY, json.dumps(result)),
        ]

    def pytest_report_teststatus(self, report) -> tuple | None:
        if report.outcome == "rerun":  # a crashed run going back in the queue
            return "crash-retried", "R", ("CRASHED, RETRYING", {"yellow": True})
        return None

    def _retry_crash(self, nodeid: str, result: dict, sched) -> bool:
        """Put a crashed item back in the queue if ``--crash-retries`` allows another run.

        Some frameworks crash nondeterministically (old XLA segfaulted in compilation in a
        different item on each run); a retry tells that apart from a crash the item causes.
        """
        settings: Settings = self.config.stash[SETTINGS_KEY]
        if result["kind"] != Kind.CRASH or self.crash_runs.get(nodeid, 0) >= settings.crash_retries:
            return False
        try:
            sched.mark_test_pending(nodeid)
        except (AttributeError, NotImplementedError):
            return False  # a --dist mode that cannot re-queue one item
        self.crash_runs[nodeid] = self.crash_runs.get(nodeid, 0) + 1
        return True

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self.dump_dir is not None:
            robustness.remove_dir(self.dump_dir)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node, ids) -> None:
        self.collector.set_collected(list(ids))

    @pytest.hookimpl(tryfirst=True)  # before pytest's own junitxml writer sees the report
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.collector.add_report(report)
        # Our properties are JSON for results.json (reproducers, inputs, case source); in
        # junit.xml they would triple its size. The item's own list is left untouched.
        report.user_properties = [
            (k, v) for k, v in report.user_properties if k not in (STATIC_KEY, RESULT_KEY)
        ]

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        settings: Settings = self.config.stash[SETTINGS_KEY]
        interrupted = exitstatus == pytest.ExitCode.INTERRUPTED
        if interrupted:
            reasons = ("interrupted before this item ran", "interrupted while this item ran")
        else:
            reasons = ("no result reported (crashed worker?)", "started but never finished")
        records = self.collector.finalize(*reasons)
        if records and getattr(self.config.option, "numprocesses", None):
            # Only after xdist workers ran items (they are done: nothing writes the caches).
            for adapter in installed_adapter_classes():
                adapter.after_run(self.started)
        if not records and exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
            planned, why = self._why_nothing(settings)
            if not (planned and settings.shard is not None):  # (an empty shard: exit 0, below)
                self.verdict_line = f"conformance: nothing collected: {why}"
                return
        if exitstatus == pytest.ExitCode.USAGE_ERROR or session.config.option.collectonly:
            return  # nothing ran; keep whatever results.json a real run left
        self.stale, self.inactive = known_failures.unmatched(
            settings.known_failures,
            records,
            settings.known_failure_index,
            coverage=self._coverage(),
        )
        self.verdict = run_verdict(records, settings.shard, exitstatus)
        if self.verdict is not None:
            session.exitstatus, self.verdict_line = self.verdict
        empty_shard = not records and settings.shard is not None and self.verdict is not None
        if settings.results_path is None or not (records or empty_shard):
            return
        write_atomic(
            settings.results_path,
            {
                "run": self.run_info(int(session.exitstatus), records),
                "records": [r.to_json() for r in records],
            },
        )
        self.report_lines = publish_after_run(settings.results_path)  # never raises

    def _why_nothing(self, settings: Settings) -> tuple[int, str]:
        """See :mod:`conformance.run.session.empty`; pytest's own filters named as given."""
        from conformance.run.session.empty import why_nothing

        option = self.config.option
        filters = [
            f"{flag} {value!r}"
            for flag, value in (("-k", option.keyword), ("-m", option.markexpr))
            if value
        ]
        if getattr(option, "deselect", None):
            filters.append("--deselect")
        given = [a for a in self.config.args if "::" in a]
        if given:
            filters.append("the node ids given")
        files = [
            Path(a.split("::")[0])
            for a in self.config.args
            if a.split("::")[0].endswith(CASE_SUFFIXES) and Path(a.split("::")[0]).is_file()
        ]
        try:
            return why_nothing(settings, files, filters)
        except Exception as exc:  # the explanation must never turn exit 2 into a crash
            return 0, f"(could not tell why: {type(exc).__name__}: {exc})"

    def _coverage(self) -> Coverage:
        """How much of its cases' items the run selected, beyond the filters records show:
        some only (a shard, --quick, -k/-m, --deselect, --lf, node ids), whole files named, or
        all. Read from the options, since under xdist the controller never sees deselection."""
        settings: Settings = self.config.stash[SETTINGS_KEY]
        option = self.config.option
        sampled = any(
            (
                settings.shard,
                settings.quick,
                getattr(option, "keyword", ""),
                getattr(option, "markexpr", ""),
                getattr(option, "deselect", None),
                getattr(option, "lf", False),
                any("::" in a for a in self.config.args),
            )
        )
        if sampled:
            return Coverage.SAMPLE
        if any(Path(a).is_file() for a in self.config.args):
            return Coverage.NAMED_FILES
        return Coverage.WHOLE

    def run_info(self, exitstatus: int, records: list[Record]) -> dict:
        settings: Settings = self.config.stash[SETTINGS_KEY]
        numprocesses = getattr(self.config.option, "numprocesses", None)
        return {
            "schema_version": SCHEMA_VERSION,
            "conformance_version": __version__,
            "frameworks": reported_versions(),
            "python": sys.version.split()[0],
            "platform": platform.platform(),
            "machine": platform.machine(),
            "device": settings.device,
            "started": dt.datetime.fromtimestamp(self.started, dt.UTC).isoformat(
                timespec="seconds"
            ),
            "duration": round(time.time() - self.started, 3),
            "command": " ".join(sys.argv),
            "args": list(self.config.invocation_params.args),
            "workers": numprocesses or 0,
            "env": conformance_env(),
            "case_roots": [str(r) for r in settings.case_roots],
            "interrupted": exitstatus == pytest.ExitCode.INTERRUPTED,
            "exitstatus": int(exitstatus),
            "collected": len(self.collector.collected or []),
            "counts": counts(records),
            "timing": timing_hooks.summary(self.config),
            "known_failure_files": [str(p) for p in settings.all_known_failure_files],
            "stale_known_failures": [{"id": e.id, "source": e.source} for e in self.stale],
            # A run that sampled its cases' items judges no entry stale (see Coverage).
            "stale_known_failures_judged": self._coverage() is not Coverage.SAMPLE,
            "inactive_known_failures": [e.id for e in self.inactive],
            "shard": list(settings.shard) if settings.shard else None,
            "not_offered": run_not_offered(self.config).by_framework(),
        }

    def pytest_terminal_summary(self, terminalreporter, exitstatus: int) -> None:
        if self.verdict_line:
            terminalreporter.write_line(self.verdict_line, yellow=True)
        for entry in self.stale:
            terminalreporter.write_line(
                f"warning: known failure {entry.id!r} ({entry.source}) matched no item: "
                "remove it or fix its patterns",
                yellow=True,
            )
        settings: Settings = self.config.stash[SETTINGS_KEY]
        if settings.results_path is not None and self.collector.collected:
            terminalreporter.write_line(f"conformance results: {settings.results_path}")
        for line in self.report_lines:
            terminalreporter.write_line(line, yellow="WARNING" in line)
