"""The oracle's law of one case's draws: what the sampling checks hold a framework's draws to.

A :class:`DrawLaw` answers, for draws of the case's distribution (at the case's rounded
parameters, with the binding's declared conventions): which draws lie in the support, the CDF
at the ends of each draw's rounding cell (a univariate family) and the one-dimensional
projections with known laws (a multivariate family).
The statistics that judge the draws with these numbers are the checks' (``checks/gof.py``).
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from functools import cached_property

import numpy as np

from conformance import reference, timing
from conformance.answers.draws import (
    BoundedTests,
    FamilyFacts,
    ImplicitDerivatives,
    ParameterFacts,
    ProjectedDraws,
)
from conformance.answers.values import Inputs
from conformance.expect.gradients import perturbed
from conformance.reference import bounded, domains, numdiff

#: The most pmf values a discrete item's cells may sum (support points × batch elements):
#: beyond it (a Poisson at rate 1e9) the law's CDF is not formed and the item says so.
PMF_GRID = 2**22
#: How many units in the last place a draw stands for on either side (see :func:`cell_ends`).
CELL_ULPS = 2


def cell_ends(draws: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The interval a draw x stands for: from :data:`CELL_ULPS` units in the last place (of the
    draw's own dtype) below x to as many above. A draw is a rounded number, and frameworks clamp
    draws a few ulps inside an open support (torch's clipped sigmoid draws 1 − ε, two ulps
    below 1, where the law's draws round to 1 − ε/2 or 1): judged by ``F`` at these ends,
    neither rounding nor such a clamp is a false alarm, while a law off by more than a few ulps
    still is (an atom at float64's smallest normal where the law's mass lies among the
    subnormals and 0: torch's Gamma)."""
    x = np.asarray(draws)
    kind = x.dtype if x.dtype in (np.float32, np.float64) else np.dtype(np.float64)
    below = above = x.astype(kind)
    for _ in range(CELL_ULPS):
        below = np.nextafter(below, kind.type(-np.inf))
        above = np.nextafter(above, kind.type(np.inf))
    return below.astype(np.float64), above.astype(np.float64)


#: A matrix draw stands for the matrices within this many units in the last place (of its
#: own dtype, times its dimension and largest diagonal entry) along the identity.
MATRIX_ULPS = 8


def _nudged(matrices: np.ndarray) -> np.ndarray:
    """``matrices`` + δ·I, δ a few ulps of the largest diagonal entry: a draw rounded onto (or
    an ulp beyond) the boundary of the positive definite cone. At a Wishart's df near d − 1 the
    law's own draws are singular to float64's precision (scipy's are, 59 % of them at df = 1.01,
    d = 2), and an LKJ matrix at a small concentration is nearly so."""
    d = matrices.shape[-1]
    eps = np.finfo(matrices.dtype).eps
    diag = np.abs(np.diagonal(matrices, axis1=-2, axis2=-1)).max(axis=-1, keepdims=True)
    delta = (MATRIX_ULPS * d * eps * np.maximum(diag, np.finfo(matrices.dtype).tiny))[..., None]
    with np.errstate(invalid="ignore", over="ignore"):  # an infinite draw stays outside
        return matrices.astype(np.float64) + delta * np.eye(d)


