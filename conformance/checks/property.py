"""Property-based batch shapes (hypothesis), opt-in with ``--property N``.

From each case, hypothesis draws a batch shape per parameter and one for the value, jointly
broadcastable (as TFP's testlib does), bounded to 3 dims of size ≤ 3 each; each array keeps the
case's event shape, and its elements are picked from the case's own (valid) elements. The
value is drawn from the oracle. Shapes and log_prob are checked as usual. On a failure
hypothesis shrinks to a minimal failing shape, which the failure message gives as a case in
YAML, ready to paste into ``cases/``.
"""

from __future__ import annotations

import dataclasses
import zlib

import numpy as np
import yaml

import reference
from conformance.checks.base import Check, CheckResult
from conformance.checks.log_prob import LogProbCheck
from conformance.checks.shapes import ShapesCheck
from conformance.loader import Case
from conformance.materialize import expected_for, float64_inputs, inputs_for, sample_with_batch
from conformance.subject import FrameworkError, Subject

MAX_DIMS = 3
MAX_SIDE = 3


class PropertyFailure(AssertionError):
    pass


class PropertyCheck(Check):
    name = "property"
    description = "hypothesis-drawn broadcastable batch shapes, shrunk to a minimal failure"

    def __init__(self, examples: int = 0) -> None:
        self.examples = examples

    def evaluate(self, subject: Subject) -> CheckResult:
        # Imported here: hypothesis costs ~0.3 s to import, and property mode is opt-in.
        from hypothesis import HealthCheck, Phase, given, settings
        from hypothesis.extra.numpy import mutually_broadcastable_shapes

        if not subject.expected.all_valid:
            return CheckResult(True, skip_reason="property mode runs on cases with valid inputs")
        family = reference.get_family(subject.case.family)
        info = family.params(subject.case.parametrization)
        arrays = [k for k, p in info.items() if not p.static]
        params64, value64 = float64_inputs(subject.case)
        parts = (ShapesCheck(), LogProbCheck())
        tried: list[int] = [0]
        failing: dict = {}

        strategy = mutually_broadcastable_shapes(
            num_shapes=len(arrays) + 1, max_dims=MAX_DIMS, min_side=1, max_side=MAX_SIDE
        )

        @settings(
            max_examples=max(self.examples, 1),
            deadline=None,
            database=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
            phases=(Phase.generate, Phase.shrink),
        )
        @given(shapes=strategy)
        def prop(shapes) -> None:
            tried[0] += 1
            case = derive(
                subject.case, family, info, arrays, shapes.input_shapes, params64, value64
            )
            sub = dataclasses.replace(
                subject,
                case=case,
                inputs=inputs_for(case, subject.dtype),
                expected=expected_for(case, subject.dtype, subject.expected.options),
            )
            for part in parts:
                try:
                    result = part.evaluate(sub)
                except FrameworkError as exc:
                    result = part.fail(sub, exc.kind, str(exc))
                if not result.passed:
                    failing.update(case=case, result=result, shapes=shapes.input_shapes)
                    raise PropertyFailure(result.message)

        try:
            prop()
        except PropertyFailure:
            case, result = failing["case"], failing["result"]
            snippet = case_yaml(case, subject)
            metrics = {
                "examples_tried": tried[0],
                "minimal_shapes": [list(s) for s in failing["shapes"]],
                "minimal_case_yaml": snippet,
            }
            detail = (
                f"hypothesis found a failing batch-shape combination after {tried[0]} calls and "
                f"shrank it to {dict(zip([*arrays, 'value'], failing['shapes'], strict=True))}:\n"
                f"  {result.message.strip()}\n  minimal case, ready to paste into cases/:\n"
                + "\n".join("    " + ln for ln in snippet.splitlines())
            )
            return self.fail(subject, result.kind or "value", detail, metrics)
        return CheckResult(True, metrics={"examples_tried": tried[0], "compared": tried[0]})


def derive(case: Case, family, info, arrays, shapes, params64, value64) -> Case:
    """A case whose arrays have the drawn batch shapes and the base case's event shapes."""
    seed = zlib.crc32(repr(shapes).encode())

    def pick(array: np.ndarray, rank: int, batch: tuple[int, ...], salt: int) -> np.ndarray:
        event = array.shape[array.ndim - rank :]
        flat = array.reshape(-1, *event) if array.ndim > rank else array.reshape(1, *event)
        rng = np.random.default_rng(seed + salt)
        chosen = rng.integers(0, flat.shape[0], size=batch)
        return flat[chosen]

    def make(params: dict, value: np.ndarray) -> tuple[dict, np.ndarray]:
        new = dict(params)
        for i, name in enumerate(arrays):
            new[name] = pick(params[name], info[name].event_rank, tuple(shapes[i]), i)
        rng = np.random.default_rng(seed + 1000)
        new_value = sample_with_batch(family, new, tuple(shapes[-1]), rng, case.parametrization)
        if case.spec.value_dtype != "float":
            new_value = np.round(new_value)
        return new, np.asarray(new_value)

    params, value = make(dict(params64), value64)
    par = case.parametrization
    return dataclasses.replace(
        case,
        batch_shape=tuple(family.batch_shape(params, par)),
        log_prob_shape=tuple(family.log_prob_shape(params, value, par)),
        variant=f"property-{seed:08x}",
        base=case,
        derive=lambda p, v: make(p, v),
        source=case.source,
    )


def case_yaml(case: Case, subject: Subject) -> str:
    """The derived case as literal YAML, in the dtype and framework that failed."""
    inputs = inputs_for(case, subject.dtype)
    params = {k: np.asarray(v).tolist() for k, v in inputs.framework_params().items()}
    entry = {
        "id": f"{case.spec.id}-{case.variant}",
        "family": case.family,
        "parametrization": case.parametrization,
        "params": params,
        "value": inputs.framework_value().tolist(),
        "dtypes": [subject.dtype],
        "frameworks": [subject.adapter.name],
    }
    if case.spec.value_dtype != "float":
        entry["value_dtype"] = case.spec.value_dtype
    if case.spec.param_dtypes:
        entry["param_dtypes"] = dict(case.spec.param_dtypes)
    return yaml.safe_dump([entry], sort_keys=False, default_flow_style=None, width=100)
