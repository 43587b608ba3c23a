"""Each draw's derivative held to a number: the identity's, or a declared map's.

A univariate draw x made from one noise by a map monotone in it has the derivative the
implicit-reparameterisation identity gives, whatever the sampler: dx/dθ = −(∂F/∂θ)(x) / f(x),
with the oracle's CDF F and density f (``DrawLaw.implicit_derivatives``; PyTorch's
``TestRsample`` checks its own samplers this way). So each draw's derivative is held to a
number, deterministically given the draw, two ways:

* ``per_draw``: ``rsample()`` with each parameter expanded to (n, *batch), one copy per draw, so
  the framework's autograd gives every draw's own derivative;
* ``summed``: ``rsample((n,))`` of the case's distribution and the gradient of the draws' sum,
  the gradient a user's Monte Carlo loss gets, against the identity's derivatives summed over
  draws and broadcast dimensions.

A multivariate draw is compared the same way against its map's derivatives (:mod:`.vector_map`).
The identity's ∂F/∂θ comes from differences of the float64 CDF, accurate to about 1e-9 in the
bulk of the law: it judges float32's rounding, not float64's, so the items are float32 only.
Draws in the law's far tails (F or 1 − F below ``IMPLICIT_TAIL``) are not judged. A univariate
item's script embeds its worst draws and the identity's derivatives at them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from conformance.checks.base import Check, CheckResult, Reproducer
from conformance.checks.rsample_grad.call import pathwise_draws, pathwise_lines
from conformance.checks.rsample_grad.evaluation import SHOWN_DRAWS, Evaluation
from conformance.checks.rsample_grad.vector_map import map_derivatives
from conformance.checks.subject import Subject
from conformance.compare import Comparison, compare_arrays, err_over_tol, project, tolerance
from conformance.kinds import Kind
from conformance.reproducers.script import Script, array_literal, not_written

#: Draws per item (all batch elements together), and the fewest per batch element.
DRAWS = 2**9
FEWEST = 16


def draws_per_element(subject: Subject) -> int:
    """Draws per batch element of an item judged draw by draw: the item's budget shared."""
    batch = tuple(subject.expected.batch_shape)
    return max(FEWEST, DRAWS // (int(np.prod(batch)) if batch else 1))


def _worst_draws(x: np.ndarray, got: np.ndarray, expected: np.ndarray, tol: np.ndarray) -> tuple:
    """(flat indices, the draws there, the identity's derivatives, their tolerances) of the
    SHOWN_DRAWS draws with the largest error over tolerance, by the comparison's own rule (an
    unjudged draw's expected value is its own derivative: error 0)."""
    with np.errstate(invalid="ignore", over="ignore"):  # inf − inf: NaN, counted as inf
        err = np.abs(got - expected)
    ratio = err_over_tol(np.where(np.isnan(err), np.inf, err), tol, np.isfinite(expected))
    at = np.argsort(-ratio.ravel(), kind="stable")[:SHOWN_DRAWS]
    return at, x.ravel()[at], expected.ravel()[at], tol.ravel()[at]


def _badness(compared: Any) -> float:
    """A comparison's worst error over tolerance; a failure with no such number (a shape) is
    infinitely bad, so it is never outranked by a mismatch of values."""
    ratio = compared.metrics.get("max_err_over_tol")
    if ratio is None:
        return 0.0 if compared.ok else float("inf")
    return float(ratio)


def _reduce_to(array: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum ``array`` over the leading and broadcast dimensions a parameter of ``shape`` had."""
    lead = array.ndim - len(shape)
    out = array.sum(axis=tuple(range(lead))) if lead else array
    axes = tuple(i for i, size in enumerate(shape) if size == 1 and out.shape[i] != 1)
    return out.sum(axis=axes, keepdims=True) if axes else out


def judged_by_draw(
    check: Check,
    subject: Subject,
    names: list[str],
    exempt: dict[str, str],
    last: Evaluation,
) -> CheckResult:
    """Each draw's derivatives, and rsample((n,))'s summed gradient, against the identity's
    (or a declared map's) at the draws. ``last.kept``, where given (a univariate draw),
    receives the draws and each comparison's expected numbers, tolerance and judged draws
    (what a script embeds)."""
    kept = last.kept
    n = draws_per_element(subject)
    x, per_draw, summed, total, metrics = pathwise_draws(check, subject, names, n, last)
    if isinstance(x, CheckResult):
        return x
    if kept is not None:  # a univariate item's script (its reproducer asked)
        kept.update(
            draws=x, summed_draws=subject.numpy(summed, "read draws"), per_draw={}, summed={}
        )
    if exempt:
        metrics["exempt"] = exempt
    info = subject.law.facts.parameters
    multivariate = subject.law.facts.event_rank > 0
    derive = map_derivatives(subject) if multivariate else subject.law.implicit_derivatives
    found = derive(x, names)
    metrics["judged_draws"] = int(np.count_nonzero(found.judged))
    by = {k: int(np.count_nonzero(v)) for k, v in found.judged_by.items()}
    if len(set(by.values())) > 1:  # a parameter's derivative unresolved at some draws
        metrics["judged_draws_by_parameter"] = by
    if not found.judged.any():
        return CheckResult(
            True, skip_reason="no draw inside the law's bulk to judge", metrics=metrics
        )
    worst: tuple[float, str, Any] | None = None
    for name in names:
        got = subject.numpy(per_draw[name], "read gradients").astype(np.float64)
        if got.shape != found.derivatives[name].shape:
            return check.fail(
                subject,
                Kind.SHAPE,
                f"d draw/d {name} of shape {got.shape}, expected {found.derivatives[name].shape}",
            )
        # Each draw's judged mask over its parameter copy's own (event) dimensions.
        mask = found.judged_by[name]
        judged = mask.reshape(mask.shape + (1,) * (got.ndim - mask.ndim))
        structure = info[name].structure
        expected = project(np.where(judged, found.derivatives[name], got), structure)
        sensitivity = project(np.where(judged, found.sensitivity[name], 0.0), structure)
        got = project(got, structure)
        tol = tolerance(subject.dtype, expected, np.abs(sensitivity))
        compared = compare_arrays(expected, got, tol, dtype=subject.dtype)
        if kept is not None:
            kept["per_draw"][name] = _worst_draws(x, got, expected, tol)
        if worst is None or _badness(compared) > worst[0]:
            worst = (_badness(compared), f"per-draw d draw/d {name}", compared)
        summed_judged = _summed(subject, derive, summed, total[name], name, structure, kept)
        if summed_judged is not None:
            metrics.setdefault("summed_compared", []).append(name)
        if summed_judged is not None and _badness(summed_judged) > worst[0]:
            worst = (
                _badness(summed_judged),
                f"d Σdraws/d {name} of rsample((n,))",
                summed_judged,
            )
    assert worst is not None
    _, where, compared = worst
    metrics.update({k: v for k, v in compared.metrics.items()}, worst_derivative=where)
    if compared.ok:
        return CheckResult(True, metrics=metrics)
    kind = Kind.GRAD if compared.kind is Kind.VALUE else compared.kind
    return check.fail(subject, kind, f"{where}: {compared.detail}", metrics)


def _summed(
    subject: Subject,
    derive: Callable[..., Any],
    summed: Any,
    total: Any,
    name: str,
    structure: str,
    kept: dict | None,
) -> Comparison | None:
    """The gradient of rsample((n,))'s sum by ``name`` against the oracle's derivatives
    summed, where every one of those draws is judged (else None: not compared)."""
    x = subject.numpy(summed, "read draws").astype(np.float64)
    got = subject.numpy(total, "read gradients").astype(np.float64)
    found = derive(x, [name])
    if not found.judged_by[name].all():
        return None
    shape = tuple(np.shape(subject.inputs.params[name]))
    if got.shape != shape:
        return compare_arrays(np.zeros(shape), got, np.zeros(shape))  # a shape failure
    expected = project(_reduce_to(found.derivatives[name], shape), structure)
    sensitivity = np.abs(project(_reduce_to(found.sensitivity[name], shape), structure))
    # A sum of n derivatives each within its tolerance: the tolerance of the sum.
    tol = tolerance(subject.dtype, expected, sensitivity) + np.abs(
        project(
            _reduce_to(
                tolerance(subject.dtype, found.derivatives[name], found.sensitivity[name]),
                shape,
            ),
            structure,
        )
    )
    if kept is not None:
        kept["summed"][name] = (expected, tol)
    return compare_arrays(expected, project(got, structure), tol, dtype=subject.dtype)


def by_draw_reproducer(
    check: Check, subject: Subject, names: list[str], kept: dict[str, Any]
) -> Reproducer:
    """The item's draws and their derivatives made as the adapter made them, from the item's
    seed, held to the identity's derivatives at the item's own draws (embedded, with their
    tolerances and the draws judged): univariate draws only."""
    seed = subject.draw_seed(check.name)
    n = draws_per_element(subject)

    def constants(script: Script) -> list[str]:
        def table(which: str, part: int) -> str:
            items = kept[which].items()
            return "{" + ", ".join(f"{k!r}: {array_literal(v[part])}" for k, v in items) + "}"

        summed = np.asarray(kept["summed_draws"]).ravel()[:SHOWN_DRAWS]
        return [
            "",
            f"SEED = {seed}",
            f"N = {n}",
            f"NAMES = {names!r}",
            f"DRAWS_SHAPE = {tuple(kept['draws'].shape)!r}",
            "# Per parameter, the item's worst draws (flat indices), the draws there, the",
            "# identity's derivatives at them and their tolerances:",
            f"SHOWN = {table('per_draw', 0)}",
            f"DRAWS_AT = {table('per_draw', 1)}",
            f"EXPECTED_AT = {table('per_draw', 2)}",
            f"TOLERANCE_AT = {table('per_draw', 3)}",
            f"SUMMED_FIRST = {array_literal(summed)}  # rsample((N,))'s first draws",
            f"EXPECTED_TOTAL = {table('summed', 0)}",
            f"TOLERANCE_TOTAL = {table('summed', 1)}",
        ]

    def body(script: Script) -> list[str]:
        made = pathwise_lines(script)
        if made is None:
            return not_written("pathwise draws")
        return [*made, *PATHWISE_COMPARISON]

    return Reproducer(subject, check.name, body, constants)


#: A pathwise script's comparison: the draws must be the item's (else the embedded derivatives
#: are not theirs: exit 2), then each judged draw's derivative and each summed gradient within
#: the item's tolerance, by the comparison's own rule.
PATHWISE_COMPARISON = [
    "same = x.shape == DRAWS_SHAPE and all(",
    "    np.array_equal(x.ravel()[SHOWN[k]], DRAWS_AT[k], equal_nan=True) for k in NAMES",
    ")",
    "same = same and np.array_equal(",
    "    summed_x.ravel()[: len(SUMMED_FIRST)], SUMMED_FIRST, equal_nan=True",
    ")",
    "if not same:",
    "    print('DRAWS DIFFER from the item (another platform or release draws otherwise); the '",
    "          'expected derivatives are the identity at the item draws, so nothing is compared')",
    "    sys.exit(2)",
    "",
    "",
    "def judged(what, got, expected, tol, draws=None):",
    "    got = np.asarray(got, dtype=np.float64)",
    "    err = np.abs(got - expected)",
    "    err = np.where(np.isnan(err), np.inf, err)",
    "    ratio = err_over_tol(err, tol, np.isfinite(expected))",
    "    at = int(np.argmax(ratio))",
    "    if draws is not None:",
    "        what += f' at draw {tuple(int(i) for i in np.unravel_index(draws[at], DRAWS_SHAPE))}'",
    "    shown = f'{float(got.flat[at])!r} where the identity gives {float(expected.flat[at])!r}'",
    "    print(f'{what}: worst err/tol {float(ratio.flat[at]):.3g}: {shown}')",
    "    report(float(ratio.flat[at]) > 1, f'{what}: err/tol {float(ratio.flat[at]):.3g}: {shown}')",
    "",
    "",
    "for name in NAMES:",
    "    got = np.asarray(per_draw[name])",
    "    report(got.shape != DRAWS_SHAPE, f'd draw/d {name}: shape {got.shape}, expected {DRAWS_SHAPE}')",
    "    judged(",
    "        f'per-draw d draw/d {name}',",
    "        got.ravel()[SHOWN[name]],",
    "        EXPECTED_AT[name],",
    "        TOLERANCE_AT[name],",
    "        SHOWN[name],",
    "    )",
    "for name, expected in EXPECTED_TOTAL.items():",
    "    got = np.asarray(total[name])",
    "    report(got.shape != expected.shape, f'd sum/d {name}: shape {got.shape}, expected {expected.shape}')",
    "    judged(f'd sum(draws)/d {name} of rsample((N,))', got, expected, TOLERANCE_TOTAL[name])",
]
