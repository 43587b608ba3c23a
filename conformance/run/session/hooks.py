"""The suite's pytest hooks, registered by :mod:`conformance.run.plugin` in runs that have case files.

Case files are collected only from case roots — ``--cases DIR``, ``CONFORMANCE_CASES``, the ini
value ``conformance_cases`` — or when named on the command line, so installing the suite never
turns another project's YAML files into tests. results.json is written by the process that sees
every report (the xdist controller), and only when case items were collected.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from pathlib import Path

import pytest

from conformance import __version__
from conformance.adapters.base import EXECUTABLE_STORE_ENV
from conformance.plan.shards import in_shard
from conformance.records.results import (
    RESULT_KEY,
    STATIC_KEY,
    is_case_nodeid,
)
from conformance.report.junit import default_junitxml
from conformance.run.config.options import short_options, spelling_prefix
from conformance.run.config.settings import Settings, SettingsError, split_list
from conformance.run.session import progress, scheduling
from conformance.run.session.case_files import is_case_file, run_not_offered
from conformance.run.session.items import (
    FACTORY_KEY,
    SETTINGS_KEY,
    CaseFileCollector,
    CaseItem,
    ConformanceItem,
)
from conformance.run.session.recorder import Recorder, conformance_env, reported_versions
from conformance.run.subject_factory import SubjectFactory
from conformance.run.worker import gc_policy, memory, robustness, timing_hooks


def _settings(config: pytest.Config) -> Settings:
    try:
        return Settings.from_sources(
            short_options(config.option),
            os.environ,
            [Path(p) for p in config.getini("conformance_cases")],
            prefix=spelling_prefix(config.pluginmanager.get_plugins()),
        )
    except SettingsError as exc:
        raise pytest.UsageError(str(exc)) from None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``--shard K/N`` over the case items collected, by their node ids (the plan's rule,
    :func:`in_shard`); other tests stay."""
    settings: Settings = config.stash[SETTINGS_KEY]
    if settings.shard is None:
        return
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        if not is_case_nodeid(item.nodeid) or in_shard(item.nodeid, settings.shard):
            keep.append(item)
        else:
            drop.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def pytest_collection_finish(session: pytest.Session) -> None:
    """In every process that runs case items (xdist workers too): see :mod:`gc_policy`."""
    if any(is_case_nodeid(item.nodeid) for item in session.items):
        gc_policy.tune()


def pytest_sessionfinish(session: pytest.Session) -> None:
    # An xdist worker's process ends with its session (see gc_policy).
    gc_policy.restore(exiting=hasattr(session.config, "workerinput"))


def pytest_configure(config: pytest.Config) -> None:
    settings = _settings(config)
    problems = settings.problems()
    if problems:
        raise pytest.UsageError("; ".join(problems))
    config.stash[SETTINGS_KEY] = settings
    if getattr(config.option, "conformance_no_executable_store", None):
        os.environ[EXECUTABLE_STORE_ENV] = "off"  # xdist workers inherit it
    config.stash[FACTORY_KEY] = SubjectFactory(
        settings.device, settings.property_examples, settings.sample_seed
    )
    config.pluginmanager.register(timing_hooks.TimingPlugin(config), "conformance-timing")
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(Recorder(config), "conformance-recorder")
        robustness.terminate_as_interrupt()
        progress.register(config)
    explicit = [Path(p).resolve() for p in split_list(config.option.conformance_cases)]
    if explicit:
        # `--cases DIR` alone should run DIR, not the default testpaths.
        # A root some argument already selects from (a file or node id in it) is not added:
        # that would run the whole root besides the selection.
        given = config.args if config.args_source == pytest.Config.ArgsSource.ARGS else []
        inside = [Path(a.split("::")[0]).resolve() for a in given if not a.startswith("-")]
        config.args = [
            *given,
            *(str(p) for p in explicit if not any(g == p or p in g.parents for g in inside)),
        ]
    # A collect-only run executes nothing: it must leave the last run's junit.xml as it is
    # (as it does results.json and the report).
    collect_only = getattr(config.option, "collectonly", False)
    if (
        not hasattr(config, "workerinput")
        and hasattr(config.option, "xmlpath")
        and not collect_only
    ):
        junit = default_junitxml(
            given=config.option.xmlpath,
            results_path=settings.results_path,
            args=config.args,
            roots=settings.case_roots,
            cwd=config.invocation_params.dir,
        )
        if junit is not None:
            config.option.xmlpath = str(junit)  # read by pytest's junitxml plugin after us


def pytest_collect_file(file_path: Path, parent: pytest.Collector):
    if is_case_file(file_path, parent.config):
        return CaseFileCollector.for_file(parent, file_path)
    return None


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_timeout_set_timer(item: pytest.Item, settings) -> bool | None:
    """pytest-timeout's timer, our way for case items (see :mod:`conformance.run.worker.robustness`);
    other tests keep pytest-timeout's own."""
    if not isinstance(item, ConformanceItem):
        return None
    robustness.set_item_timer(item, settings.timeout, hard=hasattr(item.config, "workerinput"))
    return True


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log) -> object | None:
    """Contiguous shares instead of xdist's one-at-a-time ``load`` (see :mod:`scheduling`)."""
    return scheduling.make_scheduler(config, log)


#: The families (or parametrisations) a framework lacks that the header names, at most.
NAMES_IN_HEADER = 8

_MEMORY_GUARD = pytest.StashKey[memory.MemoryGuard]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Each of an item's record fields travels once: the static ones with its setup report,
    the result with its call report. pytest copies an item's properties into all three
    reports, and an xdist worker sends each to the controller (about 2 KB of JSON a report:
    25 s of a warm full run's worker time went into sending them)."""
    report = yield
    if call.when != "setup" and isinstance(item, CaseItem):
        dropped = (STATIC_KEY,) if call.when == "call" else (STATIC_KEY, RESULT_KEY)
        report.user_properties = [(k, v) for k, v in report.user_properties if k not in dropped]
    return report


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """After each case item: release compiled code if the process outgrew its budget. The
    hard-timeout watchdog stays armed only from one case item to the next."""
    if not isinstance(nextitem, ConformanceItem):
        robustness.release_watchdog()
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


def pytest_unconfigure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):
        robustness.stop_worker()


def pytest_report_header(config: pytest.Config) -> list[str]:
    settings: Settings = config.stash[SETTINGS_KEY]
    versions = ", ".join(f"{k} {v}" for k, v in reported_versions().items())
    env = ", ".join(f"{k}={v}" for k, v in conformance_env().items()) or "(none set)"
    roots = ", ".join(str(r) for r in settings.case_roots) or "(none)"
    lines = [
        f"conformance {__version__}: {versions}",
        f"conformance device: {settings.device}; case roots: {roots}",
        f"conformance env: {env}",
    ]
    if not hasattr(config, "workerinput"):
        # What has no items, said once (``conformance list`` names every family).
        offers = run_not_offered(config)
        lines += [f"conformance not offered: {line}" for line in offers.lines(NAMES_IN_HEADER)]
    return lines
