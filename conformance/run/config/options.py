"""Every option of a run, declared once, and the list helpers their values go through.

Kept free of heavy imports: the pytest entry point (:mod:`conformance.run.plugin`) declares these
options in every pytest run of every project where the suite is installed, and must cost next
to nothing there.

The options are declared with their short spelling (``--device``), which ``conformance run``
takes. pytest gets them under one prefix (``--conformance-device``, dest
``conformance_device``): a plugin loaded into every project's pytest must not take names that
project's own conftest.py declares (``--device`` once failed their run with "option dest
'device' already used"). :func:`in_pytest_spelling` maps the one onto the other.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Mapping
from typing import Any

from conformance.run.worker import robustness

DEFAULT_RESULTS = "reports/results.json"

#: What every option of the suite is called in pytest: ``--device`` is ``--conformance-device``.
PREFIX = "--conformance-"
#: ... and where pytest keeps its value: ``config.option.conformance_device``.
DEST_PREFIX = "conformance_"


def split_list(values: list[str] | None) -> list[str]:
    """``["a,b", "c"]`` → ``["a", "b", "c"]``: options accept repeats and commas alike."""
    out: list[str] = []
    for v in values or ():
        out.extend(part.strip() for part in v.split(",") if part.strip())
    return out


def env_list(name: str, env: Mapping[str, str] | None = None) -> list[str]:
    return split_list([(os.environ if env is None else env).get(name, "")])


def add_options(add: Callable[..., Any]) -> None:
    """Declare every option of a run through ``add`` (pytest's ``addoption`` or argparse's
    ``add_argument``): the one list of them, which :meth:`Settings.from_sources` reads."""
    add(
        "--cases",
        action="append",
        metavar="DIR",
        help="directory (or file) of YAML cases; repeatable",
    )
    add(
        "--builtin-cases",
        action="store_true",
        help="run the shipped cases too, beside those --cases names (CONFORMANCE_BUILTIN_CASES=1)",
    )
    add(
        "--framework",
        action="append",
        metavar="NAME",
        help="only these adapters (glob; repeatable or comma-separated)",
    )
    add("--family", action="append", metavar="NAME", help="only these families (glob)")
    add("--check", action="append", metavar="NAME", help="only these checks (glob)")
    add("--dtype", action="append", metavar="DTYPE", help="only these dtypes: float32, float64")
    add("--device", metavar="DEVICE", help="cpu (default) or cuda; also CONFORMANCE_DEVICE")
    add(
        "--adapter",
        action="append",
        metavar="MODULE:CLASS",
        help="load a third-party adapter class",
    )
    add(
        "--results", metavar="PATH", help=f"where to write results.json (default {DEFAULT_RESULTS})"
    )
    add("--no-results", action="store_true", help="do not write results.json")
    add(
        "--known-failures",
        action="append",
        metavar="FILE",
        help="YAML file of expected framework failures (repeatable; also CONFORMANCE_KNOWN_FAILURES)",
    )
    add(
        "--no-builtin-known-failures",
        action="store_true",
        help="do not load the suite's own registry of known framework bugs",
    )
    add(
        "--strict-known-failures",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="a known failure that now passes fails the run (default: on)",
    )
    add(
        "--shard",
        metavar="K/N",
        help=(
            "run only shard K of N: an item's shard is a stable hash of its id, so new cases "
            "move no other item (CONFORMANCE_SHARD)"
        ),
    )
    add(
        "--quick",
        action="store_true",
        default=None,
        help="a pull-request-sized run: the first item of each family × framework × check × "
        "dtype in each case file (one dtype for the transformations, variants, calling "
        "contexts and eager runs; where items compile, as NumPyro's do, one transformation "
        "and one sampling item per family × framework instead of each), every item of the "
        "seed bugs' cases, and the generated edge cases exactly at an end "
        "(CONFORMANCE_QUICK=1)",
    )
    add(
        "--property",
        type=int,
        metavar="N",
        help="property-based mode: N hypothesis examples of drawn batch shapes per case, "
        "framework and dtype (default 0: off; CONFORMANCE_PROPERTY)",
    )
    add(
        "--sample-seed",
        type=int,
        metavar="K",
        help="added to the seed of every sampling item (default 0; CONFORMANCE_SAMPLE_SEED): "
        "another K draws other samples, to measure the sampling items' false-failure rate",
    )
    add(
        "--edges",
        choices=("on", "off", "bulk"),
        help="the generated edge cases (each family's parameters at the ends of their "
        "domains, its value at the ends of its support; see `conformance edges`); off leaves "
        "them out; bulk adds real-valued parameters at large magnitudes and, at every moved "
        "parameter, values where the density lives (its quantiles), and pairs of inputs at "
        "their edges together, triaged on the pins, opt-in for its cost (+9,480 items, "
        "planning about 28 s per process instead of 9) (default on; CONFORMANCE_EDGES)",
    )
    add(
        "--variants",
        choices=("on", "off"),
        help="derive broadcast-pattern variants from every case (default on; CONFORMANCE_VARIANTS)",
    )
    add(
        "--opt-in",
        action="append",
        metavar="OPERATION",
        help="run an operation an adapter offers only on request, e.g. jit (torch.compile, "
        "~2 s per shape); repeatable or comma-separated (CONFORMANCE_OPT_IN; "
        "CONFORMANCE_TORCH_COMPILE=1 means jit)",
    )
    add(
        "--item-timeout",
        metavar="SECONDS",
        help=f"fail a case item that runs longer (kind timeout; default "
        f"{robustness.DEFAULT_ITEM_TIMEOUT:g}, 0: off; CONFORMANCE_ITEM_TIMEOUT)",
    )
    add(
        "--worker-memory",
        metavar="SIZE",
        help="cap each xdist worker's writable memory, e.g. 8G, 512M, off (default 8G; "
        "CONFORMANCE_WORKER_MEMORY)",
    )
    add(
        "--memory-budget",
        metavar="SIZE",
        help="between items, when a process's resident memory exceeds SIZE, drop the "
        "frameworks' compiled-code caches and return the memory (default 2G, off; "
        "CONFORMANCE_MEMORY_BUDGET); with any budget, off too, they are also dropped near "
        "the kernel's limit on memory mappings (vm.max_map_count), past which XLA crashes",
    )
    add(
        "--no-executable-store",
        action="store_true",
        default=None,
        help="trace and lower every compiled function again instead of loading what an "
        "earlier run stored (the compilation cache stays on): for code changed in ways the "
        "store cannot see, e.g. patched inside an item (docs/running.md; also "
        "CONFORMANCE_EXECUTABLE_STORE=off)",
    )
    add(
        "--crash-retries",
        metavar="N",
        help="run an item that crashed its worker up to N more times on a fresh worker; it "
        "keeps the crash messages, and passes only if a retry passes (default 0; xdist only; "
        "CONFORMANCE_CRASH_RETRIES)",
    )
    add(
        "--max-elements",
        metavar="N",
        help="reject a case whose arrays would have more elements, before building them "
        "(default 1000000; CONFORMANCE_MAX_ELEMENTS)",
    )


class ShortSpelling:
    """Registered by ``conformance run`` and ``conformance list`` with pytest: the user typed
    the short spelling (``--family``), so messages name the options so."""


def spelling_prefix(plugins: Any) -> str:
    """How this run's user spells the suite's options: ``--`` or :data:`PREFIX`."""
    return "--" if any(isinstance(p, ShortSpelling) for p in plugins) else PREFIX


def _dest(flag: str) -> str:
    return flag.removeprefix("--").replace("-", "_")


def add_pytest_options(addoption: Callable[..., Any]) -> None:
    """Declare every option under :data:`PREFIX` through pytest's ``addoption``. A boolean
    option's negation is ``--conformance-no-X`` (argparse would make it ``--no-conformance-X``),
    so that every spelling of the suite's starts with the prefix."""

    def add(*flags: str, **how: Any) -> None:
        dest = DEST_PREFIX + _dest(flags[0])
        names = [PREFIX + f.removeprefix("--") for f in flags]
        if how.get("action") is argparse.BooleanOptionalAction:
            rest = {k: v for k, v in how.items() if k != "action"}
            addoption(*names, action="store_true", dest=dest, **rest)
            negated = [PREFIX + "no-" + f.removeprefix("--") for f in flags]
            addoption(*negated, action="store_false", dest=dest, default=rest.get("default"),
                      help=argparse.SUPPRESS)  # fmt: skip
            return
        addoption(*names, dest=dest, **how)

    add_options(add)


def dests() -> list[str]:
    """Every option's short dest (``device``, ``strict_known_failures``, …)."""
    found: list[str] = []
    add_options(lambda *flags, **how: found.append(_dest(flags[0])))
    return found


def short_options(option: Any) -> argparse.Namespace:
    """pytest's ``config.option`` read back under the short dests that
    :meth:`~conformance.run.config.settings.Settings.from_sources` reads (``device``, not
    ``conformance_device``)."""
    return argparse.Namespace(
        **{dest: getattr(option, DEST_PREFIX + dest, None) for dest in dests()}
    )
