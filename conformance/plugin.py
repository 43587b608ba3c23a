"""The pytest plugin (entry point ``pytest11: conformance``).

Case files are collected only from case roots — ``--cases DIR``, ``CONFORMANCE_CASES``, the ini
value ``conformance_cases`` — or when named on the command line, so installing the suite never
turns another project's YAML files into tests. results.json is written by the process that sees
every report (the xdist controller), and only when case items were collected.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.metadata
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conformance import __version__, known_failures, memory, robustness, timing
from conformance.items import SETTINGS_KEY, CaseFile, ConformanceItem
from conformance.loader import CASE_SUFFIXES
from conformance.report.junit import default_junitxml
from conformance.report.publish import publish_after_run
from conformance.results import (
    RESULT_KEY,
    STATIC_KEY,
    ResultsCollector,
    counts,
    is_case_nodeid,
    write_atomic,
)
from conformance.settings import DEFAULT_RESULTS, Settings, env_list, split_list

#: Distributions whose versions a run reports (frameworks and what they run on).
REPORTED_PACKAGES = (
    "torch",
    "jax",
    "jaxlib",
    "numpyro",
    "gpytorch",
    "linear_operator",
    "numpy",
    "scipy",
)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("conformance", "distribution conformance suite")
    group.addoption(
        "--cases",
        action="append",
        metavar="DIR",
        help="directory (or file) of YAML cases; repeatable",
    )
    group.addoption(
        "--framework",
        action="append",
        metavar="NAME",
        help="only these adapters (glob; repeatable or comma-separated)",
    )
    group.addoption("--family", action="append", metavar="NAME", help="only these families (glob)")
    group.addoption("--check", action="append", metavar="NAME", help="only these checks (glob)")
    group.addoption(
        "--dtype", action="append", metavar="DTYPE", help="only these dtypes: float32, float64"
    )
    group.addoption(
        "--device", metavar="DEVICE", help="cpu (default) or cuda; also CONFORMANCE_DEVICE"
    )
    group.addoption(
        "--adapter",
        action="append",
        metavar="MODULE:CLASS",
        help="load a third-party adapter class",
    )
    group.addoption(
        "--results", metavar="PATH", help=f"where to write results.json (default {DEFAULT_RESULTS})"
    )
    group.addoption("--no-results", action="store_true", help="do not write results.json")
    group.addoption(
        "--known-failures",
        action="append",
        metavar="FILE",
        help="YAML file of expected framework failures (repeatable; also CONFORMANCE_KNOWN_FAILURES)",
    )
    group.addoption(
        "--no-builtin-known-failures",
        action="store_true",
        help="do not load the suite's own registry of known framework bugs",
    )
    group.addoption(
        "--strict-known-failures",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="a known failure that now passes fails the run (default: on)",
    )
    group.addoption(
        "--shard",
        metavar="K/N",
        help="run only the K-th of N deterministic shards of the items (CONFORMANCE_SHARD)",
    )
    group.addoption(
        "--property",
        type=int,
        metavar="N",
        help="property-based mode: N hypothesis examples of drawn batch shapes per case, "
        "framework and dtype (default 0: off; CONFORMANCE_PROPERTY)",
    )
    group.addoption(
        "--variants",
        choices=("on", "off"),
        help="derive broadcast-pattern variants from every case (default on; CONFORMANCE_VARIANTS)",
    )
    group.addoption(
        "--item-timeout",
        metavar="SECONDS",
        help=f"fail a case item that runs longer (kind timeout; default "
        f"{robustness.DEFAULT_ITEM_TIMEOUT:g}, 0: off; CONFORMANCE_ITEM_TIMEOUT)",
    )
    group.addoption(
        "--worker-memory",
        metavar="SIZE",
        help="cap each xdist worker's writable memory, e.g. 8G, 512M, off (default 8G; "
        "CONFORMANCE_WORKER_MEMORY)",
    )
    group.addoption(
        "--memory-budget",
        metavar="SIZE",
        help="between items, when a process's resident memory exceeds SIZE, drop the "
        "frameworks' compiled-code caches and return the memory (default 2G, off; "
        "CONFORMANCE_MEMORY_BUDGET)",
    )
    group.addoption(
        "--crash-retries",
        metavar="N",
        help="run an item that crashed its worker up to N more times on a fresh worker; it "
        "keeps the crash messages, and passes only if a retry passes (default 0; xdist only; "
        "CONFORMANCE_CRASH_RETRIES)",
    )
    group.addoption(
        "--max-elements",
        metavar="N",
        help="reject a case whose arrays would have more elements, before building them "
        "(default 1000000; CONFORMANCE_MAX_ELEMENTS)",
    )
    parser.addini("conformance_cases", "directories of YAML case files", type="paths", default=[])


def _settings(config: pytest.Config) -> Settings:
    opt = config.option
    roots = [Path(p).resolve() for p in split_list(opt.cases)]
    roots += [Path(p).resolve() for p in env_list("CONFORMANCE_CASES")]
    roots += [Path(p).resolve() for p in config.getini("conformance_cases")]
    results = opt.results or os.environ.get("CONFORMANCE_RESULTS") or DEFAULT_RESULTS
    return Settings(
        case_roots=roots,
        frameworks=split_list(opt.framework) or env_list("CONFORMANCE_FRAMEWORKS"),
        families=split_list(opt.family) or env_list("CONFORMANCE_FAMILIES"),
        checks=split_list(opt.check) or env_list("CONFORMANCE_CHECKS"),
        dtypes=split_list(opt.dtype) or env_list("CONFORMANCE_DTYPES"),
        device=opt.device or os.environ.get("CONFORMANCE_DEVICE") or "cpu",
        adapter_specs=tuple(split_list(opt.adapter) + env_list("CONFORMANCE_ADAPTERS")),
        results_path=None if opt.no_results else Path(results),
        variants=(opt.variants or os.environ.get("CONFORMANCE_VARIANTS") or "on") == "on",
        property_examples=int(
            opt.property
            if opt.property is not None
            else os.environ.get("CONFORMANCE_PROPERTY") or 0
        ),
        known_failure_files=[
            Path(p) for p in split_list(opt.known_failures) + env_list("CONFORMANCE_KNOWN_FAILURES")
        ],
        builtin_known_failures=not opt.no_builtin_known_failures,
        strict_known_failures=(
            opt.strict_known_failures if opt.strict_known_failures is not None else True
        ),
        shard=_parse_shard(opt.shard or os.environ.get("CONFORMANCE_SHARD")),
        **_robustness_settings(opt),
    )


def _robustness_settings(opt: argparse.Namespace) -> dict:
    """--item-timeout, --worker-memory and --max-elements (or their variables), checked."""

    def given(name: str, env: str) -> str | None:
        value = getattr(opt, name)
        return value if value is not None else os.environ.get(env) or None

    out: dict = {}
    timeout = given("item_timeout", "CONFORMANCE_ITEM_TIMEOUT")
    cap_text = given("worker_memory", "CONFORMANCE_WORKER_MEMORY")
    budget = given("memory_budget", "CONFORMANCE_MEMORY_BUDGET")
    cap = given("max_elements", "CONFORMANCE_MAX_ELEMENTS")
    retries = given("crash_retries", "CONFORMANCE_CRASH_RETRIES")
    try:
        out["crash_retries"] = 0 if retries is None else int(retries)
    except ValueError:
        out["crash_retries"] = -1
    if out["crash_retries"] < 0:
        raise pytest.UsageError(f"--crash-retries {retries!r}: expected a count, e.g. 1")
    try:
        seconds = robustness.DEFAULT_ITEM_TIMEOUT if timeout is None else float(timeout)
        out["item_timeout"] = seconds if seconds > 0 else None
    except ValueError:
        raise pytest.UsageError(f"--item-timeout {timeout!r}: expected seconds, e.g. 120") from None
    try:
        out["worker_memory"] = (
            robustness.DEFAULT_WORKER_MEMORY
            if cap_text is None
            else robustness.parse_size(cap_text)
        )
    except ValueError as exc:
        raise pytest.UsageError(f"--worker-memory: {exc}") from None
    try:
        out["memory_budget"] = (
            memory.DEFAULT_BUDGET if budget is None else robustness.parse_size(budget)
        )
    except ValueError as exc:
        raise pytest.UsageError(f"--memory-budget: {exc}") from None
    try:
        out["max_elements"] = None if cap is None else int(cap)
    except ValueError:
        out["max_elements"] = 0
    if out["max_elements"] is not None and out["max_elements"] < 1:
        raise pytest.UsageError(f"--max-elements {cap!r}: expected a positive integer")
    return out


def _known_failure_files(settings: Settings) -> list[Path]:
    from conformance.known_failures import builtin_files

    files = builtin_files() if settings.builtin_known_failures else []
    return files + list(settings.known_failure_files)


def _parse_shard(text: str | None) -> tuple[int, int] | None:
    if not text:
        return None
    try:
        k, n = (int(t) for t in text.split("/"))
    except ValueError:
        raise pytest.UsageError(f"--shard {text!r}: expected K/N, e.g. 1/4") from None
    return k, n


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``--shard K/N``: keep every N-th case item starting at the K-th, deterministically."""
    settings: Settings = config.stash[SETTINGS_KEY]
    if settings.shard is None:
        return
    k, n = settings.shard
    keep, drop = [], []
    position = 0
    for item in items:
        if not is_case_nodeid(item.nodeid):
            keep.append(item)
            continue
        (keep if position % n == k - 1 else drop).append(item)
        position += 1
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def pytest_configure(config: pytest.Config) -> None:
    settings = _settings(config)
    problems = settings.problems()
    if problems:
        raise pytest.UsageError("; ".join(problems))
    config.stash[SETTINGS_KEY] = settings
    from conformance.checks import CHECKS

    CHECKS["property"].examples = settings.property_examples
    config.pluginmanager.register(timing.TimingPlugin(config), "conformance-timing")
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(Recorder(config), "conformance-recorder")
        robustness.terminate_as_interrupt()
    explicit = [Path(p).resolve() for p in split_list(config.option.cases)]
    if explicit:
        # `--cases DIR` alone should run DIR, not the default testpaths.
        given = config.args if config.args_source == pytest.Config.ArgsSource.ARGS else []
        config.args = [*given, *(str(p) for p in explicit if str(p) not in given)]
    if not hasattr(config, "workerinput") and hasattr(config.option, "xmlpath"):
        junit = default_junitxml(
            given=config.option.xmlpath,
            results_path=settings.results_path,
            args=config.args,
            roots=settings.case_roots,
            cwd=config.invocation_params.dir,
        )
        if junit is not None:
            config.option.xmlpath = str(junit)  # read by pytest's junitxml plugin after us


