"""sample_fit: each batch element's draws against the oracle's law, at a stated false-failure rate.

One seeded draw of n per batch element (n from :func:`sample_size`), held first to the support,
then by the law's kind (``conformance/checks/gof.py`` has the statistics):

* a univariate family with a CDF: Kolmogorov–Smirnov against the DKWM bound, and the mean and
  the sum of squares of the normal scores Φ⁻¹(F(x));
* a multivariate family: the univariate tests on one-dimensional projections with known laws;
  a discrete vector law (Multinomial, OneHotCategorical, DirichletMultinomial) on its counts'
  projections (Binomial, BetaBinomial, the hot index's Categorical), each count standing for
  its atom as a scalar discrete law's draw does.

Every test runs at :data:`~conformance.checks.gof.ITEM_ALPHA` divided by the item's number of
tests (Bonferroni over batch elements, tests and projections); the message names the worst
statistic, its value, its threshold and the batch element.
"""

from __future__ import annotations

import contextlib
import inspect
from dataclasses import dataclass

import numpy as np
from scipy import special

from conformance.check_names import CheckName
from conformance.checks import draw_scripts, gof
from conformance.checks.base import Check, CheckResult, Reproducer
from conformance.checks.draw_scripts import Requests
from conformance.checks.draws import draw, draw_shapes, outside_support
from conformance.checks.subject import FrameworkError, Subject
from conformance.kinds import Kind
from conformance.operations import DrawMode, Operation
from conformance.reproducers.script import Script, array_literal

#: Draws per item (all batch elements together), and the fewest per batch element, by law:
#: 2**14 draws of one element see a shift of about 0.04 standard deviations (the normal
#: scores' mean) and a scale about 3 % off (their sum of squares) at the item's false-failure
#: rate, at about 20 ms an item (tests/checks/test_gof.py: a 0.1 sd shift and a 5 % scale fail
#: under every seed tried).
DRAWS = {"cdf": 2**14, "pmf": 2**14, "projections": 2**13}
FEWEST = 2**11
#: Points of the empirical and the law's CDF kept for a failing item's plot.
PLOT_POINTS = 101


