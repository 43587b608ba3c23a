"""How a reproducer script writes one adapter's framework code: its dialect.

Each adapter declares one dialect object (:meth:`~conformance.adapters.base.Adapter.reproducer`)
that renders exactly what the adapter does — how arrays are made and read back, how each
argument is built (GPyTorch's covariance operators), the settings ``log_prob`` runs under (a
numerical path, the seed of its probes), whether construction and ``log_prob`` are compiled and
how a gradient is taken. :mod:`conformance.records.reproducer` writes everything else (the subject's
expected arrays, tolerances and comparison), the same for every framework.

A dialect writes source only: it imports no framework.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from conformance.registry import Binding


class Dialect:
    """How one framework's code is written; subclasses fill in the framework's spelling."""

    #: The framework's imports (numpy and sys are the script's own).
    imports: tuple[str, ...] = ()
    #: Modules whose names a script never imports again (the framework's root, already imported).
    roots: frozenset[str] = frozenset()
    batch_shape: str = "tuple({d}.batch_shape)"
    event_shape: str = "tuple({d}.event_shape)"
    #: Whether construction and log_prob run inside one compiled function, and the decorator
    #: that compiles it.
    compiled: bool = False
    jit_decorator: str = ""

    def setup(self, dtype: str, device: str) -> list[str]:
        """Lines run first: the precision and the device the check ran on."""
        return []

    def array(self, expr: str) -> str:
        """A framework array from the NumPy expression ``expr`` (dtype kept)."""
        raise NotImplementedError

    def to_numpy(self, expr: str) -> str:
        """A NumPy array from the framework expression ``expr``."""
        raise NotImplementedError

    def argument(self, binding: Binding, keyword: str, expr: str, arrays: Mapping[str, Any]) -> str:
        """Source of argument ``keyword`` as the adapter passes it (``expr``: the plain array)."""
        return expr

    def definitions(self, binding: Binding, arrays: Mapping[str, Any]) -> list[str]:
        """Functions the arguments' source calls (defined before the arrays)."""
        return []

    def modules(self, binding: Binding) -> set[str]:
        """Modules the script imports beyond the constructor's."""
        return set()

    def contexts(self, binding: Binding) -> tuple[list[str], list[str]]:
        """Context managers ``log_prob`` runs under, and statements run first inside them."""
        return [], []

    def gradient(self, ctx: Mapping[str, Any]) -> list[str]:
        """Lines that leave ``grads`` (one per name of ``ctx['wrt']``, in order)."""
        raise NotImplementedError


class TorchDialect(Dialect):
    imports = ("import torch",)
    roots = frozenset({"torch"})

    def setup(self, dtype: str, device: str) -> list[str]:
        return [f'DEVICE = "{device}"']

    def array(self, expr: str) -> str:
        return f"torch.as_tensor({expr}, device=DEVICE)"

    def to_numpy(self, expr: str) -> str:
        return f"{expr}.detach().cpu().numpy()"

    def gradient(self, ctx: Mapping[str, Any]) -> list[str]:
        wrt = ctx["wrt"]
        args = ", ".join(wrt)
        if ctx["method"] == "grad_functional":
            return [
                f"def objective({args}):",
                f"    dist = {ctx['call']}",
                "    return (dist.log_prob(value) * CT).sum()",
                f"grads = torch.func.grad(objective, argnums={tuple(range(len(wrt)))!r})({args})",
            ]
        return [
            *(f"{name}.requires_grad_(True)" for name in wrt),
            f"dist = {ctx['call']}",
            "lp = dist.log_prob(value)",
            f"grads = torch.autograd.grad((lp * CT).sum(), [{args}], allow_unused=True)",
        ]


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
