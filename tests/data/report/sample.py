"""results.json payloads for the report tests: a small hand-made run and a synthetic big one.

The small run has one item of every shape a report must cope with: passes, value / shape /
gradient / exception failures, xfailed, xpassed, skipped, a case error with almost no fields,
and a record whose case id, message, YAML and reproducer are hostile HTML. The synthetic run is
a realistic mix at any size (about 3% failures), for the size and load-time bounds.

Run as a script to write the synthetic run: ``python tests/data/report/sample.py 10000 out.json``.
"""

from __future__ import annotations

import copy
import json
import random
import sys
from typing import Any


def _counts(records: list[dict]) -> dict[str, int]:
    from conformance.records.record import Record
    from conformance.records.results import counts

    return counts(Record.from_json(r) for r in records)


HOSTILE_ID = "<script>window.__pwned = 1</script><img src=x onerror=window.__pwned=2>"
HOSTILE_MESSAGE = "boom </script><script>window.__pwned = 3</script> <!-- & \u2028 --> <b>bold</b>"

RUN = {
    "schema_version": 1,
    "conformance_version": "0.1.0",
    "frameworks": {
        "torch": "2.13.0+cpu",
        "jax": "0.10.2",
        "numpyro": "0.22.0",
        "gpytorch": "1.15.2",
    },
    "python": "3.11.7",
    "platform": "Linux-6.1-x86_64-with-glibc2.36",
    "machine": "x86_64",
    "device": "cpu",
    "started": "2026-01-02T03:04:05+00:00",
    "duration": 12.5,
    "command": "/venv/bin/pytest -n 2 --framework numpyro",
    "args": ["-n", "2"],
    "workers": 2,
    "env": {"CONFORMANCE_DTYPES": "float32,float64"},
    "case_roots": ["/work/cases"],
    "interrupted": False,
    "exitstatus": 1,
    # No item stands for these: the matrix shows them as "not offered".
    "not_offered": {
        "gpytorch.dense": [
            {
                "family": "Normal",
                "parametrization": "loc_scale",
                "reason": "gpytorch.dense has no Normal",
            }
        ],
    },
}

SOURCE = """  - id: {case}
    family: MultivariateNormal
    params:
      loc: {{generator: normal, shape: [3], seed: 61}}
      covariance_matrix: {{generator: spd, shape: [2, 3, 3], seed: 62}}
    value: {{generator: normal, shape: [5, 1, 3], seed: 63}}
"""

REPRODUCER = '''"""Reproducer for cases/mvn.yaml::{case} [{check}]"""
import sys

import numpy as np
import jax.numpy as jnp
import numpyro.distributions

loc = jnp.asarray(np.array({loc!r}, dtype=np.float32))
value = jnp.asarray(np.array({value!r}, dtype=np.float32))
try:
    dist = numpyro.distributions.MultivariateNormal(loc=loc, covariance_matrix=jnp.eye(3))
    actual = np.asarray(dist.log_prob(value))
    print("expected", EXPECTED, "actual", actual)
except Exception as exc:
    print(f"MISMATCH: raised {{type(exc).__name__}}: {{exc}}")
    sys.exit(1)
'''


def record(
    case: str,
    framework: str,
    dtype: str,
    check: str,
    outcome: str = "passed",
    family: str = "MultivariateNormal",
    file: str = "cases/mvn.yaml",
    **extra: Any,
) -> dict:
    package = framework.split(".")[0]
    rec = {
        "nodeid": f"{file}::{case}[{framework}-{dtype}-{check}]",
        "case": case,
        "file": file,
        "line": 3,
        "family": family,
        "parametrization": "covariance_matrix",
        "framework": framework,
        "package": package,
        "framework_version": RUN["frameworks"].get(package, "1.0"),
        "dtype": dtype,
        "device": "cpu",
        "check": check,
        "outcome": outcome,
        "kind": None,
        "message": "",
        "metrics": {},
        "duration": 0.01,
    }
    rec.update(extra)
    return rec


def _passed_metrics(ratio: float) -> dict:
    return {
        "compared": 10,
        "max_abs_err": ratio * 1e-5,
        "max_rel_err": ratio * 1e-6,
        "max_err_over_tol": ratio,
        "worst_index": [1, 0],
        "expected_at_worst": -4.5,
        "actual_at_worst": -4.5 + ratio * 1e-5,
        "tolerance_at_worst": 1e-5,
        "mismatched": 0,
    }


def _failure_context(case: str, check: str) -> dict:
    loc = [0.5, -1.0, 1.0]
    value = [[[0.7, 2.3, -1.6]], [[-0.1, 1.2, 1.1]]]
    return {
        "source": SOURCE.format(case=case),
        "inputs": {
            "loc": {"shape": [3], "dtype": "float32", "values": loc},
            "covariance_matrix": {"shape": [2, 3, 3], "dtype": "float32", "values": None},
            "value": {"shape": [2, 1, 3], "dtype": "float32", "values": value},
        },
        "expected_shapes": {"batch_shape": [2], "event_shape": [3], "log_prob_shape": [2, 2]},
        "reproducer": REPRODUCER.format(case=case, check=check, loc=loc, value=value),
    }


