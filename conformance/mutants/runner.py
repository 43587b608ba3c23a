"""``conformance mutants``: run the suite once per mutant and once without, print the kill table.

Each run is its own ``conformance run`` subprocess: a mutant's patches live for the life of the
process that runs the items (and its xdist workers), so they can never leak into another
mutant's run or into the baseline. Mutants with the same selection share one baseline run.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from conformance.commands.suite_run import RunResult, run_suite
from conformance.mutants import CATALOGUE, ENV, Mutant, get
from conformance.mutants.kills import Verdict, judge, table

#: The layout of mutants.json (its own document, not results.json's).
SUMMARY_SCHEMA_VERSION = 1

DEFAULT_OUT = Path("reports/mutants")
DEFAULT_JSON = Path("reports/mutants.json")
#: Every run: the mutant plugin, non-strict known failures (an XPASS is not a kill), quiet.
RUN_ARGS = ("-p", "conformance.mutants.plugin", "-p", "no:cacheprovider", "-q")
NON_STRICT = "--no-strict-known-failures"


def run_selection(
    selection: Sequence[str],
    directory: Path,
    mutant: str | None,
    pytest_args: Sequence[str] = (),
    timeout: float = 900,
) -> RunResult:
    """``conformance run <selection>`` into ``directory``, with ``mutant`` applied (or none)."""
    env = {k: v for k, v in os.environ.items() if k != ENV}
    if mutant is not None:
        env[ENV] = mutant
    return run_suite([*RUN_ARGS, NON_STRICT, *selection, *pytest_args], directory, env, timeout)


def _slug(args: Sequence[str]) -> str:
    text = "-".join(a.lstrip("-").split("=", 1)[-1] for a in args) or "all"
    return re.sub(r"[^A-Za-z0-9_.,-]+", "_", text)[:80]


def _with_default_workers(pytest_args: Sequence[str]) -> list[str]:
    """``-n 0`` unless the caller chose: a mutant's runs are small, and one process per run
    starts fastest (the mutant plugin patches xdist workers alike when ``-n`` is given)."""
    args = list(pytest_args)
    chosen = any(a.startswith(("-n", "--numprocesses")) or a == "no:xdist" for a in args)
    return args if chosen else [*args, "-n", "0"]


def run_mutants(
    mutants: Sequence[Mutant],
    out: Path = DEFAULT_OUT,
    pytest_args: Sequence[str] = (),
    jobs: int = 1,
) -> list[Verdict]:
    """Baselines (one per distinct selection) and mutant runs, then a verdict per mutant."""
    selections = {m.selection for m in mutants}
    baseline_dirs = {s: out / f"baseline-{_slug(s)}" for s in selections}
    tasks: list[tuple[str, tuple[str, ...], Path, str | None]] = [
        (f"baseline {_slug(s)}", s, d, None) for s, d in baseline_dirs.items()
    ]
    tasks += [(m.name, m.selection, out / m.name, m.name) for m in mutants]

    def work(task: tuple[str, tuple[str, ...], Path, str | None]) -> RunResult:
        label, selection, directory, mutant = task
        result = run_selection(selection, directory, mutant, pytest_args)
        state = "no results" if result.error() else f"{len(result.records or [])} items"
        print(f"  ran {label}: {state}", file=sys.stderr, flush=True)
        return result

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        results = dict(zip([t[0] for t in tasks], pool.map(work, tasks), strict=True))
    verdicts = []
    for mutant in mutants:
        base = results[f"baseline {_slug(mutant.selection)}"]
        mutated = results[mutant.name]
        error = f"baseline: {base.error()}" if base.error() else mutated.error()
        if error:
            verdict = Verdict(mutant, run_error=error)
        else:
            verdict = judge(mutant, mutated.records or [], base.records or [])
        verdicts.append(verdict)
    return verdicts


def write_json(verdicts: list[Verdict], path: Path, out: Path) -> None:
    payload = {
        "schema_version": SUMMARY_SCHEMA_VERSION,
        "runs": str(out),
        "killed": sum(v.ok for v in verdicts),
        "total": len(verdicts),
        "mutants": [v.to_json() for v in verdicts],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)


def print_catalogue() -> int:
    """``conformance mutants --list``: one line per mutant."""
    for m in CATALOGUE:
        seed = f"seed {m.seed}" if m.seed else "own"
        print(f"{m.name:22} {seed:7} {m.framework:9} {m.title}")
    return 0


def kill_table(
    only: Sequence[str] | None,
    out: Path,
    json_path: Path,
    show: int,
    pytest_args: Sequence[str],
    jobs: int,
) -> int:
    """Run the mutants (``only`` these, or the whole catalogue), write the kill table to
    ``json_path`` and print it; 0 when every mutant is killed as expected."""
    try:
        mutants = [get(n) for n in only] if only else list(CATALOGUE)
    except KeyError as exc:
        print(f"conformance mutants: {exc}", file=sys.stderr)
        return 2
    print(f"conformance mutants: {len(mutants)} mutants, runs under {out}", file=sys.stderr)
    verdicts = run_mutants(mutants, out, _with_default_workers(pytest_args), jobs)
    write_json(verdicts, json_path, out)
    print(table(verdicts, show))
    print(f"\nkill table: {json_path}")
    return 0 if all(v.ok for v in verdicts) else 1
