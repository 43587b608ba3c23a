"""The bare-loop baseline: the framework work of every item, with no harness around it.

For every item a run would collect (same selection, variants included) this times only what
the framework has to do — construct the distribution, evaluate log_prob, and differentiate it
— through the adapters (which are thin by design), in one process, in collection order. The
suite's wall time divided by this is the harness overhead ratio.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from typing import Any

import numpy as np
import pytest


class _Items:
    def __init__(self) -> None:
        self.items: list[Any] = []

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        from conformance.items import ConformanceItem

        self.items = [i for i in session.items if isinstance(i, ConformanceItem)]


def _evaluate(item: Any) -> float:
    """What every item costs the framework at least: construct, log_prob, gradient."""
    from conformance.gradients import cotangent_for, differentiable_inputs
    from conformance.materialize import inputs_for

    inputs = inputs_for(item.case, item.dtype)
    adapter, binding = item.adapter, item.binding
    raw_params = inputs.framework_params()
    raw_value = inputs.framework_value()
    wrt = differentiable_inputs(item.case)
    start = time.perf_counter()
    with adapter.precision(item.dtype):
        params = {
            k: v.item() if k in inputs.static else adapter.asarray(v, item.device)
            for k, v in raw_params.items()
        }
        value = adapter.asarray(raw_value, item.device)
        dist = adapter.construct(binding, params)
        out = adapter.to_numpy(adapter.log_prob(dist, value))
        if wrt and adapter.gradient_methods:
            ct = cotangent_for(item.case, np.shape(out), item.dtype)
            adapter.log_prob_vjp(
                binding, params, value, adapter.asarray(ct, item.device), wrt, "grad"
            )
    return time.perf_counter() - start


def run(pytest_args: list[str]) -> dict[str, Any]:
    """Collects like ``conformance run`` and times the bare evaluations of every item."""
    started = time.perf_counter()
    t0 = time.perf_counter()
    import gpytorch  # noqa: F401  - imports are part of the bare cost too
    import jax  # noqa: F401
    import numpyro  # noqa: F401
    import torch  # noqa: F401

    imports = time.perf_counter() - t0
    collected = _Items()
    with contextlib.redirect_stdout(sys.stderr):
        pytest.main([*pytest_args, "--collect-only", "-q", "--no-results"], plugins=[collected])
    evaluations, failures = 0.0, 0
    for item in collected.items:
        try:
            evaluations += _evaluate(item)
        except Exception:  # the suite reports these; the baseline only counts them
            failures += 1
    return {
        "items": len(collected.items),
        "imports_s": round(imports, 3),
        "evaluations_s": round(evaluations, 3),
        "bare_s": round(imports + evaluations, 3),
        "raised": failures,
        "process_s": round(time.perf_counter() - started, 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.bench.baseline")
    parser.add_argument("--output", required=True)
    ns, pytest_args = parser.parse_known_args(argv)
    result = run(pytest_args)
    with open(ns.output, "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=2)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
