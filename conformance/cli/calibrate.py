"""``conformance calibrate``: the sampling items under N other seeds, and the false-failure rate
observed beside the one stated (the runs and the tally are
:mod:`conformance.commands.calibrate`'s). Arguments it does not know go to ``conformance run``."""

from __future__ import annotations

import argparse
from pathlib import Path

from conformance.cli.command import ForwardingCommand


def _run(argv: list[str]) -> int:
    from conformance.commands.calibrate import DEFAULT_JSON, DEFAULT_OUT, calibrate

    parser = argparse.ArgumentParser(
        prog="conformance calibrate",
        description="Rerun the sampling items (sample_shapes, sample_fit, rsample_grad unless "
        "--check says otherwise) under N other seeds and report the false-failure rate "
        "observed beside the one the items state. Other arguments go to `conformance run`.",
    )
    parser.add_argument("--seeds", type=int, default=20, help="how many seeds (default 20)")
    parser.add_argument("--first", type=int, default=1, help="the first seed (default 1)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="run dirs")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, help="summary")
    ns, pytest_args = parser.parse_known_args(list(argv))
    if ns.seeds < 1:
        parser.error("--seeds must be at least 1")
    return calibrate(ns.seeds, ns.first, ns.out, ns.json, pytest_args)


COMMAND = ForwardingCommand(
    name="calibrate",
    help="rerun the sampling items under N other seeds; the false-failure rate observed "
    "beside the one stated",
    run=_run,
)
