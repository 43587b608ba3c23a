"""The registry of closed forms, keyed by (p family, q family) as the oracle names families, and
the one entry point that checks, broadcasts and masks their inputs.

A closed form (a :data:`PairFunction`) sees two :class:`Side` s whose parameters are already
broadcast to one batch and flattened to a single batch axis of the elements whose parameters
are all valid; it returns KL(p‖q) per element, +inf where q's support does not cover p's.
:func:`kl_divergence` does the rest once: parameter checks, the broadcast batch shape, NaN where
either side's parameters are invalid.

Some families are another family in other parameters (an :class:`Alias`): Chi2(df) is
Gamma(df/2, rate ½), as both frameworks' Chi2 subclasses Gamma and inherits its KL rules. Every
pair registered for the target is a pair for the alias too (:func:`kl_pairs` lists them).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from ..core import Family, OracleError
from ..declarations import Arrays, Options, as_float64
from ..families import FAMILIES


@dataclass(frozen=True)
class Side:
    """One side of a pair: its family (an alias already resolved), its parameters (batch
    flattened to one axis, each with its own event dims), parametrisation and options."""

    family: str
    params: dict[str, np.ndarray]
    parametrization: str
    options: Mapping[str, Any]

    def __getitem__(self, name: str) -> np.ndarray:
        return self.params[name]

    @property
    def size(self) -> int:
        """The number of batch elements."""
        return len(next(iter(self.params.values())))


PairFunction = Callable[[Side, Side], np.ndarray]
Converter = Callable[[Arrays, str], tuple[dict[str, np.ndarray], str]]


@dataclass(frozen=True)
class Alias:
    """``family`` is ``target`` with parameters ``convert`` gives (on valid, broadcast ones)."""

    family: str
    target: str
    convert: Converter
    note: str


@dataclass(frozen=True)
class KLPair:
    """A registered pair: its closed form, the parametrisations of each side it accepts and,
    for a pair an alias makes, the registered pair that computes it (``via``)."""

    p: str
    q: str
    function: PairFunction
    p_parametrizations: tuple[str, ...]
    q_parametrizations: tuple[str, ...]
    via: tuple[str, str] | None = None


_CLOSED_FORMS: dict[tuple[str, str], PairFunction] = {}
_ALIASES: dict[str, Alias] = {}


def closed_form(*pairs: tuple[str, str]) -> Callable[[PairFunction], PairFunction]:
    """Register the decorated closed form for each (p family, q family) in ``pairs``."""

    def add(function: PairFunction) -> PairFunction:
        for pair in pairs:
            for name in pair:
                if name not in FAMILIES:
                    raise RuntimeError(f"KL pair {pair}: {name} is no oracle family")
            if pair in _CLOSED_FORMS:
                raise RuntimeError(f"KL pair {pair} is registered twice")
            _CLOSED_FORMS[pair] = function
        _all_pairs.cache_clear()
        return function

    return add


def register_alias(family: str, target: str, convert: Converter, note: str) -> None:
    _ALIASES[family] = Alias(family, target, convert, note)
    _all_pairs.cache_clear()


def _parametrizations(family: str) -> tuple[str, ...]:
    return tuple(FAMILIES[family].parametrizations)


def kl_pairs() -> list[tuple[str, str]]:
    """Every (p family, q family) the oracle has KL(p‖q) for, aliases' pairs included."""
    return sorted(_all_pairs())


@cache
def _all_pairs() -> dict[tuple[str, str], KLPair]:
    """Every pair: the registered ones and, for each, the pairs its aliases make (computed once
    per registration)."""
    found = {
        (p, q): KLPair(p, q, f, _parametrizations(p), _parametrizations(q))
        for (p, q), f in _CLOSED_FORMS.items()
    }
    sides: dict[str, list[str]] = {}
    for alias in _ALIASES.values():
        sides.setdefault(alias.target, []).append(alias.family)
    for (p, q), f in _CLOSED_FORMS.items():
        for p_name in [p, *sides.get(p, [])]:
            for q_name in [q, *sides.get(q, [])]:
                if (p_name, q_name) not in found:
                    found[p_name, q_name] = KLPair(
                        p_name,
                        q_name,
                        f,
                        _parametrizations(p_name),
                        _parametrizations(q_name),
                        via=(p, q),
                    )
    return found


