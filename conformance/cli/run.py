"""``conformance run [pytest args]``: the suite in pytest, and its exit status.

The built-in cases run unless ``--cases`` or paths are given; reports/results.json is written.
Exit codes: 0 all good, 1 mismatches, 2 usage or case-file errors, 130 interrupted. Items run
in one xdist worker unless the arguments say otherwise, so a framework that crashes costs its
item and not the run.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

from conformance.cli.command import (
    EXIT_INTERRUPTED,
    EXIT_MISMATCH,
    EXIT_OK,
    EXIT_USAGE,
    ForwardingCommand,
)
from conformance.cli.pytest_front import command_help, option_problem, pytest_args_of, wants_help
from conformance.kinds import Kind
from conformance.records.results import read_records
from conformance.run.config.arguments import builtin_id_path


def run(pytest_args: list[str]) -> int:
    import pytest

    if wants_help(pytest_args):
        sys.stdout.write(command_help("run"))
        return EXIT_OK
    problem = option_problem(pytest_args)
    if problem:
        print(f"conformance run: error: {problem}", file=sys.stderr)
        return EXIT_USAGE
    args = [builtin_id_path(a) for a in pytest_args_of(pytest_args)]
    # This process imported the package before pytest could register it for rewriting.
    args = ["-W", "ignore::pytest.PytestAssertRewriteWarning", *args]
    if os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        args = ["-p", "conformance.run.plugin", *args]
    if os.environ.get("CONFORMANCE_MUTANT") and "conformance.mutants.plugin" not in args:
        args = ["-p", "conformance.mutants.plugin", *args]  # CONFORMANCE_MUTANT=name: apply it
    from conformance.run.config.options import ShortSpelling

    code = int(pytest.main(with_worker(args), plugins=[ShortSpelling()]))
    return _exit_code(code, args)


#: Arguments after which the run keeps its process layout: xdist already configured, or
#: something a worker cannot do (a debugger) or need not (collection only, help).
_AS_GIVEN = {"--pdb", "--trace", "--co", "--collect-only", "-h", "--help", "--version", "-d"}
_XDIST_OPTIONS = {"-n", "--numprocesses", "--dist", "--tx", "--maxprocesses"}
#: Workers xdist may replace before it gives up on the rest of the run. Its default (4 per
#: worker) guards against a worker that dies while collecting; here each crash is one item's,
#: and a framework bug that segfaults in twenty items must not cost the results of the others.
MAX_WORKER_RESTARTS = 100


def _leaves_as_given(arg: str) -> bool:
    if arg in _AS_GIVEN or arg.split("=", 1)[0] in _XDIST_OPTIONS:
        return True
    return arg.startswith("-n") and (arg[2:].isdigit() or arg[2:] in ("auto", "logical"))


def with_worker(args: list[str]) -> list[str]:
    """``-n 1`` unless the arguments choose otherwise: a framework that segfaults, aborts, hangs
    in C or exhausts memory then costs its item (recorded as ``crash``/``timeout``), and xdist
    starts a new worker for the rest; in-process (``-n 0``), it would end the whole run."""
    import importlib.util

    if importlib.util.find_spec("xdist") is None:
        return args
    given = [*args, *shlex.split(os.environ.get("PYTEST_ADDOPTS", ""))]
    pairs = list(zip(given, [*given[1:], None], strict=True))
    if any(a == "-pno:xdist" or (a == "-p" and b == "no:xdist") for a, b in pairs):
        return args
    out = list(args)
    if not any(a.split("=", 1)[0] == "--max-worker-restart" for a in given):
        out.append(f"--max-worker-restart={MAX_WORKER_RESTARTS}")
    if not any(_leaves_as_given(a) for a in given):
        out += ["-n", "1"]
    return out


def _results_path(args: list[str]) -> Path:
    """Where the run wrote results.json (``args`` are pytest's: joined and prefixed)."""
    for a in args:
        if a.startswith("--conformance-results="):
            return Path(a.split("=", 1)[1])
    from conformance.run.config.settings import DEFAULT_RESULTS

    return Path(os.environ.get("CONFORMANCE_RESULTS") or DEFAULT_RESULTS)


def _exit_code(code: int, args: list[str]) -> int:
    if code == 0:
        return EXIT_OK
    if code in (4, 5):  # usage error, or nothing collected
        return EXIT_USAGE
    if code == 2:  # pytest's INTERRUPTED: results.json is complete and says "interrupted"
        return EXIT_INTERRUPTED
    if code == 1:
        path = _results_path(args)
        try:
            records = read_records(path)
        except (OSError, ValueError, KeyError, TypeError):
            return EXIT_MISMATCH
        if any(r.kind == Kind.CASE_ERROR for r in records):
            return EXIT_USAGE
        return EXIT_MISMATCH
    return code


COMMAND = ForwardingCommand(
    name="run",
    help="run the suite; other arguments go to pytest",
    description="Run the conformance suite. Every other argument is passed to pytest "
    "(--framework, --family, --check, --dtype, --device, --cases, -n auto, -k …).",
    run=run,
)
