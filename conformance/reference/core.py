"""The oracle's building blocks: parameter metadata, batch semantics, and the family base class.

Every family computes its log density on inputs that are already broadcast to one common batch
shape, so the batch semantics (which every framework must reproduce) live in exactly one place.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from . import bounded, domains
from .numdiff import richardson_elementwise_grad

Arrays = Mapping[str, np.ndarray]
Options = Mapping[str, Any]


@dataclass(frozen=True)
class ParamInfo:
    """What the oracle knows of one parameter: its event rank and its mathematical domain."""

    event_rank: int
    domain: str
    integer: bool = False
    structure: str = "dense"  # how a gradient is compared: dense | symmetric | lower_triangular
    #: A plain Python number (e.g. LKJCholesky's dimension), not an array: never broadcast,
    #: not part of the batch shape, passed to frameworks as int/float.
    static: bool = False
    #: Values inside the domain where the density changes form at the support's end (Gamma's
    #: concentration 1: the density at 0 goes from +inf to rate to 0): edges worth a case.
    form_changes: tuple[float, ...] = ()
    #: Read for its shape alone (ExpandedDistribution's ``expand_to``: the target batch shape),
    #: so its values carry no batch and copies of the other parameters per draw cannot be
    #: expressed against it.
    shape_only: bool = False

    @property
    def differentiable(self) -> bool:
        return not self.integer


@dataclass(frozen=True)
class ValueInfo:
    """The value's event rank, whether it is discrete, and its support (by name)."""

    event_rank: int
    support: str
    discrete: bool = False
    structure: str = "dense"  # how a gradient w.r.t. the value is compared (see ParamInfo)
    #: Parameters at whose value the density has a kink in the value (|x − loc|): there it has
    #: no derivative, so generated points that land on one compare values only.
    kink_at: tuple[str, ...] = ()


class OracleError(ValueError):
    """Inputs that the oracle cannot evaluate (wrong parameters, shapes that do not broadcast)."""


@dataclass
class Broadcast:
    """Inputs broadcast to ``lp_shape`` plus their own event shapes."""

    params: dict[str, np.ndarray]
    value: np.ndarray
    batch_shape: tuple[int, ...]
    lp_shape: tuple[int, ...]
    event_shape: tuple[int, ...]


@dataclass(frozen=True)
class Support:
    """The value's support at given parameters, declared once (:meth:`Family.support`):
    membership (``-inf`` outside it, what a validating framework must reject) and the ends the
    generated edge cases put values at both follow from it.

    ``name``: the named support (:mod:`reference.domains`), always required. ``lower`` and
    ``upper``: ends the parameters set (Uniform's ``low``, Binomial's ``total_count``,
    Categorical's last category), arrays broadcast like the value's batch or numbers; closed
    unless ``lower_open``/``upper_open``.
    ``event_total``: what a count vector's components add up to (Multinomial's
    ``total_count``, a one-hot vector's 1). ``interior``: every component strictly positive
    (a simplex without its faces)."""

    name: str
    lower: Any = None
    upper: Any = None
    event_total: Any = None
    interior: bool = False
    #: The parameter-set ends are closed unless said open (Levy's (loc, ∞)).
    lower_open: bool = False
    upper_open: bool = False

    def contains(self, value: np.ndarray, event_rank: int) -> np.ndarray:
        """Elementwise (over the value's batch): is ``value`` inside?"""
        ok = domains.contains(self.name, value, event_rank)
        if self.lower is not None:
            ok = ok & ((value > self.lower) if self.lower_open else (value >= self.lower))
        if self.upper is not None:
            ok = ok & ((value < self.upper) if self.upper_open else (value <= self.upper))
        if self.event_total is not None:
            ok = ok & (value.sum(-1) == self.event_total)
        if self.interior:
            ok = ok & np.all(value > 0, axis=-1)
        return ok

    def ends(self) -> tuple[float | None, float | None]:
        """The ends the parameters set (scalar parameters), None where the named support's own
        end holds (an infinite end is none: GeneralizedPareto is unbounded above for ξ ≥ 0)."""

        def end(x: Any) -> float | None:
            return None if x is None or not np.isfinite(x) else float(x)

        return end(self.lower), end(self.upper)


@dataclass(frozen=True)
class Projection:
    """A one-dimensional statistic of a multivariate draw whose law the oracle knows (a
    Gaussian's linear projection is Normal, a Dirichlet's coordinate is Beta): draws of a
    family without a CDF of its own are held to these laws (:meth:`Family.projections`).

    ``apply`` maps values (..., *event) to the statistic (...); ``cdf`` gives the statistic's
    CDF at such numbers, its arguments broadcasting with the batch the projection was made for.
    A ``discrete`` statistic takes whole numbers (a Multinomial's count): each value k stands
    for its atom, [P(X < k), P(X ≤ k)] = [cdf(k − 1), cdf(k)], not for a rounding cell.
    """

    name: str
    apply: Callable[[np.ndarray], np.ndarray]
    cdf: Callable[[np.ndarray], np.ndarray]
    discrete: bool = False