def kl_pair(p_family: str, q_family: str) -> KLPair:
    """The registered pair (which parametrisations each side accepts); :class:`OracleError`
    where the oracle has none."""
    pairs = _all_pairs()
    try:
        return pairs[p_family, q_family]
    except KeyError:
        with_p = sorted(q for p, q in pairs if p == p_family)
        raise OracleError(
            f"the oracle has no KL({p_family} ‖ {q_family}); with p = {p_family} it has q in "
            f"{with_p or 'nothing'}"
        ) from None


def _flatten(
    family: Family, params: Arrays, key: str, batch: tuple[int, ...], keep: np.ndarray
) -> dict[str, np.ndarray]:
    """The parameters broadcast to ``batch``, flattened to one batch axis, rows ``keep``."""
    info = family.params(key)
    out = {}
    for name, arr in family.params_broadcast_to(params, batch, key).items():
        if info[name].static:
            out[name] = arr
            continue
        event = arr.shape[len(batch) :]
        out[name] = np.ascontiguousarray(arr).reshape((-1, *event))[keep]
    return out


def _side(family: str, params: dict[str, np.ndarray], key: str, options: Options) -> Side:
    alias = _ALIASES.get(family)
    if alias is None:
        return Side(family, params, key, options)
    converted, target_key = alias.convert(params, key)
    kept = {k: v for k, v in options.items() if k in FAMILIES[alias.target].options}
    return Side(alias.target, converted, target_key, kept)


def kl_divergence(
    p_family: str,
    p_params: Arrays,
    q_family: str,
    q_params: Arrays,
    p_parametrization: str | None = None,
    q_parametrization: str | None = None,
    p_options: Options | None = None,
    q_options: Options | None = None,
) -> np.ndarray:
    """KL(p‖q) = E_p[log p(X) − log q(X)] in nats, float64, shaped
    ``broadcast(p.batch_shape, q.batch_shape)``: NaN where either side's parameters are
    invalid, +inf where q's support does not cover p's, 0 where p = q.

    ``p_options``/``q_options``: a binding's declared conventions (the families' options, e.g.
    ``normalize_probs``), as for log_prob.
    """
    pair = kl_pair(p_family, q_family)
    pf, qf = FAMILIES[p_family], FAMILIES[q_family]
    p_key = p_parametrization or pf.default_parametrization
    q_key = q_parametrization or qf.default_parametrization
    for side, key, accepted in (
        (p_family, p_key, pair.p_parametrizations),
        (q_family, q_key, pair.q_parametrizations),
    ):
        if key not in accepted:
            raise OracleError(
                f"KL({p_family} ‖ {q_family}) takes {side} by {', '.join(accepted)}, not {key}"
            )
    p_opts, q_opts = pf.check_options(p_options), qf.check_options(q_options)
    p_params, q_params = as_float64(p_params), as_float64(q_params)
    pf.event_shape(p_params, p_key)  # shapes that do not fit raise here
    qf.event_shape(q_params, q_key)
    try:
        batch = tuple(
            np.broadcast_shapes(pf.batch_shape(p_params, p_key), qf.batch_shape(q_params, q_key))
        )
    except ValueError:
        raise OracleError(
            f"KL({p_family} ‖ {q_family}): batch shapes {pf.batch_shape(p_params, p_key)} and "
            f"{qf.batch_shape(q_params, q_key)} do not broadcast"
        ) from None
    with np.errstate(all="ignore"):
        valid = np.broadcast_to(
            pf._params_valid(pf.params_broadcast_to(p_params, batch, p_key), p_key, p_opts)
            & qf._params_valid(qf.params_broadcast_to(q_params, batch, q_key), q_key, q_opts),
            batch,
        ).reshape(-1)
        out = np.full(valid.shape, np.nan)
        if valid.any():
            p_side = _side(p_family, _flatten(pf, p_params, p_key, batch, valid), p_key, p_opts)
            q_side = _side(q_family, _flatten(qf, q_params, q_key, batch, valid), q_key, q_opts)
            out[valid] = np.broadcast_to(pair.function(p_side, q_side), (int(valid.sum()),))
    return out.reshape(batch)
