"""Saved reproducer scripts reproduce: a real failing run, then each script on its own.

The case fails today for real: a (3,) loc with a (2, 3, 3) covariance and a (5, 1, 3) value
makes NumPyro 0.22 raise ZeroDivisionError and GPyTorch's DenseLinearOperator mis-broadcast.
Each saved script needs only the framework and NumPy, and must exit 1 saying MISMATCH.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from conformance.report.reproducers import file_names

CASE = """\
cases:
  - id: cov-value-batch-larger
    family: MultivariateNormal
    parametrization: covariance_matrix
    params:
      loc: {generator: normal, shape: [3], seed: 61}
      covariance_matrix: {generator: spd, shape: [2, 3, 3], seed: 62}
    value: {generator: normal, shape: [5, 1, 3], seed: 63}
"""


def test_each_saved_reproducer_prints_the_mismatch(tmp_path: Path) -> None:
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "mvn.yaml").write_text(CASE)
    results = tmp_path / "out" / "results.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONFORMANCE_")}
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "conformance.cli",
            "run",
            "--cases",
            str(cases),
            "--framework",
            "numpyro,gpytorch.dense",
            "--dtype",
            "float32",
            "--check",
            "shapes,log_prob",
            "--no-builtin-known-failures",  # these are the suite's own known failures
            "--results",
            str(results),
            "-q",
            "-p",
            "no:cacheprovider",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    records = json.loads(results.read_text())["records"]
    failed = [r for r in records if r["outcome"] == "failed" and r.get("reproducer")]
    assert {r["framework"] for r in failed} == {"numpyro", "gpytorch.dense"}, run.stdout

    names = file_names([r["nodeid"] for r in failed])
    saved = sorted(p.name for p in (results.parent / "reproducers").glob("*.py"))
    assert saved == sorted(names.values())
    for rec in failed:
        script = results.parent / "reproducers" / names[rec["nodeid"]]
        proc = subprocess.run(
            [sys.executable, str(script)],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
        )
        shown = f"{script.name}:\n{proc.stdout}\n{proc.stderr}"
        assert proc.returncode == 1, shown
        assert "MISMATCH" in proc.stdout, shown
        # The same exception the suite recorded, e.g. NumPyro's ZeroDivisionError.
        exception = re.search(r"raised (\w+(?:Error|Exception)):", rec["message"]).group(1)
        assert f"raised {exception}:" in proc.stdout, shown
        assert f"import {rec['package']}" in script.read_text()