def _is_case_file(file_path: Path, config: pytest.Config) -> bool:
    if file_path.suffix not in CASE_SUFFIXES:
        return False
    settings: Settings = config.stash[SETTINGS_KEY]
    resolved = file_path.resolve()
    for root in settings.case_roots:
        if resolved == root or root in resolved.parents:
            return True
    return any(Path(a.split("::")[0]).resolve() == resolved for a in config.args)


def pytest_collect_file(file_path: Path, parent: pytest.Collector):
    if _is_case_file(file_path, parent.config):
        return CaseFile.from_parent(parent, path=file_path)
    return None


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_timeout_set_timer(item: pytest.Item, settings) -> bool | None:
    """pytest-timeout's timer, our way for case items (see :mod:`conformance.robustness`);
    other tests keep pytest-timeout's own."""
    if not isinstance(item, ConformanceItem):
        return None
    robustness.set_item_timer(item, settings.timeout, hard=hasattr(item.config, "workerinput"))
    return True


_MEMORY_GUARD = pytest.StashKey[memory.MemoryGuard]()


def pytest_runtest_teardown(item: pytest.Item) -> None:
    """After each case item: release compiled code if the process outgrew its budget."""
    if isinstance(item, ConformanceItem):
        stash = item.config.stash
        if _MEMORY_GUARD not in stash:
            stash[_MEMORY_GUARD] = memory.MemoryGuard(stash[SETTINGS_KEY].memory_budget)
        stash[_MEMORY_GUARD].after_item(item.adapter)


