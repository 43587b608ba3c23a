"""How xdist shares the items out: in contiguous runs, so each worker meets fewer distinct programs.

Consecutive case items share their family, framework and binding, and most of their compiled
code: NumPyro's executables (loaded from the store or compiled, about 9 ms and up each), eager
JAX's per-primitive executables, torch's kernels. xdist's default ``--dist load`` hands the first
quarter of the items out one at a time in turn, and the rest in chunks in turn, so both workers
meet nearly every binding and shape and each loads nearly everything. ``worksteal`` gives each
worker one contiguous share and lets an idle worker take the back half of a busy one's queue: the
same balance at the end, each program met by about one worker. It keeps what the suite needs of
a scheduler (an item that crashed its worker can be queued again, ``--crash-retries``).

A ``--dist`` the user gives (on the command line, in ``PYTEST_ADDOPTS`` or the ini's
``addopts``) is kept as given.
"""

from __future__ import annotations

import os
import shlex
from typing import Any

import pytest


def dist_given(config: pytest.Config) -> bool:
    """Whether the user chose a ``--dist`` mode (``-d`` is ``--dist=load``)."""
    given = [
        *config.invocation_params.args,
        *shlex.split(os.environ.get("PYTEST_ADDOPTS", "")),
        *config.getini("addopts"),
    ]
    return any(a in ("-d", "--dist") or a.startswith("--dist=") for a in given)


def make_scheduler(config: pytest.Config, log: Any) -> Any | None:
    """Work stealing where xdist would use ``load`` by default; None leaves xdist's choice."""
    if config.option.dist != "load" or dist_given(config):
        return None
    try:
        from xdist.scheduler import WorkStealingScheduling
    except ImportError:  # an xdist before 3.2
        return None
    return WorkStealingScheduling(config, log)
