"""The pytest entry point (``pytest11: conformance``): light, and dormant without case files.

Installing the suite puts this module in every pytest run of every project in the environment.
It declares the options (:mod:`conformance.run.config.options`, no heavy imports) and, only when the run
has case files — a case root from ``--cases``, ``CONFORMANCE_CASES`` or the ini value
``conformance_cases``, or a YAML file named on the command line — registers the suite's hooks
(:mod:`conformance.run.session.hooks`: frameworks, oracle, reports). Other projects' runs see no
header lines, no hooks and no imports beyond this module's.
"""

from __future__ import annotations

import os

import pytest

from conformance.cases import CASE_SUFFIXES
from conformance.run.config.options import add_pytest_options, env_list, split_list


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("conformance", "distribution conformance suite")
    add_pytest_options(group.addoption)
    parser.addini("conformance_cases", "directories of YAML case files", type="paths", default=[])


def has_case_files(config: pytest.Config) -> bool:
    """Whether this run can have case items: a case root, or a case file named as an argument."""
    if split_list(config.option.conformance_cases) or env_list("CONFORMANCE_CASES", os.environ):
        return True
    if config.getini("conformance_cases"):
        return True
    return any(arg.split("::", 1)[0].endswith(CASE_SUFFIXES) for arg in config.args)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    if has_case_files(config):
        from conformance.run.session import hooks

        config.pluginmanager.register(hooks, "conformance-suite")
