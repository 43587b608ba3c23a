"""Derivatives judged in expectation: by the draws' moments, or by bounded test functions.

A sampler that combines several noises (torch's StudentT: a normal over a chi) has a per-draw
derivative that differs from the identity's while agreeing in expectation; the adapter
declares those parameters (``pathwise_exempt``, with the reason). Where the oracle knows the
law's first two moments (``reference.Family.draw_moments``), they, and every parameter of a
multivariate family no declared map reads the noise back for (Dirichlet), are judged in
expectation (:mod:`conformance.checks.pathwise_moments` holds the statistics: 2¹³ draws, a
call of their own).

A law without moments to differentiate (a Student t's df, a Fisher–Snedecor's, a multivariate
t's: heavy tails) is judged by bounded test functions of the draw instead
(``reference.Family.bounded_pathwise``: Gaussian bumps at the law's median, on log s for a
positive law), at the batch elements whose bumps stay inside the draws' dtype; a finite draw's
NaN derivative, or an infinite one the bumps weigh, fails as such. The others are not judged,
and the item says why. A univariate item's script embeds the oracle's means and runs the
check's own t statistics.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from conformance.answers.draws import BoundedTests
from conformance.checks import gof, pathwise_moments
from conformance.checks.base import Check, CheckResult, Reproducer
from conformance.checks.rsample_grad.call import pathwise_draws, pathwise_lines
from conformance.checks.rsample_grad.evaluation import SHOWN_DRAWS, Evaluation
from conformance.checks.rsample_grad.vector_map import coordinate_weights
from conformance.checks.subject import Subject
from conformance.compare import project
from conformance.kinds import Kind
from conformance.reproducers.script import Script, array_literal, not_written, plain_source


def judged_in_expectation(
    check: Check,
    subject: Subject,
    names: list[str],
    exempt: dict[str, str],
    last: Evaluation | None,
    bounded: BoundedTests | None = None,
) -> CheckResult:
    """``names`` judged in expectation, from draws of a call of their own (2¹³ per element)."""
    x, per_draw, _, total, metrics = pathwise_draws(
        check, subject, names, pathwise_moments.MOMENT_DRAWS, last
    )
    if isinstance(x, CheckResult):
        return x
    if exempt:
        metrics["exempt"] = exempt
    weights = coordinate_weights(subject)
    return _in_expectation(
        check, subject, last, x, per_draw, total, names, weights, metrics, bounded
    )


def _in_expectation(
    check: Check,
    subject: Subject,
    last: Evaluation | None,
    x: np.ndarray,
    per_draw: dict[str, Any],
    total: dict[str, Any],
    names: list[str],
    weights: np.ndarray,
    metrics: dict,
    bounded: BoundedTests | None = None,
) -> CheckResult:
    """The draws' derivatives judged by the moments they must give on average, or by the
    bounded test functions' expectations where ``bounded`` gives them
    (:mod:`conformance.checks.pathwise_moments`)."""
    rank = len(weights.shape)
    draws = x.astype(np.float64)
    weighted = (draws * weights).sum(axis=tuple(range(draws.ndim - rank, draws.ndim)))
    batch = tuple(subject.expected.batch_shape)
    moments = (
        subject.law.pathwise_moments(weights, batch, names)
        if bounded is None
        else bounded.derivatives
    )
    metrics.update(
        judged_in="expectation",
        item_false_failure_probability=gof.ITEM_ALPHA,
    )
    kept = _expectation_kept(subject, last, x, names, moments, bounded)
    if bounded is not None:
        metrics["test_functions"] = bounded.description
        if np.isnan(draws).any():  # an overflowed tail is a draw, a NaN is none
            bad = int(np.count_nonzero(np.isnan(draws)))
            return check.fail(
                subject, Kind.VALUE, f"{bad} of {draws.size} draw coordinates are NaN", metrics
            )
    tests: dict[str, list[pathwise_moments.MomentTest]] = {}
    for name in names:
        got = subject.numpy(per_draw[name], "read gradients").astype(np.float64)
        want = (x.shape[0], *np.shape(moments[name][0]))
        if got.shape != want:
            return check.fail(
                subject, Kind.SHAPE, f"d draw/d {name} of shape {got.shape}, expected {want}"
            )
        if bounded is not None and (failed := _nan_at_finite(check, subject, name, got, draws)):
            failed.metrics.update(metrics)
            return failed
        if bounded is None and not (np.isfinite(got).all() and np.isfinite(draws).all()):
            bad = int(np.count_nonzero(~np.isfinite(got)))
            return check.fail(
                subject,
                Kind.GRAD,
                f"d draw/d {name}: {bad} of {got.size} derivatives not finite "
                f"({int(np.count_nonzero(~np.isfinite(draws)))} draw coordinates not finite)",
                metrics,
            )
        summed = subject.numpy(total[name], "read gradients").astype(np.float64)
        shape = tuple(np.shape(subject.inputs.params[name]))
        if summed.shape != shape:
            return check.fail(
                subject,
                Kind.SHAPE,
                f"d Σdraws/d {name} of rsample((n,)) of shape {summed.shape}, expected {shape}",
            )
        # A structured parameter (a covariance) is judged by what its tangent space sees,
        # as this binding reads it (a diagonal operator reads the diagonal alone).
        structure = subject.structure(name)
        if structure == "none":  # the binding's note says how it reads the parameter
            metrics.setdefault("not_compared", {})[name] = subject.binding.note
            continue
        first, second = (project(m, structure) for m in moments[name])
        if bounded is not None:
            if failed := _infinite_in_reach(check, subject, name, weighted, got, bounded):
                failed.metrics.update(metrics)
                return failed
            tests[name] = pathwise_moments.bounded_tests_for(
                name,
                weighted,
                project(got, structure),
                (first, second),
                bounded,
                bounded.judged,
            )
            continue
        tests[name] = pathwise_moments.tests_for(
            name,
            weighted,
            project(got, structure),
            (first, second),
            project(summed, structure),
        )
    eps = float(np.finfo(x.dtype).eps) if x.dtype.kind == "f" else 0.0
    verdicts = pathwise_moments.judge(tests, eps)
    verdict = gof.worst(verdicts)
    if kept is not None:  # a script judges every test but rsample((n,))'s summed one
        kept["script_sees"] = any(
            not v.passed for v in verdicts if "rsample((n,))" not in v.statistic
        )
    metrics.update(
        statistic=verdict.statistic,
        value=verdict.value,
        threshold=verdict.threshold,
        worst_element=list(verdict.element),
        worst_parameter=verdict.projection,
        test_false_failure_probability=verdict.alpha,
        max_err_over_tol=verdict.ratio,
        **verdict.details,
    )
    if verdict.passed:
        return CheckResult(True, metrics=metrics)
    given = "moments" if bounded is None else "bounded test functions' expectations"
    message = (
        f"{verdict.statistic} = {verdict.value:.6g} exceeds its threshold "
        f"{verdict.threshold:.6g} at index {verdict.element} of the derivative by "
        f"{verdict.projection} (batch {batch} + its event): mean {verdict.details['mean']:.6g} "
        f"over {verdict.details['draws']} draws where the oracle's {given} give "
        f"{verdict.details['expected']:.6g} (false-failure probability {verdict.alpha:.3g} "
        f"per test, {gof.ITEM_ALPHA:g} per item)"
    )
    return check.fail(subject, Kind.GRAD, message, metrics)


def _expectation_kept(
    subject: Subject,
    last: Evaluation | None,
    x: np.ndarray,
    names: list[str],
    moments: dict[str, tuple[np.ndarray, np.ndarray]],
    bounded: BoundedTests | None,
) -> dict[str, Any] | None:
    """What a univariate draw's in-expectation script embeds, kept on the check's last
    evaluation ``last`` (None for a vector draw, or where no evaluation is kept)."""
    if last is None or last.subject is not subject or last.kept is None:
        return None
    judged = None if bounded is None else bounded.judged

    def elements(shape: tuple[int, ...]) -> int:
        return max(int(np.prod(shape)), 1)

    # The tests pathwise_moments.judge will split the item's probability over: two per
    # parameter, and rsample((n,))'s summed one with the moments.
    counts = [
        2 * elements(np.shape(moments[k][0]))
        + (0 if bounded else elements(np.shape(subject.inputs.params[k])))
        for k in names
    ]
    last.expectation = {
        "alpha": pathwise_moments.per_test_alpha(counts),
        "eps": float(np.finfo(x.dtype).eps) if x.dtype.kind == "f" else 0.0,
        # A failure before the tests (a NaN or infinite derivative, a shape) shows in a
        # script too; the tests' verdicts say for themselves.
        "script_sees": True,
        "names": list(names),
        "shape": tuple(x.shape),
        "first_draws": np.asarray(x).ravel()[:SHOWN_DRAWS],
        "expected": {k: tuple(np.asarray(m, dtype=np.float64) for m in moments[k]) for k in names},
        "bounded": None
        if bounded is None
        else {
            "centre": np.asarray(bounded.centre, dtype=np.float64),
            "width": np.asarray(bounded.width, dtype=np.float64),
            "log_scale": bounded.log_scale,
            "judged": judged,
            "source": bounded.source,
        },
    }
    return last.expectation


def _nan_at_finite(
    check: Check, subject: Subject, name: str, got: np.ndarray, draws: np.ndarray
) -> CheckResult | None:
    """A failure where a finite draw's derivative by ``name`` is NaN (never right: an
    overflowed heavy tail may give an infinite draw, or an infinite derivative, but a
    finite draw has a number for its derivative), else None."""
    rank = subject.law.facts.event_rank
    finite = np.isfinite(draws)  # a vector draw is finite where all its coordinates are
    finite = finite.all(axis=tuple(range(draws.ndim - rank, draws.ndim))) if rank else finite
    finite = finite.reshape(finite.shape + (1,) * (got.ndim - finite.ndim))
    bad = np.isnan(got) & finite
    if not bad.any():
        return None
    at = tuple(int(i) for i in np.argwhere(bad)[0])
    shown = np.ravel(draws[at[: draws.ndim - rank]])
    return check.fail(
        subject,
        Kind.NAN,
        f"d draw/d {name}: {int(np.count_nonzero(bad))} of {got.size} derivatives are NaN "
        f"at finite draws (first at index {at}, draw {np.array2string(shown, precision=6)})",
    )


def _infinite_in_reach(
    check: Check,
    subject: Subject,
    name: str,
    weighted: np.ndarray,
    got: np.ndarray,
    bounded: BoundedTests,
) -> CheckResult | None:
    """A failure where a finite draw that the test functions weigh (g' not 0 there) has an
    infinite derivative by ``name``: such a draw lies within about 38 of the bumps' widths
    of the law's median (beyond, g' is 0 in float64), where a derivative of the law's own
    scale is a number."""
    s = weighted.reshape(weighted.shape + (1,) * (got.ndim - weighted.ndim))
    first, _ = bounded.terms(s, got)
    bad = np.isinf(first)
    if not bad.any():
        return None
    at = tuple(int(i) for i in np.argwhere(bad)[0])
    return check.fail(
        subject,
        Kind.INF,
        f"d draw/d {name}: {int(np.count_nonzero(bad))} of {got.size} derivatives are "
        f"infinite at finite draws the test functions weigh (first at index {at}: draw "
        f"{float(weighted[at[: weighted.ndim]]):.6g}, derivative {float(got[at]):.6g})",
    )


def expectation_reproducer(check: Check, subject: Subject, kept: dict[str, Any]) -> Reproducer:
    """The item's in-expectation draws made as the adapter made them (2¹³ per element,
    from the item's seed), their derivatives' means held to the oracle's (embedded) by the
    check's own t statistics at the item's false-failure probability (not rsample((n,))'s
    summed test: the caller writes no script where that one alone failed)."""
    seed = subject.draw_seed(check.name)
    bounded = kept["bounded"]

    def constants(script: Script) -> list[str]:
        def table(parts: dict[str, tuple[np.ndarray, np.ndarray]]) -> str:
            return (
                "{"
                + ", ".join(
                    f"{k!r}: ({array_literal(a)}, {array_literal(b)})"
                    for k, (a, b) in parts.items()
                )
                + "}"
            )

        lines = [
            "",
            f"SEED = {seed}",
            f"N = {pathwise_moments.MOMENT_DRAWS}",
            f"NAMES = {kept['names']!r}",
            f"DRAWS_SHAPE = {kept['shape']!r}",
            f"FIRST_DRAWS = {array_literal(kept['first_draws'])}  # the item's first draws",
            "# Per parameter, the oracle's means of the two tests' terms, per batch element:",
            f"MEANS = {table(kept['expected'])}",
            f"ALPHA = {kept['alpha']!r}  # each test's false-failure probability",
            f"EPS = {kept['eps']!r}",
            f"ROUNDING_ULPS = {pathwise_moments.ROUNDING_ULPS!r}",
        ]
        if bounded is None:
            return [*lines, "BOUNDED = None  # the moments' tests: s and s^2"]
        return [
            *lines,
            "# The bounded test functions' placement, and the batch elements judged:",
            f"BOUNDED = {{'centre': {array_literal(bounded['centre'])}, "
            f"'width': {array_literal(bounded['width'])}, "
            f"'log_scale': {bounded['log_scale']!r}, "
            f"'judged': {array_literal(bounded['judged'])}}}",
            *bounded["source"],
        ]

    def body(script: Script) -> list[str]:
        made = pathwise_lines(script)
        if made is None:
            return not_written("pathwise draws")
        t_source = plain_source(pathwise_moments.t_statistics)
        return [*made, "", "", *t_source, "", "", *EXPECTATION_COMPARISON]

    return Reproducer(subject, check.name, body, constants)


#: An in-expectation script's comparison, per parameter, as the check's: a NaN derivative at a
#: finite draw, an infinite one the bumps weigh, and each test's worst |t| against the item's
#: threshold. Draws other than the item's (another platform) are judged all the same: they are
#: draws of the law, and the tests' false-failure rate holds for them.
EXPECTATION_COMPARISON = [
    "same = x.shape == DRAWS_SHAPE and np.array_equal(",
    "    x.ravel()[: len(FIRST_DRAWS)], FIRST_DRAWS, equal_nan=True",
    ")",
    "if not same:  # still draws of the law: the tests hold at the same false-failure rate",
    "    print('draws differ from the item (another platform or release draws otherwise): '",
    "          'judging these draws, a fresh sample, at the item false-failure rate')",
    "LIMIT = float(-special.ndtri(ALPHA / 2.0))",
    "s = np.asarray(x, dtype=np.float64)",
    "finite = np.isfinite(s)",
    "",
    "",
    "def judged(what, terms, expected):",
    "    n = terms.shape[0]",
    "    mean, spread = terms.mean(0), terms.std(0, ddof=1)",
    "    t = t_statistics(mean, spread, n, expected, np.abs(terms).mean(0), EPS, ROUNDING_ULPS)",
    "    at = int(np.argmax(t))",
    "    where = tuple(int(i) for i in np.unravel_index(at, np.shape(expected)))",
    "    shown = f'mean {float(np.ravel(mean)[at]):.6g} where the oracle gives '",
    "    shown += f'{float(np.ravel(expected)[at]):.6g} at batch element {where}'",
    "    print(f'{what}: worst |t| {float(t.flat[at]):.6g} (threshold {LIMIT:.6g}): {shown}')",
    "    report(bool(t.flat[at] > LIMIT), f'{what}: |t| {float(t.flat[at]):.6g} > {LIMIT:.6g}: {shown}')",
    "",
    "",
    "for name in NAMES:",
    "    d = np.asarray(per_draw[name], dtype=np.float64)",
    "    report(d.shape != s.shape, f'd draw/d {name}: shape {d.shape}, expected {s.shape}')",
    "    want_first, want_second = MEANS[name]",
    "    if BOUNDED is None:",
    "        bad = int(np.count_nonzero(~np.isfinite(d))) + int(np.count_nonzero(~finite))",
    "        report(bad > 0, f'd draw/d {name}: {bad} derivatives or draws not finite')",
    "        first, second = d, 2.0 * s * d",
    "        tests = ('ds/d', '2s*ds/d')",
    "    else:",
    "        nan = int(np.count_nonzero(np.isnan(d) & finite))",
    "        report(nan > 0, f'd draw/d {name}: {nan} derivatives are NaN at finite draws')",
    "        first, second = derivative_terms(",
    "            s, d, BOUNDED['centre'], BOUNDED['width'], BOUNDED['log_scale']",
    "        )",
    "        inf = int(np.count_nonzero(np.isinf(first)))",
    "        report(inf > 0, f'd draw/d {name}: {inf} derivatives infinite where the bumps weigh')",
    "        keep = BOUNDED['judged']",
    "        first, second = np.where(keep, first, 0.0), np.where(keep, second, 0.0)",
    "        want_first = np.where(keep, np.nan_to_num(want_first), 0.0)",
    "        want_second = np.where(keep, np.nan_to_num(want_second), 0.0)",
    '        tests = ("g1\'(s)*ds/d", "g2\'(s)*ds/d")',
    "    judged(f'mean of {tests[0]}{name}', first, want_first)",
    "    judged(f'mean of {tests[1]}{name}', second, want_second)",
]
