"""``conformance bench``: the suite timed (-n 0, -n 2), a bare-loop baseline, and where the time
goes (the measuring is :mod:`conformance.bench.runner`'s). Other arguments select items as for
``conformance run``."""

from __future__ import annotations

from pathlib import Path

from conformance.cli.command import ForwardingCommand


def _run(argv: list[str]) -> int:
    from conformance.bench.runner import TINY, bench
    from conformance.names import SuggestingParser, misspelt_option
    from conformance.run.config.arguments import join_option_values, option_names

    parser = SuggestingParser(
        prog="conformance bench",
        description="Time the suite (-n 0 and -n 2), the bare-loop baseline, and where time goes. "
        "Other arguments select items as for `conformance run`.",
    )
    parser.add_argument("--runs", type=int, default=3, help="runs per configuration (median)")
    parser.add_argument("--workers", default="0,2", help="xdist worker counts (default 0,2)")
    parser.add_argument("--output", default="reports/bench.json")
    parser.add_argument("--tiny", action="store_true", help="a seconds-long selection, one run")
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument(
        "--cold", action="store_true", help="an empty JAX compilation cache for every run"
    )
    ns, selection = parser.parse_known_args(argv)
    own = {s for a in parser._actions for s in a.option_strings if s.startswith("--")}
    misspelt = misspelt_option(selection, own | option_names())
    if misspelt:
        parser.error(misspelt)
    if ns.tiny:
        selection = [*TINY, *selection]
        ns.runs = 1
    selection = join_option_values(selection)
    workers = [int(w) for w in ns.workers.split(",") if w.strip()]
    return bench(
        argv, selection, ns.runs, workers, Path(ns.output), ns.cold, baseline=not ns.no_baseline
    )


COMMAND = ForwardingCommand(
    name="bench",
    help="time the suite (-n 0, -n 2), a bare-loop baseline, and where the time goes",
    run=_run,
)
