"""Functions a binding passes to a constructor as arguments, built from a case's parameters by
the binding's ``call:`` (EulerMaruyama's ``sde_fn``). Written with arithmetic operators only,
so each takes any framework's arrays and traces under ``jax.jit``; the parameters they close
over are the case's static numbers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def ornstein_uhlenbeck(theta: float, mu: float, sigma: float) -> Callable[[Any, Any], tuple]:
    """The SDE dx = θ·(μ − x)·dt + σ·dW as ``sde_fn(x, t) -> (drift, diffusion)``."""

    def sde_fn(x: Any, t: Any) -> tuple[Any, Any]:
        return theta * (mu - x), sigma  # a constant diffusion, as NumPyro's examples write it

    return sde_fn
