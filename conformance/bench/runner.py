"""Runs the suite and the bare-loop baseline, and reports medians against the issue's targets.

Every measurement is a fresh subprocess, as a user would run it: ``conformance run -n W`` for
each worker count, ``conformance report`` for the reporting step, a bare ``import`` of the
frameworks, and :mod:`conformance.bench.baseline`. Phase totals and peak RSS come from the
``timing`` section each run writes into its results.json.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from conformance.adapters import BUILTIN, imported_modules

#: A seconds-long selection: Normal in every built-in framework that binds families by its
#: naming convention (GPyTorch binds only what the registry lists, and no Normal).
TINY = [
    "--family=Normal",
    *(f"--framework={a.name}" for a in BUILTIN if a.family_module is not None),
    "--dtype=float64",
    "--check=log_prob",
    "--check=grad",
    "--variants=off",
    "-k",
    "not mixture",
]
#: Upper bounds, whatever the selection.
TARGETS = {
    "overhead_ratio": ("suite time (-n 0) / bare-loop time", 1.5),
    "harness_ratio": ("suite time / its own framework calls (-n 0)", 1.5),
    "collection_s_per_5000": ("collection per 5,000 items (whole suite)", 3.0),
    "oracle_share": ("oracle share of item time", 0.10),
    "peak_rss_mb": ("peak RSS of any worker (MB)", 3072.0),
}


def run_targets(selection: list[str], cold: bool) -> dict[str, tuple[str, float, bool]]:
    """The project's targets for the selections it sets them for (``-n 2`` on 2 cores): the
    full default run warm (at most 400 s, at least 150 items/s) and ``--quick`` (at most 60 s
    warm, 150 s cold). Key -> (what, target, whether the target is a lower bound)."""
    if not selection and not cold:
        return {
            "wall_s_n2": ("wall time of the full default run, -n 2", 400.0, False),
            "items_per_s_n2": ("items/s of the full default run, -n 2", 150.0, True),
        }
    if selection == ["--quick"]:
        limit = 150.0 if cold else 60.0
        return {
            "wall_s_n2": (f"wall time of --quick, -n 2{', cold' if cold else ''}", limit, False)
        }
    return {}


def _timed(cmd: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    return time.perf_counter() - start, proc


def _phases(timing: dict[str, Any]) -> tuple[dict[str, float], dict[str, float], list[float]]:
    """Exclusive phases and included figures summed over the processes that ran items."""
    procs = list(timing.get("workers", {}).values()) or [timing["controller"]]
    phases: dict[str, float] = {}
    included: dict[str, float] = {}
    for proc in procs:
        for k, v in proc["phases"].items():
            phases[k] = phases.get(k, 0.0) + v
        for k, v in proc["included"].items():
            included[k] = included.get(k, 0.0) + v
    rss = [p["peak_rss_mb"] for p in procs]
    return phases, included, rss


def _collection_s(timing: dict[str, Any]) -> float:
    """The controller collects alone with -n 0; under xdist every worker collects in parallel."""
    workers = [w["phases"].get("collection", 0.0) for w in timing.get("workers", {}).values()]
    return max(workers) if workers else timing["controller"]["phases"].get("collection", 0.0)


def measure_run(workers: int, selection: list[str], env: dict[str, str], tmp: Path) -> dict:
    results = tmp / f"results-n{workers}.json"
    results.unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "conformance.cli", "run", "-n", str(workers)]
    cmd += [f"--results={results}", "-q", "-p", "no:cacheprovider", "--junitxml=", *selection]
    wall, proc = _timed(cmd, env)
    if not results.exists():
        raise RuntimeError(f"no results from {' '.join(cmd)}:\n{proc.stdout[-2000:]}")
    data = json.loads(results.read_text())
    phases, included, rss = _phases(data["run"]["timing"])
    report_s, _ = _timed(
        [
            sys.executable,
            "-m",
            "conformance.cli",
            "report",
            str(results),
            "-o",
            str(tmp / "x.html"),
        ],
        env,
    )
    items = len(data["records"])
    item_time = sum(phases.values()) - phases.get("collection", 0.0)
    events: dict[str, int] = {}
    timing = data["run"]["timing"]
    for process in [timing["controller"], *timing.get("workers", {}).values()]:
        for name, count in process.get("counts", {}).items():
            events[name] = events.get(name, 0) + count
    return {
        "workers": workers,
        "exit_code": proc.returncode,
        "wall_s": round(wall, 3),
        "items": items,
        "items_per_s": round(items / wall, 1) if wall else None,
        "counts": data["run"]["counts"],
        "collection_s": round(_collection_s(data["run"]["timing"]), 3),
        "phases_s": {k: round(v, 3) for k, v in sorted(phases.items())},
        "included_s": {k: round(v, 3) for k, v in sorted(included.items())},
        "oracle_share": round(phases.get("oracle", 0.0) / item_time, 4) if item_time else None,
        "memory_releases": events.get("memory_releases", 0),
        # Summed over processes: memory releases, executables loaded from the store and written.
        "events": dict(sorted(events.items())),
        "peak_rss_mb": max(rss),
        "report_s": round(report_s, 3),
    }


def measure_collection(selection: list[str], env: dict[str, str], tmp: Path) -> dict:
    """Collection of every item the case roots hold, not of the selection.

    A selection collects (parses, expands, derives variants for) far more than it keeps, so its
    collection time over its own item count says nothing about the target; the whole suite's
    does.
    """
    roots = [a for a in selection if a.startswith("--cases")]
    cmd = [sys.executable, "-m", "conformance.cli", "run", "--collect-only", "-q"]
    cmd += ["-p", "no:cacheprovider", "--junitxml=", "--no-results", *roots]
    wall, proc = _timed(cmd, env)
    # A collect-only run leaves results.json alone; pytest's summary line has both figures.
    found = re.search(r"(\d+) tests? collected in ([\d.]+)s", proc.stdout)
    if found is None:
        raise RuntimeError(f"no collection summary from {' '.join(cmd)}:\n{proc.stdout[-2000:]}")
    return {
        "items": int(found.group(1)),
        "collection_s": round(float(found.group(2)), 3),
        "wall_s": round(wall, 3),
    }


def _fresh_caches(directory: Path) -> dict[str, str]:
    """Variables giving every framework an empty compilation cache under ``directory``."""
    return {k: v for a in BUILTIN for k, v in a.fresh_cache_environment(str(directory)).items()}


def measure_imports(env: dict[str, str]) -> float:
    code = f"import {', '.join(imported_modules())}"
    wall, _ = _timed([sys.executable, "-c", code], env)
    return round(wall, 3)


def measure_baseline(selection: list[str], env: dict[str, str], tmp: Path) -> dict:
    out = tmp / "baseline.json"
    cmd = [sys.executable, "-m", "conformance.bench.baseline", f"--output={out}"]
    cmd += ["--cases=" + str(_cases_root()), *selection] if not _has_cases(selection) else selection
    wall, proc = _timed(cmd, env)
    if not out.exists():
        raise RuntimeError(f"baseline failed:\n{proc.stderr[-2000:]}")
    return {**json.loads(out.read_text()), "wall_s": round(wall, 3)}


def _has_cases(selection: list[str]) -> bool:
    return any(a.startswith("--cases") for a in selection)


def _cases_root() -> Path:
    from conformance.cases.builtin import builtin_cases

    return builtin_cases()


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 3)


def summarise(
    runs: list[dict],
    baselines: list[dict],
    imports: list[float],
    collections: list[dict],
    targets: dict[str, tuple[str, float, bool]] | None = None,
) -> dict:
    """Medians per worker count, and each target the measurements reach (``targets``: those
    of the selection, see :func:`run_targets`, besides :data:`TARGETS`)."""
    by_workers: dict[int, list[dict]] = {}
    for r in runs:
        by_workers.setdefault(r["workers"], []).append(r)
    summary: dict[str, Any] = {"imports_s": _median(imports), "by_workers": {}}
    for w, rs in sorted(by_workers.items()):
        phase_names = sorted({k for r in rs for k in r["phases_s"]})
        included = sorted({k for r in rs for k in r["included_s"]})
        summary["by_workers"][str(w)] = {
            "runs": len(rs),
            "items": rs[0]["items"],
            "wall_s_median": _median([r["wall_s"] for r in rs]),
            "items_per_s_median": _median([r["items_per_s"] for r in rs]),
            "collection_s_median": _median([r["collection_s"] for r in rs]),
            "phases_s_median": {
                k: _median([r["phases_s"].get(k, 0) for r in rs]) for k in phase_names
            },
            "included_s_median": {
                k: _median([r["included_s"].get(k, 0) for r in rs]) for k in included
            },
            "oracle_share_median": _median([r["oracle_share"] or 0 for r in rs]),
            "peak_rss_mb_max": max(r["peak_rss_mb"] for r in rs),
            "memory_releases_median": _median([r["memory_releases"] for r in rs]),
            "report_s_median": _median([r["report_s"] for r in rs]),
        }
    if collections:
        summary["collection"] = {
            "items": collections[0]["items"],
            "collection_s_median": _median([c["collection_s"] for c in collections]),
            "runs": len(collections),
        }
    if baselines:
        summary["baseline"] = {
            "bare_s_median": _median([b["bare_s"] for b in baselines]),
            "evaluations_s_median": _median([b["evaluations_s"] for b in baselines]),
            "items": baselines[0]["items"],
        }
    measured = {}
    n0, n2 = summary["by_workers"].get("0"), summary["by_workers"].get("2")
    if n2:
        measured["wall_s_n2"] = n2["wall_s_median"]
        measured["items_per_s_n2"] = n2["items_per_s_median"]
    if n0 and baselines:
        measured["overhead_ratio"] = round(
            n0["wall_s_median"] / summary["baseline"]["bare_s_median"], 3
        )
    if n0:
        # The bare loop makes one log_prob and one gradient call per item, but a vmap, jit,
        # scan or broadcast item makes several: the ratio above also counts that extra
        # framework work. This one divides by the framework time the suite itself spent.
        inside = n0["phases_s_median"].get("framework", 0) + n0["phases_s_median"].get("imports", 0)
        if inside:
            measured["harness_ratio"] = round(n0["wall_s_median"] / inside, 3)
    if collections:
        whole = summary["collection"]
        measured["collection_s_per_5000"] = round(
            whole["collection_s_median"] * 5000 / max(whole["items"], 1), 3
        )
    any_run = n0 or n2
    if any_run:
        measured["oracle_share"] = any_run["oracle_share_median"]
        measured["peak_rss_mb"] = max(s["peak_rss_mb_max"] for s in summary["by_workers"].values())
    bounds = {k: (what, target, False) for k, (what, target) in TARGETS.items()}
    bounds.update(targets or {})
    summary["targets"] = {
        key: {
            "what": what,
            "target": target,
            "measured": measured[key],
            "met": measured[key] >= target if at_least else measured[key] <= target,
        }
        for key, (what, target, at_least) in bounds.items()
        if key in measured
    }
    return summary


def table(summary: dict) -> str:
    lines = [f"framework imports (fresh interpreter): {summary['imports_s']} s"]
    for w, s in summary["by_workers"].items():
        lines.append(
            f"-n {w}: {s['items']} items, wall {s['wall_s_median']} s (median of {s['runs']}), "
            f"{s['items_per_s_median']} items/s, collection {s['collection_s_median']} s, "
            f"report {s['report_s_median']} s, peak RSS {s['peak_rss_mb_max']} MB "
            f"({s['memory_releases_median']:g} memory releases)"
        )
        phases = ", ".join(f"{k} {v}" for k, v in s["phases_s_median"].items())
        lines.append(f"    time by phase (s, summed over workers): {phases}")
        if s["included_s_median"]:
            inc = ", ".join(f"{k} {v}" for k, v in s["included_s_median"].items())
            lines.append(f"    of which inside the frameworks (s): {inc}")
    if "collection" in summary:
        c = summary["collection"]
        lines.append(
            f"collection of the whole suite: {c['items']} items in "
            f"{c['collection_s_median']} s (median of {c['runs']})"
        )
    if "baseline" in summary:
        b = summary["baseline"]
        lines.append(
            f"bare loop: {b['items']} items, {b['bare_s_median']} s "
            f"(imports + {b['evaluations_s_median']} s of construct/log_prob/grad)"
        )
    lines.append("")
    lines.append(f"{'target':<45}{'measured':>12}{'target':>10}  met")
    for t in summary["targets"].values():
        lines.append(
            f"{t['what']:<45}{t['measured']:>12}{t['target']:>10}  {'yes' if t['met'] else 'NO'}"
        )
    return "\n".join(lines)


def bench(
    given: list[str],
    selection: list[str],
    repeats: int,
    workers: list[int],
    output: Path,
    cold: bool,
    baseline: bool,
) -> int:
    """Time ``repeats`` runs of ``selection`` per worker count (and the bare loop unless not
    ``baseline``), write the JSON to ``output`` and print the table. ``given``: the command's
    arguments as typed, recorded in the JSON."""
    tmp = Path(tempfile.mkdtemp(prefix="conformance-bench-"))
    env = {**os.environ}
    runs, baselines, imports, collections = [], [], [], []
    try:
        for i in range(repeats):
            imports.append(measure_imports(env))
            collections.append(measure_collection(selection, env, tmp))
            for w in workers:
                if cold:
                    env.update(_fresh_caches(tmp / f"cache-{i}-{w}"))
                runs.append(measure_run(w, selection, env, tmp))
                print(f"run {i + 1}/{repeats} -n {w}: {runs[-1]['wall_s']} s", file=sys.stderr)
            if baseline:
                if cold:
                    env.update(_fresh_caches(tmp / f"cache-{i}-bare"))
                baselines.append(measure_baseline(selection, env, tmp))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    summary = summarise(runs, baselines, imports, collections, run_targets(selection, cold=cold))
    payload = {
        "command": " ".join(["conformance", "bench", *given]),
        "selection": selection,
        "compilation_cache": "cold (empty per run)" if cold else "persistent",
        "cpu_count": os.cpu_count(),
        "summary": summary,
        "runs": runs,
        "baselines": baselines,
        "collections": collections,
    }
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    print(table(summary))
    print(f"\nwritten: {output}")
    return 0
