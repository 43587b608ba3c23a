"""The report's error/tolerance charts held to the items' outcomes, on a real run.

A gradient part an adapter declares not comparable (GPyTorch's iterative and Kronecker paths
give no gradient for some inputs) once counted as err/tol = inf: 276 passed items sat in the
charts' "over tolerance" bin. What a chart counts over tolerance must be failures, and every
passed item must sit at or below it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conformance.records.record import Record
from conformance.report.svg import histograms
from conformance.report.values import as_float

FRAMEWORKS = ["torch", "gpytorch.kronecker", "gpytorch.iterative"]
PASSING = ("passed", "xpassed")


def _ratio(record: dict) -> float | None:
    metrics = record.get("metrics") if isinstance(record.get("metrics"), dict) else {}
    return as_float(metrics.get("max_err_over_tol"))


def test_charts_count_over_tolerance_only_what_failed(tmp_path: Path) -> None:
    results = tmp_path / "results.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "conformance.cli",
            "run",
            "--family=MultivariateNormal,MultitaskMultivariateNormal",
            f"--framework={','.join(FRAMEWORKS)}",
            "--check=log_prob,grad,broadcast",
            "--dtype=float64",
            "-k",
            "kronecker or cov-diagonal",
            f"--results={results}",
            "-p",
            "no:cacheprovider",
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode in (0, 1), proc.stdout[-3000:] + proc.stderr[-3000:]
    records = json.loads(results.read_text())["records"]
    partial = [
        r
        for r in records
        if r["outcome"] in PASSING and '"compared": 0' in json.dumps(r.get("metrics"))
    ]
    assert partial, "the selection no longer has items with a part not compared"

    for record in records:
        ratio = _ratio(record)
        if record["outcome"] in PASSING and ratio is not None:
            assert ratio <= 1, record["nodeid"]

    charts = {
        h.framework: h for h in histograms([Record.from_json(r) for r in records], FRAMEWORKS)
    }
    assert set(charts) == set(FRAMEWORKS)
    for framework, chart in charts.items():
        mine = [r for r in records if r["framework"] == framework and r["outcome"] != "skipped"]
        ratios = [abs(x) for r in mine if (x := _ratio(r)) is not None]
        over = [r for r in mine if (x := _ratio(r)) is not None and not abs(x) <= 1]
        assert chart.total == len(ratios) and chart.total > 0
        assert chart.over == len(over)
        assert all(r["outcome"] not in PASSING for r in over)
        assert sum(bar.count for bar in chart.bars) == chart.total