def sample_size(kind: str, elements: int) -> int:
    """Draws per batch element: the item's budget shared, at least :data:`FEWEST`."""
    return max(FEWEST, DRAWS[kind] // max(elements, 1))


@dataclass
class _Drawn:
    """What the check's last evaluation left for its reproducer (the item's script is written
    right after it, in the same process): its requests, its draws (None where drawing
    raised), the cells of a law with a CDF, and its worst test's verdict and batch element."""

    subject: Subject
    requests: Requests
    drawn: list[np.ndarray] | None = None
    cells: tuple | None = None
    worst: tuple[bool, int] | None = None


class SampleFitCheck(Check):
    name = CheckName.SAMPLE_FIT
    operation = Operation.SAMPLE
    description = "draws against the oracle's law (KS/DKWM and normal scores, projections)"
    draws_only = True
    #: One dtype: the case's last (float64 unless it says otherwise), so the draws are judged
    #: against the law, not float32's underflow at extreme parameters.
    single_dtype = "last"
    #: The laws it can test (``reference.Family.law``): no item for a family with none. A
    #: discrete law ("pmf") is tested like a continuous one on its randomised transform
    #: (each draw k's cell [P(X < k), P(X ≤ k)], the pmf summed): unbiased however many
    #: outcomes there are, where a χ² on the drawn outcomes failed correct Multinomial and
    #: Geometric draws.
    law_kinds = frozenset({"cdf", "pmf", "projections"})
    _last: _Drawn | None = None

    @staticmethod
    def _requests(subject: Subject, n: int) -> Requests:
        """What the item draws; the last request's draws are judged. A sampler that raises
        should do so before building n (GPyTorch's LKJCovariancePrior spent 1.8 s an item
        reaching its error at n): two draws first, or a trace where the framework traces its
        draws (each request a compiled sampler)."""
        if draw_shapes(subject, [(DrawMode.SAMPLE, (n,))]) is None:
            return [(DrawMode.SAMPLE, (2,)), (DrawMode.SAMPLE, (n,))]
        return [(DrawMode.SAMPLE, (n,))]

    @staticmethod
    def _sizes(subject: Subject) -> tuple[tuple[int, ...], int, int]:
        """The batch shape, its number of elements, and the draws per element."""
        batch = tuple(subject.expected.batch_shape)
        elements = int(np.prod(batch)) if batch else 1
        return batch, elements, sample_size(subject.law.kind, elements)

    def evaluate(self, subject: Subject) -> CheckResult:
        law = subject.law
        exp = subject.expected
        batch, elements, n = self._sizes(subject)
        seed = subject.draw_seed(self.name)
        last = self._last = _Drawn(subject, self._requests(subject, n))
        last.drawn = draw(subject, last.requests, seed)
        x = last.drawn[-1]
        want = (n, *batch, *exp.event_shape)
        metrics: dict = {
            "method": subject.adapter.operations[self.operation],
            "law": law.kind,
            "draws_per_element": n,
            "batch_elements": elements,
            "seed": seed,
            "item_false_failure_probability": gof.ITEM_ALPHA,
        }
        if tuple(x.shape) != want:
            return self.fail(
                subject, Kind.SHAPE, f"draws of shape {x.shape}, expected {want}", metrics
            )
        if where := outside_support(subject, x):
            return self.fail(subject, Kind.SAMPLE_SUPPORT, where, metrics)
        verdicts, plot, last.cells = self._verdicts(subject, x, n, elements, seed)
        if verdicts is None:
            return CheckResult(
                True,
                skip_reason="the draws reach too far from the support's lower end to sum "
                "the pmf to them (conformance.expect.laws.PMF_GRID)",
                metrics=metrics,
            )
        if not verdicts:
            return CheckResult(
                True,
                skip_reason="the oracle knows the law of no one-dimensional statistic of these "
                "draws (reference.Family._projections gives none at these parameters)",
                metrics=metrics,
            )
        verdict = gof.worst(verdicts)
        column = verdict.element[0] if verdict.element else 0
        last.worst = (verdict.passed, column)
        if verdict.element and batch:
            verdict.element = tuple(int(i) for i in np.unravel_index(verdict.element[0], batch))
        elif not batch:
            verdict.element = ()
        metrics.update(
            statistic=verdict.statistic,
            value=verdict.value,
            threshold=verdict.threshold,
            worst_element=list(verdict.element),
            projection=verdict.projection or None,
            test_false_failure_probability=verdict.alpha,
            max_err_over_tol=verdict.ratio,
        )
        if verdict.passed:
            return CheckResult(True, metrics=metrics)
        arrays = plot(column) if plot else {}
        return self.fail(subject, Kind.FIT, verdict.describe(), metrics, arrays)

    def _verdicts(self, subject: Subject, x: np.ndarray, n: int, elements: int, seed: int):
        law = subject.law
        if law.kind in ("cdf", "pmf"):
            cells = law.cdf_cells(x)
            if cells is None:
                return None, None, None
            lower, upper = cells
            values = x.reshape(n, elements).astype(np.float64)
            lo, hi = lower.reshape(n, elements), upper.reshape(n, elements)
            tests = gof.UNIVARIATE_TESTS * elements
            found = gof.univariate(values, lo, hi, seed, tests)
            return found, _plotter(values, lo, hi), (values, lo, hi)
        projected = law.projected(x)
        tests = gof.UNIVARIATE_TESTS * elements * max(len(projected), 1)
        found = []
        for p in projected:
            values = p.values.reshape(n, elements)
            lo, hi = p.lower.reshape(n, elements), p.upper.reshape(n, elements)
            found += gof.univariate(values, lo, hi, seed, tests, projection=p.name)
        return found, None, None

    def reproducer(self, subject: Subject) -> Reproducer | None:
        """The item's draws made by the framework from the item's seed, held to shape, dtype
        and support, then (a law with a CDF or a pmf) the check's own three tests on the
        batch element the item found worst, its law's CDF tabulated at the draws' quantiles
        (the law's pmf summed at every outcome drawn); None where the item failed on
        projections' laws, which a script cannot state without the oracle."""
        _, elements, n = self._sizes(subject)
        seed = subject.draw_seed(self.name)
        if self._last is None or self._last.subject is not subject:  # evaluate it again
            # Draws that raise leave none: the script's raise as the item's did.
            with subject.adapter.precision(subject.dtype), contextlib.suppress(FrameworkError):
                self.evaluate(subject)
        last = self._last
        if last is None or last.subject is not subject:
            requests: Requests = [(DrawMode.SAMPLE, (n,))]  # the trace itself raised
            last = _Drawn(subject, requests)
        requests = last.requests
        if last.drawn is not None and not draw_scripts.script_sees_support_failure(
            subject, requests, seed, last.drawn
        ):
            return None
        fit = None
        if last.worst is not None and last.drawn is not None:
            passed, column = last.worst
            if subject.law.kind == "projections":
                if not passed:
                    return None
            else:
                fit = _law_table(subject, last.drawn[-1], column, last.cells)
                fit["tests"] = gof.UNIVARIATE_TESTS * elements

        def constants(script: Script) -> list[str]:
            lines = draw_scripts.constants(subject, seed, {"REQUESTS": requests})
            lines.append(f"N = {n}")
            if fit is not None:
                lines += [
                    f"COLUMN = {fit['column']}  # the batch element the item found worst, flat",
                    f"TESTS = {fit['tests']}  # the item's tests, each at ITEM_ALPHA / TESTS",
                    "# Φ⁻¹ of the law's CDF at both ends of each tabulated draw's cell (the",
                    "# float64 oracle's), interpolated between the rows:",
                    f"TABLE_X = {array_literal(fit['x'])}",
                    f"TABLE_LOWER = {array_literal(fit['lower'])}",
                    f"TABLE_UPPER = {array_literal(fit['upper'])}",
                ]
            return lines

        def body(script: Script) -> list[str]:
            lines = [
                *draw_scripts.definitions(script),
                *draw_scripts.DRAW_PROBLEMS,
                *draw_scripts.drawn(script, subject, "REQUESTS", "drawn"),
                "x = drawn[-1]",
                "print('draws', x.shape, x.dtype)",
                "problems = draw_problems(f'sample{(N,)}', x, (N,))",
                "report(bool(problems), '; '.join(problems))",
            ]
            if fit is None:
                return lines
            return [
                *lines,
                *GOF_SOURCE,
                "values = x.reshape(N, -1)[:, COLUMN].astype(np.float64)[:, None]",
                "lower = special.ndtr(np.interp(values, TABLE_X, TABLE_LOWER))",
                "upper = special.ndtr(np.interp(values, TABLE_X, TABLE_UPPER))",
                "verdict = worst(univariate(values, lower, upper, SEED, TESTS))",
                "print(verdict.describe())",
                "report(not verdict.passed, verdict.describe())",
            ]

        return Reproducer(subject, self.name, body, constants)


#: Rows of the law's table in a script: the draws' quantiles at this many ranks (every
#: outcome drawn, for a discrete law with no more outcomes than this). Interpolated in normal
#: scores, 257 rows give the item's statistics to about 1e-4 of their value (Σz² of Gamma
#: draws 5265.11 for the item's 5265.28; KS distances to 1e-8), at about 15 kB a script.
TABLE_ROWS = 257

#: The check's statistics as a script defines them: the functions' own source.
GOF_SOURCE = [
    f"ITEM_ALPHA = {gof.ITEM_ALPHA!r}",
    f"SCORE_CLIP = {gof.SCORE_CLIP!r}",
    *(
        line
        for item in (
            gof.Verdict,
            gof.dkwm_epsilon,
            gof.ks_distances,
            gof.normal_scores,
            gof.univariate,
            gof.worst,
        )
        for line in ["", "", *inspect.getsource(item).splitlines()]
    ),
]


def _law_table(subject: Subject, x: np.ndarray, column: int, cells: tuple | None) -> dict:
    """Φ⁻¹ of the law's CDF at both ends of the cells of TABLE_ROWS of the draws ``x``
    (n, *batch) of the flat batch element ``column``, at evenly spaced ranks (a script
    interpolates between them), from the item's own ``cells`` (values, lower, upper; each
    (n, elements)); for a discrete law with few outcomes, at every whole number from the
    least to the largest outcome drawn, each exactly."""
    n = x.shape[0]
    values, lower, upper = cells if cells is not None else (x.reshape(n, -1), None, None)
    if subject.law.kind == "pmf":
        drawn = x.reshape(n, -1)[:, column]
        grid = np.arange(drawn.min(), drawn.max() + 1)
        if len(grid) <= TABLE_ROWS:
            x = np.broadcast_to(
                grid.reshape((-1,) + (1,) * (x.ndim - 1)), (len(grid), *x.shape[1:])
            ).astype(drawn.dtype)
            n, lower = len(grid), None
    if lower is None:
        found = subject.law.cdf_cells(x)
        if found is None:
            raise ValueError("the law's cells of these draws are unknown")
        values = x.reshape(n, -1)
        lower, upper = (np.asarray(c).reshape(n, -1) for c in found)
    order = np.argsort(values[:, column], kind="stable")
    xs = values[order, column].astype(np.float64)
    _, first = np.unique(xs, return_index=True)
    if len(first) > TABLE_ROWS:
        first = np.unique(np.linspace(0, len(xs) - 1, TABLE_ROWS).round().astype(int))
        first = first[np.concatenate([[True], np.diff(xs[first]) > 0])]
    at = order[first]
    return {
        "column": int(column),
        "x": xs[first],
        "lower": _scores(lower[at, column]),
        "upper": _scores(upper[at, column]),
    }


def _scores(cdf: np.ndarray) -> np.ndarray:
    """Φ⁻¹ of the law's CDF, clipped where a score's probability is below 1e-300: what a
    script interpolates between its rows, nearly linear in the tails where F is not."""
    with np.errstate(all="ignore"):
        z = special.ndtri(np.clip(np.asarray(cdf, np.float64), 0.0, 1.0))
    return np.clip(z, -gof.SCORE_CLIP, gof.SCORE_CLIP)


def _plotter(values: np.ndarray, lower: np.ndarray, upper: np.ndarray):
    """The worst element's empirical CDF and the law's at PLOT_POINTS quantiles of the draws
    (the report draws them one over the other)."""

    def plot(column: int) -> dict:
        order = np.argsort(values[:, column], kind="stable")
        picks = np.linspace(0, len(order) - 1, PLOT_POINTS).round().astype(int)
        at = order[picks]
        return {
            "draws": values[at, column].tolist(),
            "empirical_cdf": ((picks + 1) / len(order)).tolist(),
            "law_cdf": (0.5 * (lower[at, column] + upper[at, column])).tolist(),
        }

    return plot