def _message(check: str, case: str, framework: str, detail: str) -> str:
    return (
        f"{check} mismatch: cases/mvn.yaml::{case}\n  framework: {framework}, float32, cpu\n"
        f"  shapes: loc (3,), value (2, 1, 3) → log_prob (2, 2)\n  {detail}"
    )


def sample_results() -> dict:
    """A small run with one record of every kind the report must show."""
    value_fail = record(
        "batched",
        "numpyro",
        "float32",
        "log_prob",
        "failed",
        kind="value",
        message=_message(
            "log_prob",
            "batched",
            "numpyro 0.22.0",
            "1 of 4 elements outside tolerance; worst err/tol 412 at index (1, 0): "
            "expected -4.51234, actual -4.5",
        ),
        metrics={
            "compared": 4,
            "max_abs_err": 0.01234,
            "max_rel_err": 0.002735,
            "max_err_over_tol": 412.0,
            "worst_index": [1, 0],
            "expected_at_worst": -4.51234,
            "actual_at_worst": -4.5,
            "tolerance_at_worst": 2.995e-05,
            "mismatched": 1,
        },
        arrays={
            "expected": [[-3.25, -3.5], [-4.51234, "nan"]],
            "actual": [[-3.25, -3.5000001], [-4.5, "nan"]],
            "tolerance": [[2.9e-05, 2.9e-05], [2.995e-05, 2.9e-05]],
        },
        **_failure_context("batched", "log_prob"),
    )
    shape_fail = record(
        "batched",
        "gpytorch.dense",
        "float32",
        "shapes",
        "failed",
        kind="shape",
        message=_message(
            "shapes", "batched", "gpytorch.dense 1.15.2", "log_prob shape (2,), expected (2, 2)"
        ),
        arrays={"expected": [[1.0, 2.0], [3.0, 4.0]], "actual": [1.0, 2.0]},
        **{k: v for k, v in _failure_context("batched", "shapes").items() if k != "reproducer"},
    )
    grad_fail = record(
        "batched",
        "torch",
        "float64",
        "grad",
        "failed",
        kind="grad",
        message=_message(
            "grad", "batched", "torch 2.13.0", "method autograd; ∂/∂loc: 1 of 3 elements outside"
        ),
        metrics={
            "method": "torch.autograd",
            "wrt": ["loc", "value"],
            "params": {
                "loc": {"structure": "full", "max_err_over_tol": 7.5, "compared": 3},
                "value": {"structure": "full", "max_err_over_tol": 0.25, "compared": 6},
            },
            "compared": 9,
            "max_err_over_tol": 7.5,
            "worst_param": "loc",
        },
        arrays={
            "loc": {
                "expected": [0.25, -0.5, 1.0],
                "actual": [0.25, -0.5, 1.0001],
                "tolerance": [1e-5, 1e-5, 1.3333e-5],
            }
        },
        **_failure_context("batched", "grad"),
    )
    raised = record(
        "value-batch-larger",
        "numpyro",
        "float32",
        "log_prob",
        "failed",
        kind="raises",
        message=_message(
            "log_prob",
            "value-batch-larger",
            "numpyro 0.22.0",
            "log_prob raised ZeroDivisionError: integer modulo by zero\n  at jax/_src/x.py:531",
        ),
        **_failure_context("value-batch-larger", "log_prob"),
    )
    records = [
        record("batched", "torch", "float32", "shapes"),
        record("batched", "torch", "float32", "log_prob", metrics=_passed_metrics(0.02)),
        record("batched", "torch", "float64", "log_prob", metrics=_passed_metrics(0.5)),
        record("batched", "numpyro", "float32", "shapes"),
        record("batched", "numpyro", "float64", "log_prob", metrics=_passed_metrics(0.0)),
        record("batched", "gpytorch.dense", "float64", "shapes"),
        value_fail,
        shape_fail,
        grad_fail,
        raised,
        record(
            "scalar",
            "torch",
            "float32",
            "log_prob",
            "xfailed",
            family="Normal",
            file="cases/normal.yaml",
            kind="value",
            message="known torch issue #1234",
        ),
        record(
            "scalar",
            "numpyro",
            "float32",
            "log_prob",
            "xpassed",
            family="Normal",
            file="cases/normal.yaml",
            message="expected to fail: numpyro#42",
            metrics=_passed_metrics(0.001),
        ),
        {
            "nodeid": "cases/normal.yaml::Normal.loc_scale[gpytorch-unsupported]",
            "case": "scalar",
            "file": "cases/normal.yaml",
            "family": "Normal",
            "framework": "gpytorch",
            "check": "unsupported",
            "outcome": "skipped",
            "kind": None,
            "message": "gpytorch has no Normal",
            "metrics": {},
        },
        {
            "nodeid": "cases/broken.yaml::<file>[case-error-line4]",
            "outcome": "error",
            "kind": "case_error",
            "message": "cases/broken.yaml:4: unknown family 'Nromal'",
            "check": "load",
            "source": "",
        },
        record(
            HOSTILE_ID,
            "torch",
            "float32",
            "log_prob",
            "failed",
            kind="value",
            message=HOSTILE_MESSAGE,
            source="  - id: x </script><script>window.__pwned = 4</script>\n",
            reproducer="print('</script><script>window.__pwned = 5</script>')\n",
            metrics={"max_err_over_tol": "inf", "expected_at_worst": "-inf"},
        ),
    ]

    return {
        "run": {**RUN, "collected": len(records), "counts": _counts(records)},
        "records": records,
    }