#: The laws draws are held to (:meth:`Family.law`): a univariate CDF, a probability mass
#: function read from log_prob, one-dimensional projections with known CDFs.
CDF, PMF, PROJECTIONS = "cdf", "pmf", "projections"


@dataclass(frozen=True)
class BoundedPathwise:
    """What :meth:`Family.bounded_pathwise` gives: the bumps' placement per batch element, the
    scale they are placed on, and each parameter's (∂E[g₁]/∂θ, ∂E[g₂]/∂θ), NaN at an element
    not :attr:`placed` (quartiles that overflow float64) or whose quadrature did not
    :attr:`converged`."""

    centre: np.ndarray
    width: np.ndarray
    log_scale: bool
    placed: np.ndarray
    converged: np.ndarray
    derivatives: dict[str, tuple[np.ndarray, np.ndarray]]

    def terms(self, s: np.ndarray, ds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each draw's g₁'(s)·∂s/∂θ and g₂'(s)·∂s/∂θ (:func:`bounded.derivative_terms`):
        their means must be :attr:`derivatives`."""
        return bounded.derivative_terms(s, ds, self.centre, self.width, self.log_scale)

    def judged(self, dtype: np.dtype) -> np.ndarray:
        """Per batch element: placed, converged, and the bumps within the range of draws of
        ``dtype`` (:func:`bounded.within_range`)."""
        inside = bounded.within_range(self.centre, self.width, self.log_scale, dtype)
        return self.placed & self.converged & inside

    def unjudged(self, dtype: np.dtype) -> str:
        """Why no batch element's draws of ``dtype`` can be judged ("" where some can)."""
        if np.any(self.judged(dtype)):
            return ""
        if not np.any(self.placed):
            return "the law's quartiles overflow float64 at every batch element"
        if not np.any(self.placed & self.converged):
            return "the test functions' quadrature did not converge at any batch element"
        return (
            f"the test functions reach beyond {np.dtype(dtype).name}'s range at every batch "
            "element: draws there round to 0 or overflow and cannot show the law"
        )

    def description(self, dtype: np.dtype) -> dict[str, Any]:
        """The test functions as an item's metrics state them."""
        return {
            "functions": list(bounded.NAMES),
            "z": "(log s - centre) / width" if self.log_scale else "(s - centre) / width",
            "centre": np.asarray(self.centre).tolist(),
            "width": np.asarray(self.width).tolist(),
            "judged_elements": int(np.count_nonzero(self.judged(dtype))),
            "elements": int(np.size(self.placed)),
        }


class Evaluation:
    """The oracle at one input: the inputs broadcast once, and log_prob, support, validity and
    the elementwise gradients each computed at most once, when first asked for. Every
    expectation of one input is built from one evaluation (:meth:`Family.evaluate`)."""

    def __init__(
        self,
        family: Family,
        inputs: Broadcast,
        parametrization: str,
        options: dict[str, Any],
        shapes: dict[str, tuple[int, ...]],
    ) -> None:
        self.family = family
        self.inputs = inputs
        self.parametrization = parametrization
        self.options = options
        #: Every input's own shape before broadcasting, and its event rank (``value`` too).
        self.shapes = shapes
        info = family.params(parametrization)
        self.ranks = {k: p.event_rank for k, p in info.items()} | {"value": family.value.event_rank}

    def input(self, name: str) -> np.ndarray:
        """Input ``name`` (a parameter or ``value``) broadcast to the log_prob batch."""
        return self.inputs.value if name == "value" else self.inputs.params[name]

    @cached_property
    def in_support(self) -> np.ndarray:
        """Elementwise (log_prob-shaped): is the value inside the support?"""
        b = self.inputs
        with np.errstate(all="ignore"):
            found = self.family._in_support(b.params, b.value, self.parametrization)
        return np.broadcast_to(found, b.lp_shape)

    @cached_property
    def params_valid(self) -> np.ndarray:
        """Elementwise (log_prob-shaped): is every parameter inside its domain?"""
        b = self.inputs
        with np.errstate(all="ignore"):
            found = self.family._params_valid(b.params, self.parametrization, self.options)
        return np.broadcast_to(found, b.lp_shape)

    @property
    def valid(self) -> np.ndarray:
        return self.in_support & self.params_valid

    @cached_property
    def log_prob(self) -> np.ndarray:
        """float64, -inf outside the support, NaN where a parameter is outside its domain."""
        b = self.inputs
        with np.errstate(all="ignore"):
            found = self.family._log_prob(b.params, b.value, self.parametrization, self.options)
            out = np.broadcast_to(np.asarray(found, dtype=np.float64), b.lp_shape).copy()
            out[~self.in_support] = -np.inf
            out[~self.params_valid] = np.nan
        return out

    @cached_property
    def gradients(self) -> dict[str, np.ndarray]:
        """∂log_prob[b]/∂input[b] for every element b of the log_prob batch: element b holds
        the derivative with respect to b's own copy of each parameter (:meth:`vjp` reduces
        over broadcast dims). ``"value"`` is there for continuous families."""
        family, b, key, opts = self.family, self.inputs, self.parametrization, self.options
        with np.errstate(all="ignore"):
            found = family._grad(b.params, b.value, key, opts)
            if found is None:
                found = family._numeric_grad(b, key, opts)
        return {k: np.asarray(v, dtype=np.float64) for k, v in found.items()}

    def vjp(self, cotangent: np.ndarray) -> dict[str, np.ndarray]:
        """∂(Σ cotangent · log_prob)/∂input, shaped like each input before broadcasting."""
        ct = np.asarray(cotangent, dtype=np.float64)
        out = {}
        with np.errstate(invalid="ignore", over="ignore"):  # +inf and −inf meet at poles: NaN
            for name, g in self.gradients.items():
                weighted = g * ct.reshape(ct.shape + (1,) * self.ranks[name])
                out[name] = unbroadcast(weighted, self.shapes[name])
        return out

    # ----- the law of the draws (univariate families with a CDF) ------------------------------
    @cached_property
    def cdf(self) -> np.ndarray:
        """F(value) = P(X ≤ value), log_prob-shaped; NaN where a parameter is outside its domain."""
        b = self.inputs
        with np.errstate(all="ignore"):
            found = self.family._cdf(b.params, b.value, self.parametrization, self.options)
            out = np.broadcast_to(np.asarray(found, dtype=np.float64), b.lp_shape).copy()
            out[~self.params_valid] = np.nan
        return out


@dataclass
class Family(ABC):
    """A distribution family as mathematics: parametrisations, shapes, density, gradient, sampling.

    The contract a family keeps (``tests/oracle/test_family_contract.py`` holds it):

    - it declares its parametrisations (each parameter's event rank and domain) and its value
      (event rank, named support, discrete or not) as data;
    - it implements ``_log_prob`` on inputs already broadcast to one batch shape, inside the
      support (the base class sets -inf outside it and NaN where a parameter is outside its
      domain), and ``_sample``;
    - it may override ``support`` (where the parameters set the support: ends, a total),
      ``_params_valid`` (constraints between parameters, such as low < high), ``_event_shape``
      (vector events), ``log_prob_shape`` (where the value's shape decides the event:
      LKJCholesky without a valid dimension) and ``_grad`` (closed-form elementwise
      gradients; Richardson differences otherwise) — nothing else: broadcasting, membership, support ends and the
      vector-Jacobian product are the base class's, once, for every family;
    - :meth:`evaluate` is the one entry point: it broadcasts the inputs once and returns an
      :class:`Evaluation`, which computes each answer once; ``log_prob``, ``in_support``,
      ``params_valid``, ``elementwise_grad`` and ``grad`` are views of one;
    - the law of its draws is declared once (:meth:`law`): a univariate continuous family
      gives its CDF (``_cdf``, on broadcast inputs, 0 and 1 beyond the support), a
      discrete family's probability mass is its log_prob, a multivariate family gives
      one-dimensional ``_projections`` with known CDFs (a discrete vector family, of its
      counts); a family with none of these says why in ``no_law`` (its draws are then held to
      their shapes and support only); where the draws' density is not its log_prob (NumPyro's
      MaskedDistribution at a masked-out position), ``draw_log_density`` gives it;
    - a multivariate family whose draws are a map of standard noise that the frameworks share
      (MultivariateNormal's loc + chol(Σ)·ε) gives that map's pathwise derivatives in
      ``_pathwise`` (what ``rsample_grad`` holds multivariate draws to; a univariate family's
      follow from its CDF); one whose draws do not show their noise (a Dirichlet draw is
      Gamma draws normalised: their sum is lost) gives instead, in ``_draw_moments``, the
      first two moments of Σ w·x, whose derivatives every reparameterisation's mean pathwise
      derivatives equal; where those moments do not exist (heavy tails), the expectations of
      bounded test functions stand in (:meth:`bounded_pathwise`: any univariate continuous law
      on the real line or the positive half-line; a multivariate family gives the univariate
      law of Σ w·x in ``_weighted_law``, MultivariateStudentT's a Student t).
    """

    name: str
    parametrizations: dict[str, dict[str, ParamInfo]]
    value: ValueInfo
    default_parametrization: str = ""
    #: Declared conventions a framework may be held to instead of the default, by option name →
    #: allowed values (e.g. ``{"normalize_probs": (True, False)}``); see the registry's ``oracle:``.
    options: dict[str, tuple] = field(default_factory=dict)
    #: Why the oracle holds this family's draws to no law (no CDF, pmf or projection); empty
    #: where :meth:`law` names one.
    no_law: str = ""
    #: Why the oracle makes no sampling items at all for this family (an improper one has
    #: nothing to draw); empty where draws are judged (their shapes, support and law).
    no_draws: str = ""
    #: Parameters whose derivative the declared map of noise (:meth:`pathwise`) does not give,
    #: each with why: ``rsample_grad`` judges the others and says so.
    pathwise_without: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.default_parametrization:
            self.default_parametrization = next(iter(self.parametrizations))
        for pinfos in self.parametrizations.values():
            for pname, pinfo in pinfos.items():
                if not domains.is_known(pinfo.domain):
                    raise ValueError(f"{self.name}.{pname}: unknown domain {pinfo.domain!r}")
        if not domains.is_known(self.value.support):
            raise ValueError(f"{self.name}: unknown support {self.value.support!r}")

    def check_options(self, options: Options | None) -> dict[str, Any]:
        options = dict(options or {})
        for key, val in options.items():
            if key not in self.options or val not in self.options[key]:
                allowed = {k: list(v) for k, v in self.options.items()}
                raise OracleError(f"{self.name}: unknown option {key}={val!r} (allowed: {allowed})")
        return options

    # ----- metadata -------------------------------------------------------------------------
    def params(self, parametrization: str | None = None) -> dict[str, ParamInfo]:
        key = parametrization or self.default_parametrization
        try:
            return self.parametrizations[key]
        except KeyError:
            known = ", ".join(self.parametrizations)
            raise OracleError(
                f"{self.name} has no parametrization {key!r} (known: {known})"
            ) from None

    # ----- shapes ---------------------------------------------------------------------------
    def _check_params(self, params: Arrays, parametrization: str | None) -> dict[str, ParamInfo]:
        info = self.params(parametrization)
        missing = sorted(set(info) - set(params))
        extra = sorted(set(params) - set(info))
        if missing or extra:
            raise OracleError(
                f"{self.name}({parametrization or self.default_parametrization}) expects parameters "
                f"{sorted(info)}; missing {missing}, unexpected {extra}"
            )
        for name, pinfo in info.items():
            if pinfo.static and np.ndim(params[name]) != 0:
                raise OracleError(f"{name} is a single number, got shape {np.shape(params[name])}")
            if np.ndim(params[name]) < pinfo.event_rank:
                raise OracleError(
                    f"{name} needs at least {pinfo.event_rank} dims, got shape {np.shape(params[name])}"
                )
        return info

    def event_shape(self, params: Arrays, parametrization: str | None = None) -> tuple[int, ...]:
        """Event shape; families with vector events override :meth:`_event_shape`."""
        self._check_params(params, parametrization)
        return self._event_shape(params, parametrization)

    def _event_shape(self, params: Arrays, parametrization: str | None) -> tuple[int, ...]:
        return ()

    def batch_shape(self, params: Arrays, parametrization: str | None = None) -> tuple[int, ...]:
        """Broadcast of every parameter's batch part (its shape without its event dims)."""
        info = self._check_params(params, parametrization)
        parts = []
        for name, pinfo in info.items():
            if pinfo.static:
                continue
            shape = np.shape(params[name])
            parts.append(shape[: len(shape) - pinfo.event_rank])
        try:
            return tuple(np.broadcast_shapes(*parts))
        except ValueError:
            raise OracleError(
                f"{self.name}: parameter batch shapes "
                f"{ {k: np.shape(params[k]) for k, i in info.items() if not i.static} } "
                "do not broadcast"
            ) from None

    def log_prob_shape(
        self, params: Arrays, value: np.ndarray, parametrization: str | None = None
    ) -> tuple[int, ...]:
        """broadcast(value's batch part, batch shape) — the rule every framework follows."""
        batch = self.batch_shape(params, parametrization)
        event = self.event_shape(params, parametrization)
        vshape = np.shape(value)
        rank = self.value.event_rank
        if rank and tuple(vshape[len(vshape) - rank :]) != tuple(event[len(event) - rank :]):
            raise OracleError(
                f"{self.name}: value shape {vshape} does not end in the event shape {event}"
            )
        vbatch = vshape[: len(vshape) - rank]
        try:
            return tuple(np.broadcast_shapes(vbatch, batch))
        except ValueError:
            raise OracleError(
                f"{self.name}: value batch shape {vbatch} does not broadcast with batch shape {batch}"
            ) from None

    def broadcast(
        self, params: Arrays, value: np.ndarray, parametrization: str | None = None
    ) -> Broadcast:
        info = self._check_params(params, parametrization)
        batch = self.batch_shape(params, parametrization)
        event = self._event_shape(params, parametrization)
        lp_shape = self.log_prob_shape(params, value, parametrization)
        out = {}
        for name, pinfo in info.items():
            arr = np.asarray(params[name])
            if pinfo.static:
                out[name] = arr
                continue
            event_part = arr.shape[arr.ndim - pinfo.event_rank :]
            out[name] = np.broadcast_to(arr, lp_shape + event_part)
        varr = np.asarray(value)
        vevent = varr.shape[varr.ndim - self.value.event_rank :]
        return Broadcast(
            params=out,
            value=np.broadcast_to(varr, lp_shape + vevent),
            batch_shape=batch,
            lp_shape=lp_shape,
            event_shape=event,
        )

    # ----- the one evaluation ----------------------------------------------------------------
    def evaluate(
        self,
        params: Arrays,
        value: np.ndarray,
        parametrization: str | None = None,
        options: Options | None = None,
    ) -> Evaluation:
        """The oracle at one input: the inputs (as float64) checked and broadcast once; what
        is asked of the result is computed once (see :class:`Evaluation`)."""
        key = parametrization or self.default_parametrization
        opts = self.check_options(options)
        params = _as_float64(params)
        value = np.asarray(value, dtype=np.float64)
        shapes = {k: np.shape(v) for k, v in params.items()} | {"value": np.shape(value)}
        return Evaluation(self, self.broadcast(params, value, key), key, opts, shapes)

    # ----- views of one evaluation -------------------------------------------------------
    def log_prob(
        self,
        params: Arrays,
        value: np.ndarray,
        parametrization: str | None = None,
        options: Options | None = None,
    ) -> np.ndarray:
        """float64 log density (or mass) with the full batch semantics (see :meth:`evaluate`)."""
        return self.evaluate(params, value, parametrization, options).log_prob

    def in_support(
        self, params: Arrays, value: np.ndarray, parametrization: str | None = None
    ) -> np.ndarray:
        """Elementwise (log_prob-shaped): is the value inside the support?"""
        return self.evaluate(params, value, parametrization).in_support

    def params_valid(
        self,
        params: Arrays,
        value: np.ndarray,
        parametrization: str | None = None,
        options: Options | None = None,
    ) -> np.ndarray:
        """Elementwise (log_prob-shaped): is every parameter inside its domain?

        ``options`` are a binding's declared conventions; some narrow a domain (NumPyro's
        NegativeBinomial needs total_count > 0 where torch takes 0).
        """
        return self.evaluate(params, value, parametrization, options).params_valid

    def elementwise_grad(
        self,
        params: Arrays,
        value: np.ndarray,
        parametrization: str | None = None,
        options: Options | None = None,
    ) -> dict[str, np.ndarray]:
        """∂ log_prob[b] / ∂ input[b] for every element b of the log_prob batch."""
        return self.evaluate(params, value, parametrization, options).gradients

    def grad(
        self,
        params: Arrays,
        value: np.ndarray,
        cotangent: np.ndarray,
        parametrization: str | None = None,
        options: Options | None = None,
    ) -> dict[str, np.ndarray]:
        """Vector-Jacobian product: ∂(Σ cotangent · log_prob)/∂input, shaped like each input."""
        return self.evaluate(params, value, parametrization, options).vjp(cotangent)

    # ----- what a family declares or overrides ------------------------------------------------
    @abstractmethod
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        """log density on inputs already broadcast to a common batch shape (inside the support)."""

    def support(self, params: Mapping[str, Any], parametrization: str | None = None) -> Support:
        """The value's support at ``params`` (broadcast arrays, or the scalars of an edge
        case); override where the parameters set it (Uniform, Binomial, Pareto…)."""
        return Support(self.value.support)

    def support_ends(
        self, params: Mapping[str, Any], parametrization: str | None = None
    ) -> tuple[float | None, float | None]:
        """The ends of the value's support that the parameters set (scalar parameters), None
        where the named support's own end holds. Edge cases put the value there."""
        return self.support(params, parametrization or self.default_parametrization).ends()

    def _in_support(self, params: Arrays, value: np.ndarray, parametrization: str) -> np.ndarray:
        return self.support(params, parametrization).contains(value, self.value.event_rank)

    def _params_valid(self, params: Arrays, parametrization: str, options: Options) -> np.ndarray:
        ok: np.ndarray | bool = True
        for name, pinfo in self.params(parametrization).items():
            ok = ok & domains.contains(pinfo.domain, params[name], pinfo.event_rank)
        return np.asarray(ok)

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray] | None:
        """Closed-form elementwise gradients; ``None`` falls back to Richardson differences."""
        return None

    def _numeric_grad(
        self, b: Broadcast, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        info = self.params(parametrization)
        inputs = {k: np.array(v, dtype=np.float64) for k, v in b.params.items()}
        ranks = {k: info[k].event_rank for k in inputs}
        if not self.value.discrete:
            inputs["value"] = np.array(b.value, dtype=np.float64)
            ranks["value"] = self.value.event_rank
        wrt = [k for k in inputs if k == "value" or (info[k].differentiable and not info[k].static)]

        def f(arrs: dict[str, np.ndarray]) -> np.ndarray:
            params = {k: arrs[k] for k in info}
            value = arrs.get("value", b.value)
            return self._log_prob(params, value, parametrization, options)

        domain_of = {k: info[k].domain for k in info}
        domain_of["value"] = self.value.support
        return richardson_elementwise_grad(f, inputs, ranks, wrt, domain_of)

    # ----- the law of the draws ------------------------------------------------------------
    def _overrides(self, hook: str) -> bool:
        return getattr(type(self), hook) is not getattr(Family, hook)

    def law(self, parametrization: str | None = None) -> str:
        """What draws are held to: :data:`CDF`, :data:`PMF`, :data:`PROJECTIONS`, or "" (then
        :attr:`no_law` says why)."""
        if self.no_law:
            return ""
        if self._overrides("_cdf"):
            return CDF
        if self.value.discrete and not (self.value.event_rank and self._overrides("_projections")):
            return PMF  # a discrete vector law with projections is held to them (below)
        if self._overrides("_projections"):
            return PROJECTIONS
        return ""

    def cdf(
        self,
        params: Arrays,
        value: np.ndarray,
        parametrization: str | None = None,
        options: Options | None = None,
    ) -> np.ndarray:
        """F(value) with the full batch semantics (see :meth:`evaluate`)."""
        return self.evaluate(params, value, parametrization, options).cdf

    def projections(
        self,
        params: Arrays,
        batch: tuple[int, ...],
        parametrization: str | None = None,
        options: Options | None = None,
    ) -> list[Projection]:
        """The one-dimensional statistics of a draw whose laws are known, for parameters
        broadcast to ``batch`` (a draw's batch part)."""
        key = parametrization or self.default_parametrization
        broadcast = self.params_broadcast_to(_as_float64(params), tuple(batch), key)
        return self._projections(broadcast, key, self.check_options(options))

    def _cdf(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        """P(X ≤ value) on inputs broadcast to one batch shape, for every real value."""
        raise OracleError(f"{self.name} has no CDF in the oracle")

    def _projections(
        self, params: Arrays, parametrization: str, options: Options
    ) -> list[Projection]:
        """Projections of a draw with known laws, for parameters broadcast to the batch."""
        raise OracleError(f"{self.name} declares no projections")

    def draw_log_density(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray | None:
        """The log density of the draws' law at ``value`` (inputs broadcast to one shape), where
        log_prob is not it; None (the default) where it is. A masked-out position of NumPyro's
        MaskedDistribution scores 0 whatever its value, while its draws keep the base's law:
        the implicit derivative of those draws needs the base's density."""
        return None

    def has_pathwise(self) -> bool:
        """Whether the oracle knows the pathwise derivatives of these draws from their map of
        standard noise (:meth:`pathwise`)."""
        return self._overrides("_pathwise")

    def pathwise(
        self,
        params: Arrays,
        draws: np.ndarray,
        parametrization: str | None = None,
        options: Options | None = None,
        weights: np.ndarray | None = None,
    ) -> dict[str, np.ndarray]:
        """For draws x (shape ``(*batch, *event)``) of the family's declared map x = T(θ, ε):
        ∂(Σ_event w·x)/∂θ at the noise ε that gave each draw, for every parameter, with the
        parameters broadcast to the draws' batch (one copy per draw); ``weights`` w has the
        event's shape (default ones). Unequal weights see each coordinate's derivative apart,
        and a draw on the simplex, whose coordinates' sum is always 1, something at all."""
        key = parametrization or self.default_parametrization
        x = np.asarray(draws, dtype=np.float64)
        rank = self.value.event_rank
        batch = x.shape[: x.ndim - rank]
        w = np.ones(x.shape[x.ndim - rank :]) if weights is None else np.asarray(weights, float)
        broadcast = self.params_broadcast_to(_as_float64(params), tuple(batch), key)
        return self._pathwise(broadcast, x, w, key, self.check_options(options))

    def _pathwise(
        self,
        params: Arrays,
        draws: np.ndarray,
        weights: np.ndarray,
        parametrization: str,
        options: Options,
    ) -> dict[str, np.ndarray]:
        """:meth:`pathwise` on parameters broadcast to the draws' batch."""
        raise OracleError(f"{self.name} declares no map of noise for its draws")

    def has_pathwise_moments(self) -> bool:
        """Whether the oracle knows the draws' first two moments along a weighting
        (:meth:`draw_moments`), and so their derivatives (:meth:`pathwise_moments`)."""
        return self._overrides("_draw_moments")

    def draw_moments(
        self,
        params: Arrays,
        weights: np.ndarray,
        batch: tuple[int, ...],
        parametrization: str | None = None,
        options: Options | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """(E[s], E[s²]) with s = Σ_event w·x, per batch element (the parameters broadcast to
        ``batch``)."""
        key, broadcast, w, checked = self._moment_inputs(
            params, weights, batch, parametrization, options
        )
        return self._draw_moments(broadcast, w, key, checked)

    def _moment_inputs(
        self,
        params: Arrays,
        weights: np.ndarray,
        batch: tuple[int, ...],
        parametrization: str | None,
        options: Options | None,
    ) -> tuple[str, dict[str, np.ndarray], np.ndarray, dict[str, Any]]:
        """The parametrization, the parameters broadcast to ``batch``, the weights and the
        checked options, as :meth:`_draw_moments` takes them."""
        key = parametrization or self.default_parametrization
        broadcast = self.params_broadcast_to(_as_float64(params), tuple(batch), key)
        return key, broadcast, np.asarray(weights, dtype=np.float64), self.check_options(options)

    def pathwise_moments(
        self,
        params: Arrays,
        weights: np.ndarray,
        batch: tuple[int, ...],
        parametrization: str | None = None,
        options: Options | None = None,
        names: list[str] | None = None,
    ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """For every differentiable parameter θ (those in ``names``, where given):
        (∂E[s]/∂θ, ∂E[s²]/∂θ) with s = Σ_event w·x,
        per batch element (each of shape (*batch, *θ's event)), by Richardson's differences
        of :meth:`draw_moments` (closed forms: accurate to about 1e-10).

        For any reparameterisation x = T(θ, ε), d/dθ E[g(x)] = E[∇g(x)·∂x/∂θ]; with g = s and
        g = s² the mean of each draw's ∂s/∂θ, and of 2s·∂s/∂θ, must be these numbers. They
        judge pathwise derivatives where no declared map reads the noise back from the draw
        (``rsample_grad`` in expectation)."""
        key, broadcast, w, checked = self._moment_inputs(
            params, weights, batch, parametrization, options
        )
        info = self.params(key)
        wrt, domains = self._differentiated(info, names)
        found = []
        for moment in (0, 1):

            def f(moved: dict[str, np.ndarray], moment: int = moment) -> np.ndarray:
                return self._draw_moments(moved, w, key, checked)[moment]

            found.append(
                richardson_elementwise_grad(
                    f,
                    broadcast,
                    {k: info[k].event_rank for k in broadcast},
                    wrt,
                    domains,
                )
            )
        return {k: (found[0][k], found[1][k]) for k in wrt}

    @staticmethod
    def _differentiated(
        info: dict[str, ParamInfo], names: list[str] | None
    ) -> tuple[list[str], dict[str, str]]:
        """The parameters an expectation is differentiated by (every differentiable one, or
        those in ``names``: Wishart's df alone, not every entry of its scale), and the domains
        Richardson's steps are sized to (numdiff.step_scale sizes a unit-interval step to the
        ends, and an open unit interval is the same interval; step_scale itself also sizes the
        gradients' tolerance floors, so it is left as it is)."""
        wrt = [k for k, p in info.items() if not p.static and not p.integer]
        if names is not None:
            wrt = [k for k in wrt if k in names]
        domains = {
            k: "unit_interval" if p.domain == "open_unit_interval" else p.domain
            for k, p in info.items()
        }
        return wrt, domains

    def moments_unjudged(self, params: Arrays, parametrization: str | None = None) -> str:
        """Why the draws' mean pathwise derivatives cannot be judged at ``params`` at the
        stated false-failure rate ("" where they can): a derivative of infinite variance (a
        direction y/‖y‖'s, (I − x·xᵀ)/‖y‖, at d = 2) leaves the t statistic's tails far
        heavier than the normal's."""
        return ""

    def _draw_moments(
        self, params: Arrays, weights: np.ndarray, parametrization: str, options: Options
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`draw_moments` on parameters broadcast to the batch."""
        raise OracleError(f"{self.name} declares no moments of its draws")

    def has_bounded_pathwise(self) -> bool:
        """Whether :meth:`bounded_pathwise` can judge these draws: a univariate continuous law
        on the real line or the positive half-line, or a family whose weighted draws Σ w·x
        have such a law (:meth:`_weighted_law`)."""
        if self._overrides("_weighted_law"):
            return True
        return (
            self.value.event_rank == 0
            and not self.value.discrete
            and self.value.support in ("real", "positive")
        )

    def bounded_pathwise(
        self,
        params: Arrays,
        weights: np.ndarray,
        batch: tuple[int, ...],
        parametrization: str | None = None,
        options: Options | None = None,
        names: list[str] | None = None,
    ) -> BoundedPathwise:
        """For every differentiable parameter θ (those in ``names``, where given):
        (∂E[g₁(s)]/∂θ, ∂E[g₂(s)]/∂θ), s = Σ_event w·x, per batch element, for the bounded
        test functions of :mod:`reference.bounded` placed at the law's median and quartile
        spread; by Richardson's differences of their quadratures.

        Where a law's moments do not exist or rest on its rarest draws (a Student t's df), the
        mean pathwise derivative of a bounded g still equals these (``rsample_grad`` in
        expectation, bounded)."""
        key, broadcast, w, checked = self._moment_inputs(
            params, weights, batch, parametrization, options
        )
        info = self.params(key)
        wrt, domains_of = self._differentiated(info, names)
        law, _, _ = self._weighted_law(broadcast, w, key)
        log_scale = bounded.in_log_scale(law.value.support)
        drawn = self.sample(
            broadcast,
            (bounded.PLACEMENT_DRAWS,),
            np.random.default_rng(bounded.PLACEMENT_SEED),
            key,
        )
        event_axes = tuple(range(drawn.ndim - self.value.event_rank, drawn.ndim))
        weighted = (drawn * w).sum(axis=event_axes) if event_axes else drawn * w
        found_at = bounded.placement(bounded.coordinate(weighted, log_scale))
        placed = found_at.placed
        # An element the bumps cannot be placed on is integrated at a stand-in placement (no
        # NaN reaches the differences) and its derivatives are NaN.
        at = found_at.where(placed)

        def expectations(moved: dict[str, np.ndarray]) -> tuple:
            moved_law, moved_params, moved_key = self._weighted_law(moved, w, key)
            return bounded.expectations(
                lambda x: moved_law.evaluate(moved_params, x, moved_key, checked).log_prob,
                at,
                log_scale,
            )

        converged = expectations(broadcast)[2]
        found = []
        for which in (0, 1):

            def f(moved: dict[str, np.ndarray], which: int = which) -> np.ndarray:
                return expectations(moved)[which]

            found.append(
                richardson_elementwise_grad(
                    f, broadcast, {k: info[k].event_rank for k in broadcast}, wrt, domains_of
                )
            )
        unjudged = ~(placed & converged)

        def masked(d: np.ndarray) -> np.ndarray:
            mask = unjudged.reshape(unjudged.shape + (1,) * (d.ndim - unjudged.ndim))
            return np.where(mask, np.nan, d)

        return BoundedPathwise(
            at.centre,
            at.width,
            log_scale,
            placed,
            converged,
            {k: (masked(found[0][k]), masked(found[1][k])) for k in wrt},
        )

    def _weighted_law(
        self, params: Arrays, weights: np.ndarray, parametrization: str
    ) -> tuple[Family, dict[str, np.ndarray], str]:
        """The univariate law of s = Σ_event w·x (a family, its parameters broadcast to the
        batch, its parametrization): a multivariate t's s is a Student t. A univariate
        family's s is its draw (w = 1)."""
        if self.value.event_rank or np.any(np.asarray(weights) != 1.0):
            raise OracleError(f"{self.name} declares no law of its weighted draws")
        return self, dict(params), parametrization

    # ----- sampling ---------------------------------------------------------------------------
    def sample(
        self,
        params: Arrays,
        sample_shape: tuple[int, ...],
        rng: np.random.Generator,
        parametrization: str | None = None,
    ) -> np.ndarray:
        """Draw values of shape ``sample_shape + batch_shape + event_shape``."""
        key = parametrization or self.default_parametrization
        self._check_params(params, key)
        full = tuple(sample_shape) + self.batch_shape(params, key)
        # Parameters at the ends of their domains overflow or divide by zero on the way (the
        # callers redraw or judge such values): the suite's own warnings would bury a
        # framework's.
        with np.errstate(all="ignore"):
            drawn = self._sample(self.params_broadcast_to(params, full, key), full, rng, key)
        return np.asarray(drawn)

    def params_broadcast_to(
        self, params: Mapping[str, Any], batch: tuple[int, ...], parametrization: str | None = None
    ) -> dict[str, np.ndarray]:
        """Every non-static parameter broadcast to ``batch`` + its own event shape."""
        info = self.params(parametrization or self.default_parametrization)
        out = {}
        for name, pinfo in info.items():
            arr = np.asarray(params[name], dtype=np.float64)
            event = arr.shape[arr.ndim - pinfo.event_rank :]
            out[name] = arr if pinfo.static else np.broadcast_to(arr, tuple(batch) + event)
        return out

    @abstractmethod
    def _sample(
        self, params: Arrays, shape: tuple[int, ...], rng: np.random.Generator, parametrization: str
    ) -> np.ndarray:
        """Samples for parameters already broadcast to ``shape``."""


def vanishing_ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den``, and 0 where ``num`` is exactly 0: the derivative ``(a − 1)/x`` of a power
    term ``(a − 1)·log x`` is 0 at every x when a = 1, x = 0 included (x⁰ = 1), not 0/0."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(num == 0.0, 0.0, num / den)


def where_needed(
    mask: np.ndarray, taken: Callable[[], Any], otherwise: Callable[[], Any]
) -> np.ndarray:
    """``np.where(mask, taken(), otherwise())``, each side computed only when some element
    takes it: a form whose numbers no element reads (a series, a loop of terms) costs nothing,
    and every element keeps the bits it has either way."""
    mask = np.asarray(mask)
    chosen = taken() if mask.any() else np.nan
    rest = otherwise() if not mask.all() else np.nan
    return np.where(mask, chosen, rest)


def per_distinct(function: Callable[..., np.ndarray], *arrays: np.ndarray) -> np.ndarray:
    """``function(*arrays)`` for elementwise ``function``, evaluated once per distinct tuple of
    the arrays' elements (compared bit for bit) and spread back to their broadcast shape: a
    normaliser of per-draw copies of a batch's parameters costs one evaluation per batch
    element, not one per draw."""
    columns = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in arrays))
    shape = columns[0].shape
    rows = np.stack([c.ravel() for c in columns], axis=-1)
    if rows.shape[0] <= 1:
        return np.asarray(function(*columns), dtype=np.float64)
    distinct, inverse = np.unique(
        np.ascontiguousarray(rows).view(np.dtype((np.void, rows.itemsize * rows.shape[1]))),
        return_inverse=True,
    )
    found = np.asarray(function(*distinct.view(np.float64).reshape(-1, len(columns)).T))
    return found[np.ravel(inverse)].reshape(shape)


def _as_float64(params: Arrays) -> dict[str, np.ndarray]:
    return {k: np.asarray(v, dtype=np.float64) for k, v in params.items()}


def unbroadcast(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum ``grad`` over the dims that broadcasting added or stretched, giving ``shape``."""
    shape = tuple(shape)
    extra = grad.ndim - len(shape)
    if extra < 0:
        raise OracleError(f"cannot reduce gradient of shape {grad.shape} to {shape}")
    out = grad.sum(axis=tuple(range(extra))) if extra else grad
    axes = tuple(
        i for i, (s, g) in enumerate(zip(shape, out.shape, strict=True)) if s == 1 and g != 1
    )
    if axes:
        out = out.sum(axis=axes, keepdims=True)
    return out.reshape(shape)
