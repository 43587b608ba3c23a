"""The bare-loop baseline: the framework work of every item, with no harness around it.

For every item a run would collect (same selection, variants included) this times only what
the framework has to do — construct the distribution, evaluate log_prob, and differentiate it
— through the adapters (which are thin by design), in one process, in collection order. The
suite's wall time divided by this is the harness overhead ratio.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any


def _evaluate(spec: Any, factory: Any) -> float:
    """What every item costs the framework at least: construct, log_prob, gradient."""
    from conformance.adapters.capabilities import Differentiates, offers
    from conformance.expect.gradients import cotangent_for
    from conformance.operations import Operation

    subject = factory.subject(spec.case, spec.adapter, spec.binding, spec.dtype)
    adapter, binding = spec.adapter, spec.binding
    wrt = spec.case.differentiable_inputs
    # The gradient check's cotangent, made before the clock starts (it is not framework work).
    cotangent = (
        cotangent_for(spec.case, subject.expected.log_prob_shape, spec.dtype)
        if wrt and offers(adapter, Operation.GRAD)
        else None
    )
    start = time.perf_counter()
    with adapter.precision(spec.dtype):
        params, value = subject.params(), subject.value()
        dist = adapter.construct(binding, params)
        adapter.to_numpy(adapter.log_prob(dist, value))
        if cotangent is not None:
            ct = adapter.asarray(cotangent.astype(spec.dtype), spec.device)
            assert isinstance(adapter, Differentiates), adapter.name
            adapter.log_prob_vjp(binding, params, value, ct, wrt, "grad")
    return time.perf_counter() - start


def _keyword_option(args: list[str]) -> tuple[str | None, list[str]]:
    """``-k EXPR`` (the one pytest option a selection may carry) and the arguments left."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("-k", dest="keyword")
    ns, rest = parser.parse_known_args(args)
    return ns.keyword, rest


def _matches(expression: Any, spec: Any) -> bool:
    """pytest's ``-k`` rule on a spec: each word is a case-insensitive substring of one of the
    item's keywords — its name and the names of the file and folders that hold it."""
    file = Path(spec.case.file)
    keywords = [spec.name.lower(), *(part.lower() for part in file.parts)]
    return expression.evaluate(lambda word, **_: any(word.lower() in k for k in keywords))


def run(selection: list[str]) -> dict[str, Any]:
    """Plans the items ``conformance run`` would (same selection options, variants included)
    and times the bare evaluations of every one, in plan order, in this process."""
    from conformance.plan.planner import plan
    from conformance.plan.specs import CheckSpec
    from conformance.run.config.settings import Settings, parse_options
    from conformance.run.subject_factory import SubjectFactory

    started = time.perf_counter()
    t0 = time.perf_counter()
    from conformance.adapters import imported_modules

    for module in imported_modules():  # imports are part of the bare cost too
        importlib.import_module(module)

    imports = time.perf_counter() - t0
    options, rest = parse_options(selection)
    keyword, rest = _keyword_option(rest)
    if rest:
        raise SystemExit(f"the baseline takes the run's selection options only, not {rest}")
    settings = Settings.from_sources(options, os.environ)
    if settings.problems():
        raise SystemExit("; ".join(settings.problems()))
    specs = [s for s in plan(settings.selection) if isinstance(s, CheckSpec)]
    if keyword:
        from _pytest.mark.expression import Expression  # the grammar users type, as pytest does

        compiled = Expression.compile(keyword)
        specs = [s for s in specs if _matches(compiled, s)]
    factory = SubjectFactory(settings.device, settings.property_examples, settings.sample_seed)
    evaluations, failures = 0.0, 0
    for spec in specs:
        try:
            evaluations += _evaluate(spec, factory)
        except Exception:  # the suite reports these; the baseline only counts them
            failures += 1
    return {
        "items": len(specs),
        "imports_s": round(imports, 3),
        "evaluations_s": round(evaluations, 3),
        "bare_s": round(imports + evaluations, 3),
        "raised": failures,
        "process_s": round(time.perf_counter() - started, 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.bench.baseline")
    parser.add_argument("--output", required=True)
    ns, selection = parser.parse_known_args(argv)
    result = run(selection)
    with open(ns.output, "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=2)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