#: The implicit derivative is judged where the draw's CDF and survival both reach this: nearer
#: the ends, ∂F/∂θ by differences of F loses the relative precision float32 is judged to.
IMPLICIT_TAIL = 1e-6
#: Richardson's first steps for ∂F/∂θ, as shares of the parameter's own step unit
#: (reference.numdiff.step_scale), tried in turn: the CDF varies on the law's scale, which can
#: be far below the parameter's magnitude. Each try halves its step IMPLICIT_LEVELS − 1 times.
IMPLICIT_STEPS = (1e-3, 1e-6, 1e-9)
IMPLICIT_LEVELS = 5
#: Relative agreement of a try's last two extrapolations for its estimate to be used.
IMPLICIT_AGREEMENT = 1e-8
#: The least change of F (in [0, 1], rounded absolutely to about 1e-16) a difference may rest
#: on: 1e-7 keeps the quotient's rounding near 1e-9.
IMPLICIT_RESOLUTION = 1e-7
#: Relative step of the draw (and of the parameters) for the derivative's sensitivity.
SENSITIVITY_STEP = 1e-4
#: The relative step of a declared map's sensitivity (:meth:`DrawLaw.pathwise_derivatives`): the
#: map's derivatives are closed forms, so a step of float32's rounding is resolved, and a larger
#: one can leave the parameters' domain where float32's rounding does not (a CAR correlation of
#: 0.999999 moved by 1e-4 is no correlation).
PATHWISE_STEP = 1e-7
#: Random directions of that step a multivariate draw's sensitivity takes the worst of.
SENSITIVITY_DRAWS = 3


#: The bounded test functions' terms as a reproducer script defines them: the oracle's own
#: source (``reference.bounded``), so a script weighs the framework's derivatives exactly as
#: the item did.
BOUNDED_TERMS_SOURCE = [
    line
    for function in (bounded.coordinate, bounded.derivative_terms)
    for line in ["", "", *inspect.getsource(function).splitlines()]
]


