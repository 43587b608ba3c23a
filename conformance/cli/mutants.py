"""``conformance mutants``: catalogued framework bugs injected at run time, and the kill table
(the runs are :mod:`conformance.mutants.runner`'s). Arguments it does not know go to pytest."""

from __future__ import annotations

import argparse
from pathlib import Path

from conformance.cli.command import ForwardingCommand


def parser() -> argparse.ArgumentParser:
    from conformance.mutants.runner import DEFAULT_JSON, DEFAULT_OUT
    from conformance.names import SuggestingParser

    p = SuggestingParser(
        prog="conformance mutants",
        description="Inject each catalogued framework bug (a mutant) at run time, run the "
        "suite restricted to what it touches, and print which items it made fail. Exit 0 when "
        "every mutant is killed as expected, 1 otherwise. Other arguments go to pytest (-n 2).",
    )
    p.add_argument("--only", action="append", metavar="NAME", help="run these mutants only")
    p.add_argument("--list", action="store_true", help="list the catalogue and exit")
    p.add_argument("--jobs", type=int, default=1, help="runs in parallel (default 1)")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"run dirs ({DEFAULT_OUT})")
    p.add_argument("--json", type=Path, default=DEFAULT_JSON, help=f"summary ({DEFAULT_JSON})")
    p.add_argument("--show", type=int, default=8, help="killed items shown per mutant (0: all)")
    return p


def own_options(p: argparse.ArgumentParser) -> set[str]:
    return {s for a in p._actions for s in a.option_strings if s.startswith("--")}


def _run(argv: list[str]) -> int:
    from conformance.mutants import runner
    from conformance.names import misspelt_option
    from conformance.run.config.arguments import option_names

    p = parser()
    ns, pytest_args = p.parse_known_args(list(argv))
    misspelt = misspelt_option(pytest_args, own_options(p) | option_names())
    if misspelt:
        p.error(misspelt)
    if ns.list:
        return runner.print_catalogue()
    return runner.kill_table(ns.only, ns.out, ns.json, ns.show, pytest_args, ns.jobs)


COMMAND = ForwardingCommand(
    name="mutants",
    help="inject catalogued framework bugs at run time and print the kill table",
    run=_run,
)
