"""How a reproducer writes JAX code: x64 as the item had it, arrays on the run's device, and
construction with log_prob compiled in one ``jax.jit`` function where the items are."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from conformance.records.dialects import Dialect


class JaxDialect(Dialect):
    imports = ("import jax", "import jax.numpy as jnp")
    roots = frozenset({"jax"})
    jit_decorator = "@jax.jit"

    def __init__(self, compiled: bool) -> None:
        self.compiled = compiled

    def setup(self, dtype: str, device: str) -> list[str]:
        platform = "gpu" if device == "cuda" else "cpu"
        return [
            f'jax.config.update("jax_enable_x64", {dtype == "float64"})',
            f'DEVICE = jax.devices("{platform}")[0]',
        ]

    def array(self, expr: str) -> str:
        return f"jax.device_put(jnp.asarray({expr}), DEVICE)"

    def to_numpy(self, expr: str) -> str:
        return f"np.asarray({expr})"

    def gradient(self, ctx: Mapping[str, Any]) -> list[str]:
        if self.compiled:
            return self._compiled_gradient(ctx)
        args = ", ".join(ctx["wrt"])
        lines = [
            f"def log_prob({args}):",
            f"    dist = {ctx['call']}",
            "    return dist.log_prob(value)",
        ]
        if ctx["method"] == "grad_functional":
            return [
                *lines,
                f"out, pullback = jax.vjp(log_prob, {args})",
                "grads = pullback(CT.astype(out.dtype))",
            ]
        argnums = tuple(range(len(ctx["wrt"])))
        return [
            *lines,
            f"grads = jax.grad(lambda {args}: jnp.sum(log_prob({args}) * CT), "
            f"argnums={argnums!r})({args})",
        ]

    @staticmethod
    def _compiled_gradient(ctx: Mapping[str, Any]) -> list[str]:
        """The gradient in one ``jax.jit`` function taking every array (value and cotangent too)
        as an argument, as the compiled items do: nothing is a constant XLA could fold."""
        wrt = ctx["wrt"]
        every = ", ".join([*ctx["arrays"], "value"])
        lines = [f"def log_prob({every}):", f"    return {ctx['call']}.log_prob(value)"]
        if ctx["method"] == "grad_functional":
            return [
                *lines,
                f"def pullback({every}, ct):",
                f"    out, back = jax.vjp(lambda {', '.join(wrt)}: log_prob({every}), "
                f"{', '.join(wrt)})",
                "    return back(ct.astype(out.dtype))",
                f"grads = jax.jit(pullback)({every}, CT)",
            ]
        names = [*ctx["arrays"], "value"]
        argnums = tuple(names.index(n) for n in wrt)
        return [
            *lines,
            f"def objective({every}, ct):",
            f"    return jnp.sum(log_prob({every}) * ct)",
            f"grads = jax.jit(jax.grad(objective, argnums={argnums!r}))({every}, CT)",
        ]