class DrawLaw:
    """The law of one case's draws, from the oracle (see the module docstring)."""

    def __init__(self, family: reference.Family, inputs: Inputs, options: tuple) -> None:
        self.family = family
        self.inputs = inputs
        self.options = dict(options)
        self.parametrization = inputs.parametrization

    @property
    def kind(self) -> str:
        """``cdf``, ``pmf``, ``projections`` or "" (see :meth:`reference.Family.law`)."""
        return self.family.law(self.parametrization)

    @property
    def note(self) -> str:
        """Why draws are held to no law ("" where there is one)."""
        return self.family.no_law

    @cached_property
    def facts(self) -> FamilyFacts:
        """What the sampling checks read of the family, as data."""
        family = self.family
        info = family.parametrizations[self.parametrization]
        return FamilyFacts(
            name=family.name,
            event_rank=family.value.event_rank,
            discrete=bool(family.value.discrete),
            parameters={
                k: ParameterFacts(p.event_rank, p.structure, p.shape_only) for k, p in info.items()
            },
            pathwise_without=dict(family.pathwise_without),
            has_pathwise=family.has_pathwise(),
            has_pathwise_moments=family.has_pathwise_moments(),
            has_bounded_pathwise=family.has_bounded_pathwise(),
        )

    def moments_unjudged(self) -> str:
        """Why the draws' mean pathwise derivatives cannot be judged at these parameters
        ("" where they can: :meth:`reference.Family.moments_unjudged`)."""
        return self.family.moments_unjudged(self.params, self.parametrization)

    @cached_property
    def params(self) -> dict[str, np.ndarray]:
        return self.inputs.params

    def _evaluate(self, draws: np.ndarray) -> reference.Evaluation:
        value = np.asarray(draws, dtype=np.float64)
        return self.family.evaluate(self.params, value, self.parametrization, self.options)

    @timing.timed("oracle")
    def in_support(self, draws: np.ndarray) -> np.ndarray:
        """Elementwise (draws' batch): is the draw in the support (and a number)?

        A univariate draw is also accepted where a neighbouring number of its own dtype is in
        the support: a draw is a rounded number, and rounding may land on the support's end or
        overflow to ±inf (float32's Gamma(0.01) draws 0, Pareto(α = 0.01) draws inf). A vector
        draw is accepted where its components moved one ulp the same way are inside: float32's
        −π is below −π, and NumPyro's SineSkewed draws it on the circle's end."""
        raw = np.asarray(draws)
        value = raw.astype(np.float64)
        rank = self.family.value.event_rank
        if rank == 0 and raw.dtype.kind == "f":
            inside = self._inside(value)
            for way in (-np.inf, np.inf):
                near = np.nextafter(raw, raw.dtype.type(way)).astype(np.float64)
                inside |= self._inside(near) & ~np.isnan(value)
            return inside
        axes = tuple(range(value.ndim - rank, value.ndim))
        finite = np.all(np.isfinite(value), axis=axes) if axes else np.isfinite(value)
        inside = finite & self._inside(value)
        if rank == 1 and raw.dtype.kind == "f" and not np.all(inside):
            for way in (-np.inf, np.inf):
                near = np.nextafter(raw, raw.dtype.type(way)).astype(np.float64)
                inside |= finite & self._inside(near)
        if rank == 2 and raw.dtype.kind == "f" and not np.all(inside):
            inside |= finite & self._inside(np.where(finite[..., None, None], _nudged(raw), 0.0))
        return inside

    def support_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """A univariate support's closed hull per batch element (±inf where no end holds): what
        a reproducer script holds draws to, never narrower than the support itself."""
        batch = tuple(self.family.batch_shape(self.params, self.parametrization))
        lower = np.full(batch, -np.inf)
        upper = np.full(batch, np.inf)
        name = self.family.value.support
        interval = domains.interval(name)
        if interval is not None:
            lower, upper = np.maximum(lower, interval.lo), np.minimum(upper, interval.hi)
        elif name == "circular":
            lower, upper = np.maximum(lower, -np.pi), np.minimum(upper, np.pi)
        declared = self.family.support(self.params, self.parametrization)
        if declared.lower is not None:
            lower = np.maximum(lower, np.asarray(declared.lower, np.float64))
        if declared.upper is not None:
            upper = np.minimum(upper, np.asarray(declared.upper, np.float64))
        return np.broadcast_to(lower, batch), np.broadcast_to(upper, batch)

    def _inside(self, value: np.ndarray) -> np.ndarray:
        """The oracle's support test, False at non-finite numbers."""
        finite = np.isfinite(value) if self.family.value.event_rank == 0 else True
        with np.errstate(all="ignore"):
            inside = np.asarray(self._evaluate(np.where(np.isfinite(value), value, 0.0)).in_support)
        return finite & inside

    @timing.timed("oracle")
    def cdf_cells(self, draws: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """F at both ends of each draw's rounding cell (:func:`cell_ends`); for a discrete law,
        P(X < k) and P(X ≤ k) at each draw k (its cell is its atom), or None where the pmf
        cannot be summed that far (:data:`PMF_GRID`)."""
        if self.kind == reference.PMF:
            return self._pmf_cells(np.asarray(draws))
        lo, hi = cell_ends(draws)
        return self._evaluate(lo).cdf, self._evaluate(hi).cdf

    def _pmf_cells(self, draws: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """The pmf summed from the support's lower end up to each draw, per batch element: one
        evaluation of the oracle on the grid lower … max(draw) (shape (G, *batch))."""
        x = draws.astype(np.float64)
        batch = x.shape[1:]
        interval = domains.interval(self.family.value.support)
        ends = [interval.lo] if interval is not None and np.isfinite(interval.lo) else []
        declared = self.family.support(self.params, self.parametrization).lower
        if declared is not None:
            ends.append(declared)
        if not ends:
            return None  # an integer law unbounded below: no end to sum from
        lower = np.broadcast_to(np.maximum.reduce([np.asarray(e, np.float64) for e in ends]), batch)
        if not (np.all(np.isfinite(x)) and np.all(x == np.round(x)) and np.all(x >= lower)):
            return None  # the support check reports such draws
        size = int(np.max(x - lower)) + 1 if x.size else 1
        if size * max(int(np.prod(batch)), 1) > PMF_GRID:
            return None
        grid = lower + np.arange(size, dtype=np.float64).reshape((size,) + (1,) * len(batch))
        with np.errstate(all="ignore"):
            pmf = np.exp(np.asarray(self._evaluate(grid).log_prob))
        pmf = np.where(np.isfinite(pmf), pmf, 0.0)
        at_most = np.minimum(np.cumsum(pmf, axis=0), 1.0)
        index = (x - lower).astype(np.int64)
        upper = np.take_along_axis(at_most, index, axis=0)
        below = np.clip(upper - np.take_along_axis(pmf, index, axis=0), 0.0, 1.0)
        return below, upper

    @timing.timed("oracle")
    def implicit_derivatives(self, draws: np.ndarray, names: list[str]) -> ImplicitDerivatives:
        """dx/dθ of univariate draws ``draws`` (shape (n, *batch)) for each parameter in
        ``names``, by the implicit-reparameterisation identity with the oracle's CDF and density.

        ∂F/∂θ comes from Richardson's differences of the float64 CDF, tried at steps of
        :data:`IMPLICIT_STEPS` of the parameter's unit (the law can vary on a scale far below
        the parameter's magnitude: a location 10 with scale 1e-6); a draw is judged where one
        try's last two extrapolations agree to :data:`IMPLICIT_AGREEMENT`, so the oracle
        never holds a framework to a difference quotient that has not converged."""
        raw = np.asarray(draws)
        x = raw.astype(np.float64)
        params = {k: np.broadcast_to(v, x.shape).astype(np.float64) for k, v in self.params.items()}
        info = self.family.parametrizations[self.parametrization]
        # A draw at 0 or among its dtype's subnormals is rounded absolutely, not relatively:
        # the tolerance's model of rounding does not hold there.
        tiny = np.finfo(raw.dtype).tiny if raw.dtype.kind == "f" else 0.0
        with np.errstate(all="ignore"):
            found = self._evaluate_at(params, x)
            F, density = np.asarray(found.cdf), self._density(params, x, found)
            bulk = (
                np.isfinite(x)
                & (np.abs(x) >= tiny)
                & (x != 0)
                & (np.minimum(F, 1.0 - F) >= IMPLICIT_TAIL)
                & np.isfinite(density)
                & (density > 0)
            )
            at = np.where(bulk, x, np.nan)
            at_draws = self._evaluate_at(params, at)  # shared by every parameter's derivative
            # A step of x well inside the law's local width (min(F, 1 − F)/f), so F at the
            # shifted draw is resolved too; the sensitivity is per relative unit of x.
            width = np.minimum(F, 1.0 - F) / density
            step = np.minimum(SENSITIVITY_STEP * np.abs(at), 1e-3 * width)
            derivatives, sensitivity, judged_by = {}, {}, {}
            for name in names:
                unit = numdiff.step_scale(info[name].domain, params[name])
                exact, ok, steps = self._implicit(params, at, name, unit, at_draws)
                # The sensitivity is read only where the derivative is judged: a draw whose
                # differences never settled (all tries spent) is not tried three times more,
                # and the others try the step that settled them first.
                at_ok = np.where(ok, at, np.nan)
                # The draw moved up and down, and the judged parameters moved together by one
                # relative unit (a framework rounds what it computes from them, as the
                # comparison of log_prob allows for): three derivatives per draw, stacked on a
                # leading axis and taken in one pass (each draw's own tries, as alone).
                moved = {k: v * (1.0 + SENSITIVITY_STEP) if k in names else v
                         for k, v in params.items()}  # fmt: skip
                three, three_ok, _ = self._implicit(
                    {k: np.stack([v, v, moved[k]]) for k, v in params.items()},
                    np.stack([at_ok + step, at_ok - step, at_ok]),
                    name,
                    unit,
                    prefer=np.stack([steps] * 3),
                )
                (up, down, shifted), (ok_up, ok_down, ok_moved) = three, three_ok
                slopes = np.stack([np.where(ok_up, np.abs(up - exact), np.nan),
                                   np.where(ok_down, np.abs(exact - down), np.nan)])  # fmt: skip
                spread = np.max(np.where(np.isnan(slopes), 0.0, slopes), axis=0)
                by_params = np.where(ok_moved, np.abs(shifted - exact) / SENSITIVITY_STEP, 0.0)
                sensitivity[name] = np.where(step > 0, spread / step * np.abs(at), 0.0) + by_params
                derivatives[name] = exact
                judged_by[name] = bulk & ok
        return ImplicitDerivatives(derivatives, sensitivity, judged_by)

    @timing.timed("oracle")
    def pathwise_derivatives(
        self, draws: np.ndarray, names: list[str], weights: np.ndarray | None = None
    ) -> ImplicitDerivatives:
        """For multivariate draws (shape (n, *batch, *event)) of a family whose draws are a
        declared map of standard noise (:meth:`reference.Family.pathwise`): ∂(Σ_event w·x)/∂θ
        of each draw (``weights`` w of the event's shape, default ones), with each parameter in
        ``names`` copied per draw (shape (n, *batch, *its event)); the sensitivity is how far
        that moves when the draw's coordinates each move by one relative unit (the changes
        summed), or when every parameter does (random signs, a fixed seed; symmetric matrices
        moved symmetrically); a draw with a non-finite coordinate or derivative is not
        judged."""
        x = np.asarray(draws, dtype=np.float64)
        rank = self.family.value.event_rank
        event_axes = tuple(range(x.ndim - rank, x.ndim))
        info = self.family.parametrizations[self.parametrization]

        def derivatives(params: dict[str, np.ndarray], at: np.ndarray) -> dict[str, np.ndarray]:
            found = self.family.pathwise(params, at, self.parametrization, self.options, weights)
            return {k: found[k] for k in names}

        rng = np.random.default_rng(0)
        with np.errstate(all="ignore"):
            judged = np.all(np.isfinite(x), axis=event_axes)
            at = np.where(np.expand_dims(judged, event_axes), x, 0.0)
            exact = derivatives(dict(self.params), at)

            def change(moved: dict[str, np.ndarray], k: str) -> np.ndarray:
                found = np.abs(moved[k] - exact[k]) / PATHWISE_STEP
                return np.nan_to_num(found, nan=0.0, posinf=0.0)

            # The draw's coordinates each moved alone, the changes summed: each coordinate is
            # rounded on its own, and a map read back through an ill-conditioned factor
            # amplifies some coordinates' rounding far more than others' (a random direction
            # can miss them).
            sensitivity = {k: np.zeros_like(v) for k, v in exact.items()}
            for c in np.ndindex(x.shape[x.ndim - rank :]):
                one = np.zeros(x.shape[x.ndim - rank :])
                one[c] = PATHWISE_STEP
                moved = derivatives(self.params, at * (1.0 + one))
                for k in names:
                    sensitivity[k] = sensitivity[k] + change(moved, k)
            for _ in range(SENSITIVITY_DRAWS):
                moved_params = {
                    k: perturbed(v, info[k].structure, rng, PATHWISE_STEP)
                    if not info[k].static
                    else v
                    for k, v in self.params.items()
                }
                moved = derivatives(moved_params, at)
                for k in names:
                    sensitivity[k] = np.maximum(sensitivity[k], change(moved, k))
            judged_by = {}
            for k in names:
                axes = tuple(range(x.ndim - rank, exact[k].ndim))
                finite = np.isfinite(exact[k])
                judged_by[k] = judged & (np.all(finite, axis=axes) if axes else finite)
        return ImplicitDerivatives(exact, sensitivity, judged_by)

    @timing.timed("oracle")
    def pathwise_moments(
        self, weights: np.ndarray, batch: tuple[int, ...], names: list[str]
    ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """(∂E[s]/∂θ, ∂E[s²]/∂θ), s = Σ_event w·x, per batch element for each parameter in
        ``names`` (:meth:`reference.Family.pathwise_moments`)."""
        with np.errstate(all="ignore"):
            return self.family.pathwise_moments(
                self.params, weights, batch, self.parametrization, self.options, names
            )

    @timing.timed("oracle")
    def bounded_pathwise(
        self, weights: np.ndarray, batch: tuple[int, ...], names: list[str]
    ) -> BoundedTests:
        """The bounded test functions' placement and (∂E[g₁]/∂θ, ∂E[g₂]/∂θ) per batch element
        for each parameter in ``names`` (:meth:`reference.Family.bounded_pathwise`), judged
        for draws of the inputs' dtype."""
        with np.errstate(all="ignore"):
            found = self.family.bounded_pathwise(
                self.params, weights, batch, self.parametrization, self.options, names
            )
        dtype = np.dtype(self.inputs.dtype)
        return BoundedTests(
            centre=found.centre,
            width=found.width,
            log_scale=found.log_scale,
            derivatives=found.derivatives,
            judged=found.judged(dtype),
            unjudged=found.unjudged(dtype),
            description=found.description(dtype),
            terms=found.terms,
            source=tuple(BOUNDED_TERMS_SOURCE),
        )

    def _implicit(
        self,
        params,
        at,
        name,
        unit,
        base: reference.Evaluation | None = None,
        prefer: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """−(∂F/∂θ)/f at ``at`` for parameter ``name``, where its differences converged, and the
        first step of the try that settled each draw (NaN where none did). ``prefer``, a step
        per draw, is tried before the others: a nearby point's derivative usually settles at
        the step that settled this one, and then no probe is needed."""
        if base is None:
            base = self._evaluate_at(params, at)
        best = np.full(at.shape, np.nan)
        settled_at = np.full(at.shape, np.nan)
        done = np.zeros(at.shape, dtype=bool)
        density = self._density(params, at, base)
        for first in self._tries(params, at, base, name, unit, prefer, done):
            # A later try only serves the draws no earlier one settled (a NaN draw is never
            # settled): it evaluates those alone, and none once every draw has settled.
            open_ = ~done & ~np.isnan(at) & ~np.isnan(first)
            if not open_.any():
                continue
            estimate, settled = self._richardson_try(
                {k: v[open_] for k, v in params.items()}, at[open_], name, first[open_]
            )
            best[open_] = estimate
            done[open_] = settled
            settled_at[open_] = np.where(settled, first[open_], np.nan)
        value = -np.where(done, best, np.nan) / density
        return value, done & np.isfinite(value), settled_at

    def _tries(self, params, at, base, name, unit, prefer, done) -> Iterator[np.ndarray]:
        """The first steps of the tries, each broadcast per draw; the probe that sizes one to
        the law is taken only when a draw is still open after ``prefer``'s try."""
        if prefer is not None:
            yield prefer
            if (done | np.isnan(at)).all():
                return
        for first in self._first_steps(params, at, np.asarray(base.cdf), name, unit):
            if (done | np.isnan(at)).all():
                return
            yield np.broadcast_to(first, at.shape)

    def _richardson_try(
        self, params: dict[str, np.ndarray], at: np.ndarray, name: str, first: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """One Richardson tableau of ∂F/∂θ from step ``first``: its estimate, and where its last
        two extrapolations agree and its last difference of F is resolved."""
        # Every level's two points in one evaluation of the oracle, stacked on a leading axis
        # (its numbers are elementwise: each the one it has alone).
        h = first / (2.0 ** np.arange(IMPLICIT_LEVELS)).reshape((-1,) + (1,) * first.ndim)
        plus, minus = params[name] + h, params[name] - h
        F_plus, F_minus = np.split(self._cdf_at_moved(params, at, name, plus, minus), 2)
        rows: list[list[np.ndarray]] = []
        for level in range(IMPLICIT_LEVELS):
            taken = plus[level] - minus[level]
            change = F_plus[level] - F_minus[level]
            row = [change / taken]
            for j, prev in enumerate(rows[-1] if rows else []):
                row.append(row[j] + (row[j] - prev) / (4.0 ** (j + 1) - 1.0))
            rows.append(row)
        estimate, previous = rows[-1][-1], rows[-2][-1]
        agree = np.abs(estimate - previous) <= IMPLICIT_AGREEMENT * np.abs(estimate) + 1e-300
        # and the last difference of F resolved above float64's rounding of F.
        agree &= np.isfinite(estimate) & (np.abs(change) >= IMPLICIT_RESOLUTION)
        return estimate, agree

    def _first_steps(self, params, at, F, name, unit) -> list[np.ndarray]:
        """Richardson's first steps to try: one sized to the law (moving F by a hundredth of
        its smaller tail at the slope one probe measures; a location 0 with scale 250 needs
        steps far above the location's unit), then :data:`IMPLICIT_STEPS` of the unit."""
        probe = unit * IMPLICIT_STEPS[0]
        plus, minus = params[name] + probe, params[name] - probe
        F_plus, F_minus = self._cdf_at_moved(params, at, name, plus[None], minus[None])
        change = F_plus - F_minus
        slope = np.abs(change) / (2 * probe)
        sized = 0.01 * np.minimum(F, 1.0 - F) / np.where(slope > 0, slope, np.nan)
        if self.family.parametrizations[self.parametrization][name].domain != "real":
            sized = np.minimum(sized, 0.5 * unit)  # never a step that leaves the domain
        return [sized, *(unit * share for share in IMPLICIT_STEPS)]

    def _cdf_at_moved(
        self,
        params: dict[str, np.ndarray],
        at: np.ndarray,
        name: str,
        plus: np.ndarray,
        minus: np.ndarray,
    ) -> np.ndarray:
        """F at ``at`` with parameter ``name`` moved to each of ``plus`` and then ``minus``
        (each shaped (k, *at.shape)), in one evaluation: shape (2k, *at.shape)."""
        moved = np.concatenate([plus, minus])
        stacked = {k: np.broadcast_to(v, moved.shape) for k, v in params.items()}
        stacked[name] = moved
        return np.asarray(self._evaluate_at(stacked, np.broadcast_to(at, moved.shape)).cdf)

    def _density(
        self, params: dict[str, np.ndarray], value: np.ndarray, found: reference.Evaluation
    ) -> np.ndarray:
        """The draws' density at ``value``: the family's own where log_prob is not it
        (:meth:`reference.Family.draw_log_density`), else exp(log_prob) of ``found``."""
        own = self.family.draw_log_density(params, value, self.parametrization, self.options)
        return np.exp(np.asarray(found.log_prob if own is None else own))

    def _evaluate_at(
        self, params: dict[str, np.ndarray], value: np.ndarray
    ) -> reference.Evaluation:
        return self.family.evaluate(params, value, self.parametrization, self.options)

    @timing.timed("oracle")
    def projected(self, draws: np.ndarray) -> list[ProjectedDraws]:
        """Each projection the oracle knows the law of, applied to the draws (shape
        (n, *batch, *event)), with the CDF at its values' cell ends."""
        rank = self.family.value.event_rank
        batch = draws.shape[1 : draws.ndim - rank]
        found = []
        for projection in self.family.projections(
            self.params, batch, self.parametrization, self.options
        ):
            with np.errstate(all="ignore"):
                values = np.asarray(projection.apply(np.asarray(draws, dtype=np.float64)))
                if projection.discrete:  # a count's cell is its atom
                    lower, upper = projection.cdf(values - 1.0), projection.cdf(values)
                else:  # computed in float64 from the draws: the cells are float64's
                    lo, hi = cell_ends(values)
                    lower, upper = projection.cdf(lo), projection.cdf(hi)
            found.append(ProjectedDraws(projection.name, values, lower, upper))
        return found
