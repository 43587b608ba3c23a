"""rsample_grad: pathwise gradients of reparameterised draws, judged draw by draw.

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

A multivariate draw has no such identity; where its map of standard noise is one the
frameworks share and the noise can be read back from the draw (MultivariateNormal's
loc + chol(Σ)·ε, Wishart's Bartlett map, LogisticNormal's stick-breaking of a normal draw, …:
``reference.Family.pathwise``), each draw's weighted coordinate sum Σ w·x
(:func:`event_weights`: distinct weights) is held to that map's derivatives at the draw's own
noise, structured matrices by the part their tangent space sees (a covariance's symmetric part,
a factor's lower triangle). A parameter the draw does not determine (LowRankMultivariateNormal's
cov_factor: more noises than coordinates) is declared by the family
(``Family.pathwise_without``) and not judged, with why.

A sampler that combines several noises (torch's StudentT: a normal over a chi) has a per-draw
derivative that differs from the identity's while agreeing in expectation; the adapter declares
those parameters (``pathwise_exempt``, with the reason). Where the oracle knows the law's first
two moments (``reference.Family.draw_moments``), they, and every parameter of a multivariate
family no declared map reads the noise back for (Dirichlet), are judged in expectation instead
(:mod:`conformance.checks.pathwise_moments`: 2¹³ draws, a call of their own). A law without
moments to differentiate (a Student t's df, a Fisher–Snedecor's, a multivariate t's: heavy
tails) is judged in expectation by bounded test functions of the draw instead
(``reference.Family.bounded_pathwise``: Gaussian bumps at the law's median, on log s for a
positive law), at the batch elements whose bumps stay inside the draws' dtype; a finite draw's
NaN derivative, or an infinite one the bumps weigh, fails as such. The others are not judged,
and the item says why.

Only float32 items: the identity's ∂F/∂θ comes from differences of the
float64 CDF, accurate to about 1e-9 in the bulk of the law, which judges float32's rounding but
not float64's. Draws in the law's far tails (F or 1 − F below ``IMPLICIT_TAIL``) are not judged.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from conformance.adapters.base import Adapter
from conformance.adapters.capabilities import PathwiseDraws
from conformance.answers.draws import BoundedTests
from conformance.check_names import CheckName
from conformance.checks import gof, pathwise_moments
from conformance.checks.base import Check, CheckResult, Reproducer
from conformance.checks.draws import has_rsample
from conformance.checks.subject import FrameworkError, Subject
from conformance.compare import compare_arrays, err_over_tol, project, tolerance
from conformance.kinds import Kind
from conformance.operations import Operation
from conformance.reproducers.script import Script, array_literal, not_written, plain_source

#: Draws per item (all batch elements together), and the fewest per batch element.
DRAWS = 2**9
FEWEST = 16


def event_weights(event: tuple[int, ...]) -> np.ndarray:
    """The weights w of a multivariate draw's coordinates in the derivative judged,
    ∂(Σ w·x)/∂θ: distinct (1, 1 + 1/E, …, 2 − 1/E over the E coordinates in C order), so a
    coordinate's derivative is seen apart from the others' (two swapped coordinates, or one
    wrong where another's error cancels it in the plain sum), and a simplex draw's, whose
    coordinates always sum to 1, is seen at all."""
    size = int(np.prod(event)) if event else 1
    return (1.0 + np.arange(size, dtype=np.float64) / size).reshape(event)


@dataclass
class _Evaluation:
    """What the check's last evaluation left for its reproducer (the item's script is written
    right after it, in the same process): the draws and comparisons a script embeds, and how
    the item failed."""

    subject: Subject
    #: The draws and each comparison's numbers (None: a vector draw, which gets no script).
    kept: dict[str, Any] | None
    raised: bool = False
    by_draw_failed: bool = False
    in_expectation_failed: bool = False
    #: What a univariate draw's script judged in expectation embeds (None: not judged so, or
    #: a vector draw).
    expectation: dict[str, Any] | None = None
    #: The pathwise call the item made last (the names, n, and a vector draw's copies and
    #: weights): where it raised, the script makes the same call.
    call: dict[str, Any] | None = None


def _pathwise_lines(script: Script, vector: bool = False) -> list[str] | None:
    """The script's lines that make the item's pathwise draws and derivatives of the
    parameters in ``NAMES`` as the adapter made them (None: its dialect writes none); a
    ``vector`` draw's parameters copied to their shapes in ``COPIES``, its coordinates weighted
    by ``WEIGHTS``."""
    ctx = {"call": script.call, "arrays": script.arrays, "names": "NAMES"}
    if vector:
        ctx.update(copies="COPIES", weights="WEIGHTS")
    return script.dialect.pathwise(ctx)


def _weights(subject: Subject) -> np.ndarray:
    """The weights of the draw's coordinates judged in expectation (1 for a univariate draw)."""
    event = tuple(subject.expected.event_shape)
    return event_weights(event) if event else np.ones(())


