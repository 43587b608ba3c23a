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

import numpy as np

from conformance.check_names import CheckName
from conformance.checks import gof
from conformance.checks.base import Check, CheckResult
from conformance.checks.draws import draw, draw_shapes, outside_support
from conformance.checks.subject import Subject
from conformance.kinds import Kind
from conformance.operations import DrawMode, Operation

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

    def evaluate(self, subject: Subject) -> CheckResult:
        law = subject.law
        exp = subject.expected
        batch = tuple(exp.batch_shape)
        elements = int(np.prod(batch)) if batch else 1
        n = sample_size(law.kind, elements)
        seed = subject.draw_seed(self.name)
        # A sampler that raises should do so before building n (GPyTorch's
        # LKJCovariancePrior spent 1.8 s an item reaching its error at n): two draws first,
        # or a trace where the framework traces its draws (each request a compiled sampler).
        if draw_shapes(subject, [(DrawMode.SAMPLE, (n,))]) is None:
            _, x = draw(subject, [(DrawMode.SAMPLE, (2,)), (DrawMode.SAMPLE, (n,))], seed)
        else:
            (x,) = draw(subject, [(DrawMode.SAMPLE, (n,))], seed)
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
        verdicts, plot = self._verdicts(subject, x, n, elements, seed)
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
                return None, None
            lower, upper = cells
            values = x.reshape(n, elements).astype(np.float64)
            lo, hi = lower.reshape(n, elements), upper.reshape(n, elements)
            tests = gof.UNIVARIATE_TESTS * elements
            found = gof.univariate(values, lo, hi, seed, tests)
            return found, _plotter(values, lo, hi)
        projected = law.projected(x)
        tests = gof.UNIVARIATE_TESTS * elements * max(len(projected), 1)
        found = []
        for p in projected:
            values = p.values.reshape(n, elements)
            lo, hi = p.lower.reshape(n, elements), p.upper.reshape(n, elements)
            found += gof.univariate(values, lo, hi, seed, tests, projection=p.name)
        return found, None


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
