"""The family base class, so the batch semantics every framework must reproduce live in one place.

Every family computes on inputs already broadcast to one batch shape (:class:`Family`, whose
answers at one input :class:`Evaluation` computes once). What a family declares as data is in
``declarations``; what the oracle knows of the derivatives of its draws, in ``pathwise_law``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from . import domains
from .declarations import Arrays, Options, OracleError, ParamInfo, ValueInfo, as_float64
from .numdiff import richardson_elementwise_grad
from .pathwise_law import PathwiseLaw
from .quantiles import invert_cdf
from .summaries import Summaries


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

    @cached_property
    def icdf(self) -> np.ndarray:
        """F⁻¹(q) = min{x : F(x) ≥ q} with the value read as q, log_prob-shaped: the support's
        ends at q = 0 and 1, NaN at q outside [0, 1] or a parameter outside its domain."""
        b = self.inputs
        q = np.broadcast_to(b.value, b.lp_shape)
        with np.errstate(all="ignore"):
            lo, hi = self.family.support_span(b.params, self.parametrization)
            inside = (q > 0.0) & (q < 1.0)
            found = self.family._icdf(
                b.params, np.where(inside, q, 0.5), self.parametrization, self.options
            )
            out = np.broadcast_to(np.asarray(found, dtype=np.float64), b.lp_shape)
            out = np.where(q == 0.0, lo, np.where(q == 1.0, hi, out))
            out = np.where(inside | (q == 0.0) | (q == 1.0), out, np.nan)
            out[~self.params_valid] = np.nan
        return out


@dataclass
class Family(PathwiseLaw, Summaries, ABC):
    """One distribution family as mathematics, so every check reads its truth from one place.

    A family declares its parametrisations and its value as data and implements a few hooks on
    inputs already broadcast to one batch shape; broadcasting, membership, the support's ends
    and the vector-Jacobian product are this class's, once. The hooks (held by
    ``tests/oracle/test_family_contract.py``):

    - ``_log_prob`` inside the support (-inf outside it and NaN at an invalid parameter are set
      here) and ``_sample``;
    - where needed, ``support`` (ends or a total the parameters set), ``_params_valid``
      (constraints between parameters), ``_event_shape``, ``log_prob_shape`` (where the
      value's shape decides the event) and ``_grad`` (closed forms; Richardson otherwise);
    - the law of its draws (:meth:`law`): ``_cdf`` (and ``_icdf`` where a closed form
      beats inverting it), the log_prob of a discrete family,
      ``_projections`` with known CDFs, or why none in ``no_law``;
    - the derivatives of its draws: :class:`~.pathwise_law.PathwiseLaw`'s hooks;
    - what it says without a value (mean, variance, mode, entropy):
      :class:`~.summaries.Summaries`' hooks.

    :meth:`evaluate` is the one entry point: it broadcasts the inputs once and returns an
    :class:`Evaluation`; ``log_prob``, ``grad`` and the others are views of one.
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
        params = as_float64(params)
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

    def icdf(
        self,
        params: Arrays,
        q: np.ndarray,
        parametrization: str | None = None,
        options: Options | None = None,
    ) -> np.ndarray:
        """F⁻¹(q) with the full batch semantics, q in the value's place (see :meth:`evaluate`)."""
        return self.evaluate(params, q, parametrization, options).icdf

    def support_span(
        self, params: Arrays, parametrization: str | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The least and greatest points of a univariate support (±inf where unbounded), at
        parameters broadcast to one batch shape: what icdf gives at q = 0 and 1."""
        key = parametrization or self.default_parametrization
        support = self.support(params, key)
        named = domains.interval(support.name)
        lo, hi = (named.lo, named.hi) if named is not None else (-np.inf, np.inf)
        if support.lower is not None:
            lo = np.maximum(lo, support.lower)
        if support.upper is not None:
            hi = np.minimum(hi, support.upper)
        return np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)

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
        broadcast = self.params_broadcast_to(as_float64(params), tuple(batch), key)
        return self._projections(broadcast, key, self.check_options(options))

    def _cdf(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        """P(X ≤ value) on inputs broadcast to one batch shape, for every real value."""
        raise OracleError(f"{self.name} has no CDF in the oracle")

    def _icdf(
        self, params: Arrays, q: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        """F⁻¹(q) for q in (0, 1) on inputs broadcast to one batch shape (the ends are set
        once, in :attr:`Evaluation.icdf`). Without a closed form, F inverted to the float64
        number (:func:`~.quantiles.invert_cdf`)."""
        if not self.has_icdf:
            raise OracleError(f"{self.name} has no inverse CDF in the oracle")
        lo, hi = self.support_span(params, parametrization)
        lo, hi, q = np.broadcast_arrays(lo, hi, q)

        def cdf(x: np.ndarray) -> np.ndarray:
            return self._cdf(params, x, parametrization, options)

        return invert_cdf(cdf, q, lo, hi)

    @property
    def icdf_closed_form(self) -> bool:
        """Whether ``_icdf`` is written for this family (else F is inverted by bisection)."""
        return self._overrides("_icdf")

    @property
    def has_icdf(self) -> bool:
        """Whether the oracle inverts this family's CDF: a univariate continuous family with
        one (a discrete law's quantile is a step function no framework defines here)."""
        return self._overrides("_cdf") and not self.value.discrete and self.value.event_rank == 0

    def _projections(
        self, params: Arrays, parametrization: str, options: Options
    ) -> list[Projection]:
        """Projections of a draw with known laws, for parameters broadcast to the batch."""
        raise OracleError(f"{self.name} declares no projections")

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
