"""The oracle's building blocks: parameter metadata, batch semantics, and the family base class.

Every family computes its log density on inputs that are already broadcast to one common batch
shape, so the batch semantics (which every framework must reproduce) live in exactly one place.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import domains
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


@dataclass
class Family(ABC):
    """A distribution family as mathematics: parametrisations, shapes, density, gradient, sampling."""

    name: str
    parametrizations: dict[str, dict[str, ParamInfo]]
    value: ValueInfo
    default_parametrization: str = ""
    #: Declared conventions a framework may be held to instead of the default, by option name →
    #: allowed values (e.g. ``{"normalize_probs": (True, False)}``); see the registry's ``oracle:``.
    options: dict[str, tuple] = field(default_factory=dict)

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
        lp_shape = self.log_prob_shape(params, value, parametrization)
        out = {}
        for name, pinfo in info.items():
            arr = np.asarray(params[name])
            if pinfo.static:
                out[name] = arr
                continue
            event = arr.shape[arr.ndim - pinfo.event_rank :]
            out[name] = np.broadcast_to(arr, lp_shape + event)
        varr = np.asarray(value)
        vevent = varr.shape[varr.ndim - self.value.event_rank :]
        return Broadcast(
            params=out,
            value=np.broadcast_to(varr, lp_shape + vevent),
            batch_shape=self.batch_shape(params, parametrization),
            lp_shape=lp_shape,
            event_shape=self.event_shape(params, parametrization),
        )

    # ----- density ----------------------------------------------------------------------------
    def log_prob(
        self,
        params: Arrays,
        value: np.ndarray,
        parametrization: str | None = None,
        options: Options | None = None,
    ) -> np.ndarray:
        """float64 log density (or mass) with the full batch semantics.

        -inf outside the support; where a parameter is outside its domain the value is NaN
        (there is no distribution to evaluate).
        """
        key = parametrization or self.default_parametrization
        opts = self.check_options(options)
        b = self.broadcast(_as_float64(params), np.asarray(value, dtype=np.float64), key)
        with np.errstate(all="ignore"):
            out = np.asarray(self._log_prob(b.params, b.value, key, opts), dtype=np.float64)
            out = np.broadcast_to(out, b.lp_shape).copy()
            out[~self._in_support(b.params, b.value, key)] = -np.inf
            out[~self._params_valid(b.params, key, opts)] = np.nan
        return out

    @abstractmethod
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        """log density on inputs already broadcast to a common batch shape (inside the support)."""

    # ----- supports and domains -----------------------------------------------------------
    def in_support(
        self, params: Arrays, value: np.ndarray, parametrization: str | None = None
    ) -> np.ndarray:
        """Elementwise (log_prob-shaped): is the value inside the support?"""
        key = parametrization or self.default_parametrization
        b = self.broadcast(_as_float64(params), np.asarray(value, dtype=np.float64), key)
        return np.broadcast_to(self._in_support(b.params, b.value, key), b.lp_shape)

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
        key = parametrization or self.default_parametrization
        opts = self.check_options(options)
        b = self.broadcast(_as_float64(params), np.asarray(value, dtype=np.float64), key)
        return np.broadcast_to(self._params_valid(b.params, key, opts), b.lp_shape)

    def _in_support(self, params: Arrays, value: np.ndarray, parametrization: str) -> np.ndarray:
        """Override where the support depends on parameters (Uniform, Binomial, Pareto…)."""
        return domains.contains(self.value.support, value, self.value.event_rank)

    def support_ends(
        self, params: Mapping[str, Any], parametrization: str | None = None
    ) -> tuple[float | None, float | None]:
        """The ends of the value's support that the parameters set (scalar parameters), None
        where the named support's own end holds: Uniform's (low, high), Binomial's upper
        total_count. Edge cases put the value there."""
        return None, None

    def _params_valid(self, params: Arrays, parametrization: str, options: Options) -> np.ndarray:
        ok = True
        for name, pinfo in self.params(parametrization).items():
            ok = ok & domains.contains(pinfo.domain, params[name], pinfo.event_rank)
        return np.asarray(ok)

    # ----- gradients --------------------------------------------------------------------------
    def elementwise_grad(
        self,
        params: Arrays,
        value: np.ndarray,
        parametrization: str | None = None,
        options: Options | None = None,
    ) -> dict[str, np.ndarray]:
        """∂ log_prob[b] / ∂ input[b] for every element b of the log_prob batch.

        Inputs are broadcast first, so element b of the result holds the derivative with respect
        to b's own copy of each parameter; reducing over broadcast dims (see :func:`unbroadcast`)
        gives the gradient with respect to the original, smaller array. The key ``"value"`` holds
        the gradient with respect to the value for continuous families.
        """
        key = parametrization or self.default_parametrization
        opts = self.check_options(options)
        b = self.broadcast(_as_float64(params), np.asarray(value, dtype=np.float64), key)
        with np.errstate(all="ignore"):
            grads = self._grad(b.params, b.value, key, opts)
            if grads is None:
                grads = self._numeric_grad(b, key, opts)
        return {k: np.asarray(v, dtype=np.float64) for k, v in grads.items()}

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

    def grad(
        self,
        params: Arrays,
        value: np.ndarray,
        cotangent: np.ndarray,
        parametrization: str | None = None,
        options: Options | None = None,
    ) -> dict[str, np.ndarray]:
        """Vector-Jacobian product: ∂(Σ cotangent · log_prob)/∂input, shaped like each input."""
        key = parametrization or self.default_parametrization
        info = self.params(key)
        elem = self.elementwise_grad(params, value, key, options)
        ct = np.asarray(cotangent, dtype=np.float64)
        out = {}
        for name, g in elem.items():
            rank = self.value.event_rank if name == "value" else info[name].event_rank
            weighted = g * ct.reshape(ct.shape + (1,) * rank)
            target = np.shape(value) if name == "value" else np.shape(params[name])
            out[name] = unbroadcast(weighted, target)
        return out

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
        return np.asarray(self._sample(self.params_broadcast_to(params, full, key), full, rng, key))

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