def draws_per_element(subject: Subject) -> int:
    """Draws per batch element of an item judged draw by draw: the item's budget shared."""
    batch = tuple(subject.expected.batch_shape)
    return max(FEWEST, DRAWS // (int(np.prod(batch)) if batch else 1))


#: The draws a script holds to the identity, per parameter: the item's worst ones.
SHOWN_DRAWS = 16


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


class RsampleGradCheck(Check):
    name = CheckName.RSAMPLE_GRAD
    _last: _Evaluation | None = None
    operation = Operation.SAMPLE
    description = (
        "pathwise gradients of rsample draws against the implicit-reparameterisation identity"
    )
    draws_only = True
    single_dtype = "float32"
    law_kinds = frozenset({"cdf"})
    pathwise_maps = True
    continuous_draws = True  # a discrete law's draws (Delta's point mass) have no derivative

    def unsupported_by(
        self, adapter: Adapter, opted_in: frozenset[Operation] = frozenset()
    ) -> str | None:
        if not isinstance(adapter, PathwiseDraws):
            return f"{adapter.name} offers no pathwise derivatives of draws"
        return super().unsupported_by(adapter, opted_in)

    def _names(self, subject: Subject) -> tuple[list[str], dict[str, str]]:
        """The parameters judged, and those not judged, with why: the adapter's exempt ones,
        and a multivariate family's whose derivative its declared map does not give."""
        adapter = subject.adapter
        assert isinstance(adapter, PathwiseDraws)
        family = subject.law.facts
        exempt = dict(adapter.pathwise_exempt(family.name))
        if family.event_rank > 0:
            exempt.update(family.pathwise_without)
        names = [k for k in subject.case.differentiable_parameters if k not in exempt]
        return names, exempt

    def evaluate(self, subject: Subject) -> CheckResult:
        names, exempt = self._names(subject)
        if not has_rsample(subject):
            return CheckResult(True, skip_reason=f"{subject.adapter.name} has no rsample here")
        family = subject.law.facts
        multivariate = family.event_rank > 0
        # A vector sampler of the adapter's own (GPyTorch's root decompositions) follows no map
        # the oracle declares: its derivatives agree with any map's only in expectation.
        own_map = getattr(subject.adapter, "pathwise_own_map", "") if multivariate else ""
        if own_map and not family.has_pathwise_moments:
            return CheckResult(True, skip_reason=own_map)
        # Judged in expectation (pathwise_moments): every parameter of a multivariate family
        # no declared map reads the noise back for (or whose adapter draws by a map of its
        # own), and the exempt parameters (several noises) of a family whose draws' moments
        # the oracle knows.
        if multivariate and (own_map or not family.has_pathwise):
            expected, names = names, []
        elif family.has_pathwise_moments or family.has_bounded_pathwise:
            differentiable = subject.case.differentiable_parameters
            expected = [k for k in exempt if k in differentiable]
        else:
            expected = []
        unjudged = ""
        bounded: BoundedTests | None = None
        if expected and not family.has_pathwise_moments:  # no moments: bounded g instead
            bounded = subject.law.bounded_pathwise(
                _weights(subject), tuple(subject.expected.batch_shape), expected
            )
            unjudged = bounded.unjudged
        elif expected:
            unjudged = subject.law.moments_unjudged()
        if unjudged:
            expected = []
        # Why each parameter judged in expectation is not judged draw by draw (several noises).
        because = {k: v for k, v in exempt.items() if k in expected}
        exempt = {k: v for k, v in exempt.items() if k not in expected}
        if not names and not expected:
            why = (
                f"not judged in expectation: {unjudged}"
                if unjudged
                else (f"no parameter judged draw by draw (exempt: {exempt})")
            )
            return CheckResult(True, skip_reason=why)
        info = family.parameters
        if shaped := [k for k, p in info.items() if p.shape_only]:
            # ExpandedDistribution's batch is expand_to's shape: parameters copied per draw,
            # (n, *batch), cannot expand to it, so the per-draw derivatives cannot be asked for.
            return CheckResult(
                True,
                skip_reason=f"{', '.join(shaped)} sets the batch by its shape: the parameters "
                "cannot be copied per draw against it",
            )
        adapter = subject.adapter
        if multivariate and not getattr(adapter, "pathwise_event_draws", False):
            why = getattr(adapter, "pathwise_event_note", "") or (
                f"{adapter.name}'s pathwise draws copy parameters per draw for univariate "
                "draws only"
            )
            return CheckResult(True, skip_reason=why)
        # What a univariate item's script would embed, kept for its reproducer.
        last = self._last = _Evaluation(subject, None if multivariate else {})
        try:
            return self._judged(subject, names, exempt, expected, because, unjudged, bounded)
        except FrameworkError:
            last.raised = True  # by the call last made (``_draws``): its script makes it again
            raise

    def _judged(
        self,
        subject: Subject,
        names: list[str],
        exempt: dict[str, str],
        expected: list[str],
        because: dict[str, str],
        unjudged: str,
        bounded: BoundedTests | None,
    ) -> CheckResult:
        """``names`` judged draw by draw, then ``expected`` in expectation."""
        last = self._last
        assert last is not None
        result = self._draw_by_draw(subject, names, exempt, last.kept) if names else None
        last.by_draw_failed = result is not None and not result.passed
        if result is not None and not result.passed:
            return result
        if result is not None and unjudged:
            result.metrics["not_judged_in_expectation"] = unjudged
        if expected:
            judged = self._judged_in_expectation(subject, expected, exempt, bounded)
            if because:
                judged.metrics["not_by_draw_because"] = because
            last.in_expectation_failed = not judged.passed
            if result is None or not judged.passed:
                return judged
            result.metrics["in_expectation"] = judged.metrics
        assert result is not None
        return result

    def _draws(
        self, subject: Subject, names: list[str], n: int
    ) -> tuple[np.ndarray | CheckResult, dict, Any, Any, dict]:
        """The adapter's draws and their derivatives by ``names`` (copies per draw), as NumPy
        draws (or a shape failure), with the item's metrics."""
        adapter = subject.adapter
        assert isinstance(adapter, PathwiseDraws)
        info = subject.law.facts.parameters
        batch = tuple(subject.expected.batch_shape)
        event = tuple(subject.expected.event_shape)
        seed = subject.draw_seed(self.name)
        extra: dict[str, Any] = {}
        if subject.law.facts.event_rank > 0:
            extra["copies"] = {
                k: (n, *batch, *np.shape(subject.inputs.params[k])[
                    np.ndim(subject.inputs.params[k]) - info[k].event_rank :
                ])
                for k in names
            }  # fmt: skip
            extra["weights"] = event_weights(event)
        if self._last is not None and self._last.subject is subject:
            self._last.call = {"names": list(names), "n": n, **extra}
        how = adapter.operations.get(Operation.SAMPLE, "draws")
        with subject.framework_call(f"rsample and its gradient ({how})"):
            each, per_draw, summed, total = adapter.pathwise_draws(
                subject.binding, subject.params(), names, n, seed, **extra
            )
        metrics: dict = {
            "draws_per_element": n,
            "batch_elements": int(np.prod(batch)) if batch else 1,
            "seed": seed,
            "judged_parameters": names,
        }
        x = subject.numpy(each, "read draws")
        want = (n, *batch, *event)
        if tuple(x.shape) != want:
            failed = self.fail(subject, Kind.SHAPE, f"draws of shape {x.shape}, expected {want}")
            return failed, per_draw, summed, total, metrics
        return x, per_draw, summed, total, metrics

    def _judged_in_expectation(
        self,
        subject: Subject,
        names: list[str],
        exempt: dict[str, str],
        bounded: BoundedTests | None = None,
    ) -> CheckResult:
        x, per_draw, _, total, metrics = self._draws(subject, names, pathwise_moments.MOMENT_DRAWS)
        if isinstance(x, CheckResult):
            return x
        if exempt:
            metrics["exempt"] = exempt
        weights = _weights(subject)
        return self._in_expectation(subject, x, per_draw, total, names, weights, metrics, bounded)

    def _draw_by_draw(
        self,
        subject: Subject,
        names: list[str],
        exempt: dict[str, str],
        kept: dict[str, Any] | None = None,
    ) -> CheckResult:
        """Each draw's derivatives, and rsample((n,))'s summed gradient, against the identity's
        (or a declared map's) at the draws. ``kept``, where given, receives the draws and each
        comparison's expected numbers, tolerance and judged draws (what a script embeds)."""
        n = draws_per_element(subject)
        x, per_draw, summed, total, metrics = self._draws(subject, names, n)
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
        event = tuple(subject.expected.event_shape)
        extra = {"weights": event_weights(event)} if multivariate else {}
        law = subject.law
        derive = (
            partial(law.pathwise_derivatives, weights=extra["weights"])
            if multivariate
            else law.implicit_derivatives
        )
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
                return self.fail(
                    subject,
                    Kind.SHAPE,
                    f"d draw/d {name} of shape {got.shape}, "
                    f"expected {found.derivatives[name].shape}",
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
            summed_judged = self._summed(
                subject, derive, summed, total[name], name, structure, kept
            )
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
        return self.fail(subject, kind, f"{where}: {compared.detail}", metrics)

    def reproducer(self, subject: Subject) -> Reproducer | None:
        """The item's draws and their derivatives made as the adapter made them, from the
        item's seed, held to the identity's derivatives at the item's own draws (embedded,
        with their tolerances and the draws judged), or, where the item failed in expectation,
        the means of its tests' terms to the oracle's (:meth:`_expectation_reproducer`).
        Where the draws raised, the call that raised, vector draws included
        (:meth:`_raised_reproducer`); otherwise univariate draws only (a declared map's
        derivatives and a vector's copies per draw need the oracle's structure)."""
        names, _ = self._names(subject)
        if self._last is None or self._last.subject is not subject:  # evaluate it again
            # A raise is recorded: the script's draws raise as the item's did.
            with subject.adapter.precision(subject.dtype), contextlib.suppress(FrameworkError):
                self.evaluate(subject)
        last = self._last
        if last is None or last.subject is not subject:
            return None  # skipped before any draw
        if last.raised and last.call is not None:
            return self._raised_reproducer(subject, last.call)
        kept = last.kept
        if kept is None:
            return None  # a vector draw, or skipped before any draw
        if last.in_expectation_failed and not last.by_draw_failed:
            # Judged in expectation: the oracle's expected means embedded (a univariate draw;
            # not where rsample((n,))'s summed gradient alone failed, which needs the
            # parameters' broadcast bookkeeping).
            expectation = last.expectation
            if expectation is None or not expectation["script_sees"]:
                return None
            return self._expectation_reproducer(subject, expectation)
        if not names or "draws" not in kept:
            return None  # the draws' shape failed: sample_shapes' script shows it
        seed = subject.draw_seed(self.name)
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
            made = _pathwise_lines(script)
            if made is None:
                return not_written("pathwise draws")
            return [*made, *PATHWISE_COMPARISON]

        return Reproducer(subject, self.name, body, constants)

    def _raised_reproducer(self, subject: Subject, call: dict[str, Any]) -> Reproducer:
        """The pathwise call that raised, made again as the adapter made it (its names and
        number of draws, a vector draw's per-draw copies and weights): nothing to compare, the
        script raises as the item did."""
        seed = subject.draw_seed(self.name)

        def constants(script: Script) -> list[str]:
            lines = ["", f"SEED = {seed}", f"N = {call['n']}", f"NAMES = {call['names']!r}"]
            if "copies" in call:
                lines.append(f"COPIES = {call['copies']!r}  # each parameter's shape per draw")
            if "weights" in call:
                lines.append(
                    f"WEIGHTS = {array_literal(call['weights'])}  # of the draw's coordinates"
                )
            return lines

        def body(script: Script) -> list[str]:
            made = _pathwise_lines(script, vector="copies" in call)
            if made is None:
                return not_written("pathwise draws")
            return [*made, "print('the draws and their derivatives were made')"]

        return Reproducer(subject, self.name, body, constants)

    def _expectation_reproducer(self, subject: Subject, kept: dict[str, Any]) -> Reproducer:
        """The item's in-expectation draws made as the adapter made them (2¹³ per element,
        from the item's seed), their derivatives' means held to the oracle's (embedded) by the
        check's own t statistics at the item's false-failure probability (not rsample((n,))'s
        summed test: the caller writes no script where that one alone failed)."""
        seed = subject.draw_seed(self.name)
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
            made = _pathwise_lines(script)
            if made is None:
                return not_written("pathwise draws")
            t_source = plain_source(pathwise_moments.t_statistics)
            return [*made, "", "", *t_source, "", "", *EXPECTATION_COMPARISON]

        return Reproducer(subject, self.name, body, constants)

    def _in_expectation(
        self,
        subject: Subject,
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
        kept = self._expectation_kept(subject, x, names, moments, bounded)
        if bounded is not None:
            metrics["test_functions"] = bounded.description
            if np.isnan(draws).any():  # an overflowed tail is a draw, a NaN is none
                bad = int(np.count_nonzero(np.isnan(draws)))
                return self.fail(
                    subject, Kind.VALUE, f"{bad} of {draws.size} draw coordinates are NaN", metrics
                )
        tests: dict[str, list[pathwise_moments.MomentTest]] = {}
        for name in names:
            got = subject.numpy(per_draw[name], "read gradients").astype(np.float64)
            want = (x.shape[0], *np.shape(moments[name][0]))
            if got.shape != want:
                return self.fail(
                    subject, Kind.SHAPE, f"d draw/d {name} of shape {got.shape}, expected {want}"
                )
            if bounded is not None and (failed := self._nan_at_finite(subject, name, got, draws)):
                failed.metrics.update(metrics)
                return failed
            if bounded is None and not (np.isfinite(got).all() and np.isfinite(draws).all()):
                bad = int(np.count_nonzero(~np.isfinite(got)))
                return self.fail(
                    subject,
                    Kind.GRAD,
                    f"d draw/d {name}: {bad} of {got.size} derivatives not finite "
                    f"({int(np.count_nonzero(~np.isfinite(draws)))} draw coordinates not finite)",
                    metrics,
                )
            summed = subject.numpy(total[name], "read gradients").astype(np.float64)
            shape = tuple(np.shape(subject.inputs.params[name]))
            if summed.shape != shape:
                return self.fail(
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
                if failed := self._infinite_in_reach(subject, name, weighted, got, bounded):
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
        return self.fail(subject, Kind.GRAD, message, metrics)

    def _expectation_kept(
        self,
        subject: Subject,
        x: np.ndarray,
        names: list[str],
        moments: dict[str, tuple[np.ndarray, np.ndarray]],
        bounded: BoundedTests | None,
    ) -> dict[str, Any] | None:
        """What a univariate draw's in-expectation script embeds, kept on the check's last
        evaluation (None for a vector draw, or where no evaluation is kept)."""
        last = self._last
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
            "expected": {
                k: tuple(np.asarray(m, dtype=np.float64) for m in moments[k]) for k in names
            },
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
        self, subject: Subject, name: str, got: np.ndarray, draws: np.ndarray
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
        return self.fail(
            subject,
            Kind.NAN,
            f"d draw/d {name}: {int(np.count_nonzero(bad))} of {got.size} derivatives are NaN "
            f"at finite draws (first at index {at}, draw {np.array2string(shown, precision=6)})",
        )

    def _infinite_in_reach(
        self,
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
        return self.fail(
            subject,
            Kind.INF,
            f"d draw/d {name}: {int(np.count_nonzero(bad))} of {got.size} derivatives are "
            f"infinite at finite draws the test functions weigh (first at index {at}: draw "
            f"{float(weighted[at[: weighted.ndim]]):.6g}, derivative {float(got[at]):.6g})",
        )

    def _summed(
        self,
        subject: Subject,
        derive,
        summed: Any,
        total: Any,
        name: str,
        structure,
        kept: dict | None,
    ):
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
