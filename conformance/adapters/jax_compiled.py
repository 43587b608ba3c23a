"""Compiled evaluation for JAX adapters: one ``jax.jit`` function per binding and operation.

NumPyro's users evaluate ``log_prob`` and its gradients compiled (MCMC, SVI and Predictive all
run under ``jax.jit``), so that is what the suite tests by default. Each function is made once
per (binding, static parameters, operation) and reused by every item: JAX's own cache then
compiles once per shape signature and the persistent compilation cache (see
:mod:`conformance.adapters.jax_cache`) keeps the executables between runs. Eager, op-by-op
evaluation keeps its own check (``eager``).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from conformance.registry import Binding

if TYPE_CHECKING:
    from conformance.adapters.numpyro_adapter import NumpyroAdapter


@dataclass(frozen=True, eq=False)
class Deferred:
    """A distribution the compiled path builds inside each compiled function, as a model under
    ``jax.jit`` does; its shapes come from tracing the construction once per signature."""

    adapter: NumpyroAdapter
    binding: Binding
    arrays: Mapping[str, Any]
    static: Mapping[str, Any]
    batch_shape: tuple[int, ...]
    event_shape: tuple[int, ...]

    def log_prob(self, value: Any) -> Any:
        return self.adapter.compiled_log_prob(self, value)


def signature(*trees: Any) -> Hashable:
    """Shapes and dtypes of the arrays in ``trees`` (concrete arrays and tracers alike), with
    JAX's x64 switch: what decides whether a trace can be reused."""
    import jax

    leaves = [(tuple(x.shape), str(x.dtype)) for t in trees for x in jax.tree_util.tree_leaves(t)]
    structure = tuple(str(jax.tree_util.tree_structure(t)) for t in trees)
    return (bool(jax.config.jax_enable_x64), structure, tuple(leaves))


class CompiledFunctions:
    """The compiled functions of one adapter, and facts recorded while tracing them."""

    def __init__(self) -> None:
        self._jitted: dict[Hashable, tuple[Binding, Callable]] = {}
        #: Facts learned at trace time (shapes), keyed by the caller.
        self.values: dict[Hashable, Any] = {}
        self._log_probs: dict[Hashable, Any] = {}

    @staticmethod
    def key(binding: Binding, static: Mapping[str, Any]) -> tuple[Hashable, ...]:
        # Bindings are long-lived registry objects; their identity names them (they hold dicts,
        # so they do not hash by value). Each entry keeps its binding alive.
        return (id(binding), tuple(sorted((k, repr(v)) for k, v in static.items())))

    def jitted(
        self,
        what: tuple[Hashable, ...],
        binding: Binding,
        static: Mapping[str, Any],
        make: Callable[[], Callable],
    ) -> Callable:
        """The compiled ``make()`` for (``what``, binding, static parameters), made once."""
        import jax

        key = (*what, *self.key(binding, static))
        found = self._jitted.get(key)
        if found is None:
            found = self._jitted[key] = (binding, jax.jit(make()))
        return found[1]

    # A compiled gradient computes log_prob too: an item that then asks for log_prob of the
    # same inputs (a broadcast variant's shapes and log_prob parts) reads it instead of compiling
    # a second function. Keyed by the inputs' contents; only the latest few are kept, and the
    # adapter forgets them when the next item starts.
    _REMEMBERED = 4

    def _content(self, binding, static, arrays, value) -> Hashable:
        import numpy as np

        def content(x: Any) -> tuple:
            host = np.asarray(x)
            return (host.shape, str(host.dtype), host.tobytes())

        named = tuple((k, content(arrays[k])) for k in sorted(arrays))
        return (*self.key(binding, static), named, content(value))

    def remember_log_prob(self, binding, static, arrays, value, log_prob, how=()) -> None:
        """``how``: how log_prob was taken beyond plain evaluation (vmap's axes)."""
        if len(self._log_probs) >= self._REMEMBERED:
            self._log_probs.pop(next(iter(self._log_probs)))
        self._log_probs[(how, self._content(binding, static, arrays, value))] = log_prob

    def remembered_log_prob(self, binding, static, arrays, value, how=()) -> Any | None:
        return self._log_probs.get((how, self._content(binding, static, arrays, value)))

    def forget_log_probs(self) -> None:
        self._log_probs.clear()

    def clear(self) -> None:
        self._jitted.clear()
        self.values.clear()
        self._log_probs.clear()