FAMILIES = [
    "Normal",
    "MultivariateNormal",
    "Bernoulli",
    "Beta",
    "Gamma",
    "Exponential",
    "Poisson",
    "Binomial",
    "Categorical",
    "Dirichlet",
    "StudentT",
    "Cauchy",
    "Laplace",
    "LogNormal",
    "Uniform",
    "Geometric",
    "NegativeBinomial",
    "VonMises",
    "HalfNormal",
    "InverseGamma",
]
FRAMEWORKS = ["torch", "numpyro", "gpytorch", "gpytorch.dense", "gpytorch.root", "gpytorch.diag"]
CHECKS = ["shapes", "log_prob", "grad"]
#: (outcome, probability): about 3% failures, as in a real run with a few upstream bugs.
MIX = [
    ("failed", 0.03),
    ("error", 0.002),
    ("skipped", 0.06),
    ("xfailed", 0.005),
    ("xpassed", 0.001),
]


def _nested(rng: random.Random, shape: list[int]) -> Any:
    if not shape:
        return round(rng.gauss(0, 2), 7)
    return [_nested(rng, shape[1:]) for _ in range(shape[0])]


def _map(nested: Any, f: Any) -> Any:
    return [_map(x, f) for x in nested] if isinstance(nested, list) else f(nested)


def _synthetic_failure(rng: random.Random, rec: dict) -> None:
    shape = rng.choice(
        [[4], [5, 2], [3, 4], [2, 3, 2], [8, 8], [16, 16]]
        if rng.random() < 0.1
        else [[1], [4], [5, 2], [3, 4], [2, 3]]
    )
    expected = _nested(rng, shape)
    actual = copy.deepcopy(expected)
    row = actual
    for n in shape[:-1]:
        row = row[rng.randrange(n)]
    k = rng.randrange(shape[-1])
    row[k] = round(row[k] + rng.choice([1e-3, 0.05, 2.0]), 7)
    tolerance = _map(expected, lambda x: round(1e-5 * (1 + abs(x)), 12))
    kind = rng.choice(["value", "value", "value", "raises", "shape", "nan", "grad"])
    rec["kind"] = kind
    ratio = rng.choice([1.7, 12.0, 340.0, 5e4, "inf"])
    rec["metrics"] = {**_passed_metrics(1.0), "max_err_over_tol": ratio, "mismatched": 1}
    rec["message"] = _message(
        rec["check"], rec["case"], f"{rec['framework']} 1.0", f"{kind}: synthetic mismatch " * 3
    )
    context = _failure_context(rec["case"], rec["check"])
    context["inputs"]["value"] = {"shape": shape, "dtype": rec["dtype"], "values": expected}
    context["reproducer"] += "EXPECTED = " + json.dumps(expected) + "\n"
    rec.update(context)
    if kind in ("value", "nan", "grad"):
        rec["arrays"] = {"expected": expected, "actual": actual, "tolerance": tolerance}


def synthetic_results(n: int = 10_000, seed: int = 0) -> dict:
    """``n`` records: families × frameworks × cases × dtypes × checks, a realistic outcome mix."""
    rng = random.Random(seed)
    records: list[dict] = []
    i = 0
    while len(records) < n:
        family = FAMILIES[i % len(FAMILIES)]
        case = f"{family.lower()}-case-{i // len(FAMILIES)}"
        i += 1
        for framework in FRAMEWORKS:
            for dtype in ("float32", "float64"):
                for check in CHECKS:
                    if len(records) >= n:
                        break
                    rec = record(
                        case,
                        framework,
                        dtype,
                        check,
                        family=family,
                        file=f"cases/{family.lower()}.yaml",
                    )
                    roll, outcome = rng.random(), "passed"
                    for name, p in MIX:
                        if roll < p:
                            outcome = name
                            break
                        roll -= p
                    rec["outcome"] = outcome
                    if check != "shapes" and outcome in ("passed", "xpassed"):
                        rec["metrics"] = _passed_metrics(10 ** rng.uniform(-7, 0))
                    if outcome in ("failed", "error", "xfailed"):
                        _synthetic_failure(rng, rec)
                    if outcome == "skipped":
                        rec["message"] = f"{framework} has no {family} with this parametrization"
                    records.append(rec)

    return {
        "run": {**RUN, "collected": len(records), "counts": _counts(records)},
        "records": records,
    }


if __name__ == "__main__":
    size, out = int(sys.argv[1]), sys.argv[2]
    with open(out, "w", encoding="utf-8") as fh:
        json.dump(synthetic_results(size), fh)
    print(f"wrote {size} records to {out}")
