"""``conformance calibrate``: the sampling items under N other seeds, and the false-failure rate
observed beside the one stated.

A sampling item's draws depend on its seed alone (``--sample-seed`` moves every item's), so a
sampler that draws from the law fails ``sample_fit`` under another seed with the probability the
item states (``item_false_failure_probability``), and fails ``sample_shapes`` or
``rsample_grad`` never. Each seed is its own ``conformance run --sample-seed=K`` subprocess, into
``DIR/seed-K/results.json``; the tally prints, per seed, the outcomes, and over all seeds the
item runs, the failures outside the known-failure entries (each named), the failures the stated
probabilities expect, and the largest statistic of the passing runs (its share of the
threshold). Exit 0 when no seed failed, 1 when one did, 2 when a seed's run gave no results.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from conformance.check_names import CheckName
from conformance.commands.suite_run import run_suite
from conformance.records.record import Record

DEFAULT_OUT = Path("reports/calibration")
DEFAULT_JSON = Path("reports/calibration.json")
#: The checks whose items draw, run where the caller names no --check.
SAMPLING_CHECKS = (CheckName.SAMPLE_SHAPES, CheckName.SAMPLE_FIT, CheckName.RSAMPLE_GRAD)
OUTCOMES = ("passed", "skipped", "xfailed", "xpassed", "failed")


@dataclass
class Tally:
    """What the seeds' records say together."""

    per_seed: dict[int, dict[str, int]] = field(default_factory=dict)
    runs_by_check: Counter = field(default_factory=Counter)
    failures: list[dict] = field(default_factory=list)
    expected_failures: float = 0.0
    worst: dict | None = None

    def add(self, seed: int, records: list[Record]) -> None:
        self.per_seed[seed] = {o: 0 for o in OUTCOMES}
        for record in records:
            outcome = record.outcome
            self.per_seed[seed][outcome] = self.per_seed[seed].get(outcome, 0) + 1
            if outcome not in ("passed", "failed"):
                continue
            check = record.static.check or ""
            self.runs_by_check[check] += 1
            metrics = record.metrics
            # An rsample_grad item judged draw by draw and in expectation keeps the latter's
            # statistic apart (its metrics' ``in_expectation``).
            parts = [metrics, metrics.get("in_expectation") or {}]
            self.expected_failures += sum(
                float(part.get("item_false_failure_probability", 0.0)) for part in parts
            )
            if outcome == "failed":
                message = record.message.splitlines()
                self.failures.append(
                    {
                        "seed": seed,
                        "nodeid": record.nodeid,
                        "message": message[0] if message else "",
                    }
                )
            found = [p["max_err_over_tol"] for p in parts if p.get("max_err_over_tol") is not None]
            ratio = max(float(v) for v in found) if found else None
            worse = ratio is not None and (self.worst is None or ratio > self.worst["ratio"])
            if outcome == "passed" and worse:
                self.worst = {"seed": seed, "nodeid": record.nodeid, "ratio": ratio}

    def summary(self) -> dict:
        runs = sum(self.runs_by_check.values())
        return {
            "seeds": sorted(self.per_seed),
            "per_seed": {str(k): v for k, v in sorted(self.per_seed.items())},
            "item_runs": runs,
            "item_runs_by_check": dict(sorted(self.runs_by_check.items())),
            "failures": self.failures,
            "observed_failure_rate": len(self.failures) / runs if runs else 0.0,
            "expected_failures": self.expected_failures,
            "worst_passing": self.worst,
        }


def _with_sampling_checks(args: Sequence[str]) -> list[str]:
    """The caller's pytest arguments, with the sampling checks where they name no --check."""
    named = any(a == "--check" or a.startswith("--check=") for a in args)
    return list(args) if named else [*args, f"--check={','.join(SAMPLING_CHECKS)}"]


def run_seed(seed: int, out: Path, pytest_args: Sequence[str]) -> list[Record] | None:
    """``conformance run --sample-seed=seed`` into ``out/seed-<seed>``; its records, or None."""
    args = [f"--sample-seed={seed}", "-q", *pytest_args]
    return run_suite(args, out / f"seed-{seed}").records


def report(tally: Tally) -> str:
    """The tally as text: one line per seed, then the totals and each failure."""
    s = tally.summary()
    lines = ["seed  " + "  ".join(f"{o:>8}" for o in OUTCOMES)]
    for seed, counts in sorted(tally.per_seed.items()):
        lines.append(f"{seed:>4}  " + "  ".join(f"{counts.get(o, 0):>8}" for o in OUTCOMES))
    by_check = ", ".join(f"{k} {v}" for k, v in s["item_runs_by_check"].items())
    lines += [
        "",
        f"{s['item_runs']} item runs judged over {len(s['seeds'])} seeds ({by_check})",
        f"failures outside the known-failure entries: {len(s['failures'])} "
        f"(observed rate {s['observed_failure_rate']:.3g} per item run; the stated "
        f"probabilities expect {s['expected_failures']:.3g} in all)",
    ]
    if s["worst_passing"]:
        w = s["worst_passing"]
        lines.append(
            f"largest statistic of a passing run: {w['ratio']:.3g} of its threshold "
            f"({w['nodeid']}, seed {w['seed']})"
        )
    lines += [f"  seed {f['seed']}: {f['nodeid']}: {f['message']}" for f in s["failures"]]
    return "\n".join(lines)


def calibrate(
    seeds: int, first: int, out: Path, json_path: Path, pytest_args: Sequence[str]
) -> int:
    """Run seeds ``first`` .. ``first + seeds - 1`` into ``out``, write the summary to
    ``json_path`` and print the tally; the exit status the module docstring gives."""
    args = _with_sampling_checks(pytest_args)
    tally, missing = Tally(), []
    for seed in range(first, first + seeds):
        records = run_seed(seed, out, args)
        if records is None:
            missing.append(seed)
            print(f"  seed {seed}: no results (see {out}/seed-{seed}/run.log)", file=sys.stderr)
            continue
        tally.add(seed, records)
        print(f"  ran seed {seed}: {len(records)} items", file=sys.stderr, flush=True)
    summary = {**tally.summary(), "seeds_without_results": missing, "arguments": args}
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print(report(tally))
    print(f"\ncalibration summary: {json_path}")
    if missing:
        return 2
    return 1 if tally.failures else 0
