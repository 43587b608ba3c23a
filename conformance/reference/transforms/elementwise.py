"""Transforms that act on each entry alone (exp, sigmoid, affine, …): their log|det J| is the
sum of the entries' log|dy/dx| over the domain's event dims."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import special

from ..declarations import OracleError
from .base import ParamSpec, Space, Transform, as_array, sum_rightmost
from .registry import oracle_transform

_LOG2 = float(np.log(2.0))


def softplus(x: np.ndarray) -> np.ndarray:
    """log(1 + eˣ) without overflow."""
    return np.logaddexp(0.0, x)


def softplus_inverse(y: np.ndarray) -> np.ndarray:
    """log(eʸ − 1) without overflow or cancellation: y + log(1 − e⁻ʸ)."""
    return y + np.log(-np.expm1(-y))


def log1m_tanh_squared(x: np.ndarray) -> np.ndarray:
    """log(1 − tanh²x) = 2 (log 2 − x − softplus(−2x)), exact in the tails."""
    return 2.0 * (_LOG2 - x - softplus(-2.0 * x))


class Elementwise(Transform):
    """A transform entry by entry, from ``real`` (event dim 0) unless a subclass says."""

    domain_name = "real"
    codomain_name = "real"

    def arrays(self) -> tuple[np.ndarray, ...]:
        """The array parameters, which broadcast with the input."""
        return ()

    @property
    def domain(self) -> Space:
        return Space(self.domain_name, 0)

    @property
    def codomain(self) -> Space:
        return Space(self.codomain_name, 0)

    def forward_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(np.broadcast_shapes(tuple(shape), *(a.shape for a in self.arrays())))

    def inverse_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return self.forward_shape(shape)

    def log_abs_det_jacobian(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        x = as_array(x)
        shape = self.forward_shape(x.shape)
        return np.broadcast_to(self.log_derivative(x), shape).copy()

    def log_derivative(self, x: np.ndarray) -> np.ndarray:
        """log|dy/dx| entry by entry."""
        raise NotImplementedError


@oracle_transform
class Identity(Elementwise):
    """y = x (torch's ``identity_transform``, an empty ``ComposeTransform``)."""

    name = "identity"

    def forward(self, x: np.ndarray) -> np.ndarray:
        return as_array(x).copy()

    def inverse(self, y: np.ndarray) -> np.ndarray:
        return as_array(y).copy()

    def log_derivative(self, x: np.ndarray) -> np.ndarray:
        return np.zeros_like(x)


@oracle_transform
class Exp(Elementwise):
    """y = eˣ onto ``positive``; log|dy/dx| = x."""

    name = "exp"
    codomain_name = "positive"

    def forward(self, x: np.ndarray) -> np.ndarray:
        return np.exp(as_array(x))

    def inverse(self, y: np.ndarray) -> np.ndarray:
        return np.log(as_array(y))

    def log_derivative(self, x: np.ndarray) -> np.ndarray:
        return x


@oracle_transform
class Power(Elementwise):
    """y = x^exponent on ``positive``; log|dy/dx| = log|exponent| + (exponent − 1) log x."""

    name = "power"
    params = (ParamSpec("exponent", domain="nonzero"),)
    domain_name = "positive"
    codomain_name = "positive"

    def __init__(self, exponent: Any) -> None:
        self.exponent = as_array(exponent)

    def arrays(self) -> tuple[np.ndarray, ...]:
        return (self.exponent,)

    def forward(self, x: np.ndarray) -> np.ndarray:
        return np.power(as_array(x), self.exponent)

    def inverse(self, y: np.ndarray) -> np.ndarray:
        return np.power(as_array(y), 1.0 / self.exponent)

    def log_derivative(self, x: np.ndarray) -> np.ndarray:
        return np.log(np.abs(self.exponent)) + (self.exponent - 1.0) * np.log(x)


@oracle_transform
class Sigmoid(Elementwise):
    """y = 1/(1 + e⁻ˣ) onto ``unit_interval``; log|dy/dx| = −softplus(x) − softplus(−x)."""

    name = "sigmoid"
    codomain_name = "unit_interval"

    def forward(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(special.expit(as_array(x)))

    def inverse(self, y: np.ndarray) -> np.ndarray:
        return np.asarray(special.logit(as_array(y)))

    def log_derivative(self, x: np.ndarray) -> np.ndarray:
        return -softplus(x) - softplus(-x)


@oracle_transform
class Softplus(Elementwise):
    """y = log(1 + eˣ) onto ``positive`` (NumPyro names it ``softplus_positive``);
    log|dy/dx| = −softplus(−x)."""

    name = "softplus"
    codomain_name = "positive"

    def forward(self, x: np.ndarray) -> np.ndarray:
        return softplus(as_array(x))

    def inverse(self, y: np.ndarray) -> np.ndarray:
        return softplus_inverse(as_array(y))

    def log_derivative(self, x: np.ndarray) -> np.ndarray:
        return -softplus(-x)


@oracle_transform
class Tanh(Elementwise):
    """y = tanh x onto ``interval(-1, 1)``; log|dy/dx| = 2 (log 2 − x − softplus(−2x))."""

    name = "tanh"
    codomain_name = "interval"

    @property
    def codomain(self) -> Space:
        return Space("interval", 0, low=-1.0, high=1.0)

    def forward(self, x: np.ndarray) -> np.ndarray:
        return np.tanh(as_array(x))

    def inverse(self, y: np.ndarray) -> np.ndarray:
        return np.arctanh(as_array(y))

    def log_derivative(self, x: np.ndarray) -> np.ndarray:
        return log1m_tanh_squared(x)


@oracle_transform
class Abs(Elementwise):
    """y = |x| onto ``positive``; not bijective: ``inverse(y)`` is y (the positive branch,
    as both frameworks return) and there is no log|det J| (both raise NotImplementedError)."""

    name = "abs"
    codomain_name = "positive"
    bijective = False

    def forward(self, x: np.ndarray) -> np.ndarray:
        return np.abs(as_array(x))

    def inverse(self, y: np.ndarray) -> np.ndarray:
        return as_array(y).copy()

    def log_abs_det_jacobian(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return Transform.log_abs_det_jacobian(self, x, y)


#: The domains an affine map's ``domain`` may name (NumPyro's ``AffineTransform(domain=…)``).
AFFINE_DOMAINS = ("real", "positive", "unit_interval")


@oracle_transform
class Affine(Elementwise):
    """y = loc + scale·x; log|det J| = Σ log|scale| over the ``event_dim`` rightmost dims of
    the broadcast of x, loc and scale (n·log|scale| for a scale shared by n event entries).

    ``event_dim`` is torch's (NumPyro's map is always elementwise, event dim 0). ``domain`` is
    NumPyro's: the map is the same, only the declared codomain follows — ``positive`` goes to
    ``greater_than(loc)`` (``less_than(loc)`` for a negative scale), ``unit_interval`` to the
    interval between loc and loc + scale.
    """

    name = "affine"
    params = (
        ParamSpec("loc"),
        ParamSpec("scale", domain="nonzero"),
        ParamSpec("event_dim", static=True, default=0),
        ParamSpec("domain", static=True, default="real"),
    )

    def __init__(self, loc: Any, scale: Any, event_dim: int = 0, domain: str = "real") -> None:
        if domain not in AFFINE_DOMAINS:
            raise OracleError(f"affine domain {domain!r}: one of {AFFINE_DOMAINS}")
        if domain != "real" and event_dim:
            raise OracleError("an affine map with a bounded domain is elementwise (event_dim 0)")
        self.loc, self.scale = as_array(loc), as_array(scale)
        self.event_dim = int(event_dim)
        self.domain_name = domain

    def arrays(self) -> tuple[np.ndarray, ...]:
        return (self.loc, self.scale)

    @property
    def domain(self) -> Space:
        return Space(self.domain_name, self.event_dim)

    @property
    def codomain(self) -> Space:
        if self.domain_name == "real":
            return Space("real", self.event_dim)
        negative = bool(np.all(self.scale < 0))
        if self.domain_name == "positive":
            if negative:
                return Space("less_than", 0, high=self.loc)
            return Space("greater_than", 0, low=self.loc)
        ends = (self.loc + self.scale, self.loc) if negative else (self.loc, self.loc + self.scale)
        return Space("interval", 0, low=ends[0], high=ends[1])

    def forward(self, x: np.ndarray) -> np.ndarray:
        return self.loc + self.scale * as_array(x)

    def inverse(self, y: np.ndarray) -> np.ndarray:
        return (as_array(y) - self.loc) / self.scale

    def log_abs_det_jacobian(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        x = as_array(x)
        entries = np.broadcast_to(np.log(np.abs(self.scale)), self.forward_shape(x.shape))
        return np.asarray(sum_rightmost(entries, self.event_dim), dtype=np.float64)