def pytest_sessionstart(session: pytest.Session) -> None:
    config = session.config
    if hasattr(config, "workerinput"):
        settings: Settings = config.stash[SETTINGS_KEY]
        robustness.start_worker(config.workerinput, settings.worker_memory)


def _versions() -> dict[str, str]:
    out = {}
    for name in REPORTED_PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def _env() -> dict[str, str]:
    return {k: v for k, v in sorted(os.environ.items()) if k.startswith("CONFORMANCE_")}


def pytest_report_header(config: pytest.Config) -> list[str]:
    settings: Settings = config.stash[SETTINGS_KEY]
    versions = ", ".join(f"{k} {v}" for k, v in _versions().items())
    env = ", ".join(f"{k}={v}" for k, v in _env().items()) or "(none set)"
    roots = ", ".join(str(r) for r in settings.case_roots) or "(none)"
    return [
        f"conformance {__version__}: {versions}",
        f"conformance device: {settings.device}; case roots: {roots}",
        f"conformance env: {env}",
    ]


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
        report.longrepr = result["message"]
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
        if result["kind"] != "crash" or self.crash_runs.get(nodeid, 0) >= settings.crash_retries:
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
        if exitstatus == pytest.ExitCode.USAGE_ERROR:
            return  # nothing ran; keep whatever results.json a real run left
        self.stale, self.inactive = known_failures.unmatched(
            settings.known_failures, records, settings.known_failure_index
        )
        if settings.results_path is None or not records:
            return
        write_atomic(
            settings.results_path, {"run": self.run_info(exitstatus, records), "records": records}
        )
        self.report_lines = publish_after_run(settings.results_path)  # never raises

    def run_info(self, exitstatus: int, records: list[dict]) -> dict:
        settings: Settings = self.config.stash[SETTINGS_KEY]
        numprocesses = getattr(self.config.option, "numprocesses", None)
        return {
            "schema_version": 1,
            "conformance_version": __version__,
            "frameworks": _versions(),
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
            "env": _env(),
            "case_roots": [str(r) for r in settings.case_roots],
            "interrupted": exitstatus == pytest.ExitCode.INTERRUPTED,
            "exitstatus": int(exitstatus),
            "collected": len(self.collector.collected or []),
            "counts": counts(records),
            "timing": timing.summary(self.config),
            "known_failure_files": [str(p) for p in _known_failure_files(settings)],
            "stale_known_failures": [
                {"id": e.id, "source": e.source} for e in getattr(self, "stale", [])
            ],
            "inactive_known_failures": [e.id for e in getattr(self, "inactive", [])],
            "shard": list(settings.shard) if settings.shard else None,
        }

    def pytest_terminal_summary(self, terminalreporter, exitstatus: int) -> None:
        for entry in getattr(self, "stale", []):
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
