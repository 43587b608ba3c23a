"""Compiled evaluation for JAX adapters: one ``jax.jit`` function per binding and operation.

NumPyro's users evaluate ``log_prob`` and its gradients compiled (MCMC, SVI and Predictive all
run under ``jax.jit``), so that is what the suite tests by default. Each function is made once
per (binding, static parameters, operation) and reused by every item: JAX's own cache then
compiles once per shape signature and the persistent compilation cache (see
:mod:`conformance.adapters.numpyro.store.cache`) keeps the executables between runs. Eager, op-by-op
evaluation keeps its own check (``eager``).
"""

from __future__ import annotations

import contextlib
import hashlib
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from conformance.adapters.base import import_dotted
from conformance.adapters.numpyro.store import cache, executables
from conformance.adapters.numpyro.store.executables import argument_avals
from conformance.registry import Binding


def constructors(spec: Any) -> Iterator[Any]:
    """The objects a binding's nested ``{call: ...}`` arguments name."""
    if isinstance(spec, dict):
        if "call" in spec:
            yield import_dotted(spec["call"])
        for value in spec.values():
            yield from constructors(value)
    elif isinstance(spec, list | tuple):
        for value in spec:
            yield from constructors(value)


class CompilesLogProb(Protocol):
    """What a :class:`Deferred` asks of the adapter that made it (the adapter imports this
    module, not the other way round)."""

    def compiled_log_prob(self, dist: Deferred, value: Any) -> Any: ...


@dataclass(frozen=True, eq=False)
class Deferred:
    """A distribution the compiled path builds inside each compiled function, as a model under
    ``jax.jit`` does; its shapes come from tracing the construction once per signature."""

    adapter: CompilesLogProb
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


class Facts(dict):
    """Facts learned at trace time, noting which ones a trace records (so a stored
    executable can bring them back: loading it never traces)."""

    def __init__(self) -> None:
        super().__init__()
        self._recorded: list[dict] = []

    def __setitem__(self, key: Hashable, value: Any) -> None:
        super().__setitem__(key, value)
        for recorded in self._recorded:
            recorded[key] = value

    @contextlib.contextmanager
    def recording(self) -> Iterator[dict]:
        recorded: dict = {}
        self._recorded.append(recorded)
        try:
            yield recorded
        finally:
            self._recorded.remove(recorded)


class StoredFunction:
    """A ``jax.jit`` function compiled once per argument signature, each executable looked
    up in the :class:`~conformance.adapters.executables.ExecutableStore` before tracing."""

    def __init__(self, owner: CompiledFunctions, name: Hashable, jitted: Any) -> None:
        self._owner, self.name, self._jitted = owner, name, jitted
        self._compiled: dict[Hashable, Any] = {}

    def __call__(self, *args: Any) -> Any:
        import jax

        avals = (bool(jax.config.jax_enable_x64), argument_avals(args))
        compiled = self._compiled.get(avals)
        if compiled is None:
            compiled = self._compiled[avals] = self._owner.compile(
                self.name, self._jitted, avals, args
            )
        self._owner.used(self, avals)
        return compiled(*args)

    def forget(self, avals: Hashable) -> None:
        self._compiled.pop(avals, None)


def _device_of(args: tuple) -> Any:
    import jax

    for leaf in jax.tree_util.tree_leaves(args):
        if isinstance(leaf, jax.Array):
            return next(iter(leaf.devices()))
    return jax.devices()[0]


def _static_token(value: Any) -> str:
    """A static parameter by content (a NumPy array's repr elides the middle of long ones)."""
    import numpy as np

    if isinstance(value, np.ndarray):
        digest = hashlib.blake2b(np.ascontiguousarray(value).tobytes(), digest_size=12)
        return f"ndarray{value.shape}{value.dtype}:{digest.hexdigest()}"
    return repr(value)


class CompiledFunctions:
    """The compiled functions of one adapter, and facts recorded while tracing them.

    ``owner`` is the adapter class: its traces are its own."""

    #: Executables kept loaded, the most recently used (see :meth:`used`).
    LIVE_EXECUTABLES = 128

    def __init__(self, owner: type) -> None:
        self.owner = owner
        self._jitted: dict[Hashable, StoredFunction] = {}
        self._live: OrderedDict[tuple[int, Hashable], StoredFunction] = OrderedDict()
        self._pinned: set[tuple[Hashable, Hashable]] = set()
        #: Facts learned at trace time (shapes), keyed by the caller.
        self.values = Facts()
        self._log_probs: dict[Hashable, Any] = {}
        self._bindings: dict[int, tuple[Binding, str]] = {}
        self._rules: dict[str, str] = {}

    def used(self, function: StoredFunction, avals: Hashable) -> None:
        """Keep the executable ``function`` just ran for ``avals`` loaded, and unload the least
        recently used beyond :data:`LIVE_EXECUTABLES` where a store can load them again.

        A loaded XLA:CPU executable holds about 2 MB and 50 memory mappings of its own (jaxlib
        0.10.2), and a worker runs thousands: kept for good, they filled the memory budget every
        ~800 items, and each release then dropped JAX's op-by-op executables too, which the
        eager items lowered and loaded again. Items reuse an executable within a case (its
        checks and dtypes), so a short memory loses no reuse worth having."""
        if (function.name, avals) in self._pinned:
            return  # compiled here and not stored: unloaded, it would be compiled again
        key = (id(function), avals)
        live = self._live
        if key in live:
            live.move_to_end(key)
            return
        live[key] = function
        if executables.store().directory is None:
            return  # nothing to load them from: a dropped executable would be compiled again
        while len(live) > self.LIVE_EXECUTABLES:
            (_, old_avals), old = live.popitem(last=False)
            old.forget(old_avals)

    def take_fingerprint(self) -> None:
        """Fingerprint the live code this process traces, once (no-op without a store)."""
        if executables.store().directory is not None:
            executables.code_fingerprint(self.owner)

    def _binding_token(self, binding: Binding) -> str:
        # Bindings are long-lived registry objects holding dicts (they do not hash): named by
        # content, the same in every process, and, where executables are stored, by the live
        # code of the distribution classes they reach; looked up by identity (each entry keeps
        # its binding alive, so an id is never reused for another binding).
        found = self._bindings.get(id(binding))
        if found is None:
            token = hashlib.blake2b(binding.model_dump_json().encode(), digest_size=12)
            if executables.store().directory is not None:
                roots = (import_dotted(binding.constructor), *constructors(binding.args))
                token.update(executables.binding_fingerprint(self.owner, roots).encode())
            found = self._bindings[id(binding)] = (binding, token.hexdigest())
        return found[1]

    def rules_token(self, dispatcher: str) -> str:
        """The functions a dispatcher (``numpyro.distributions.kl.kl_divergence``) has
        registered, as their code is now: a compiled call through it is keyed by them too, so
        a changed rule is compiled afresh."""
        found = self._rules.get(dispatcher)
        if found is None:
            found = dispatcher
            if executables.store().directory is not None:
                rules = tuple(import_dotted(dispatcher).funcs.values())
                found += ":" + executables.binding_fingerprint(self.owner, rules)
            self._rules[dispatcher] = found
        return found

    def key(self, binding: Binding, static: Mapping[str, Any]) -> tuple[Hashable, ...]:
        return (
            self._binding_token(binding),
            tuple(sorted((k, _static_token(v)) for k, v in static.items())),
        )

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
            found = self._jitted[key] = StoredFunction(self, key, jax.jit(make()))
        return found

    def learn(self, name: Hashable, args: tuple, trace: Callable[[], Any]) -> Any:
        """What ``trace()`` learns about ``args`` (e.g. a distribution's shapes by
        ``jax.eval_shape``), kept in the store like an executable so a later run needs no
        trace."""
        import jax

        store = executables.store()
        if store.directory is None:
            return trace()
        avals = (bool(jax.config.jax_enable_x64), argument_avals(args))
        key = store.key(("fact", name), avals, _device_of(args), self.owner)
        found = store.load_fact(key)
        if found is None:
            found = trace()
            store.save_fact(key, found)
        return found

    def compile(self, name: Hashable, jitted: Any, avals: Hashable, args: tuple) -> Any:
        """The executable of ``jitted`` for ``args``: stored by an earlier run, or traced,
        compiled and stored now."""
        store = executables.store()
        if store.directory is None:
            return jitted.lower(*args).compile()
        device = _device_of(args)
        key = store.key(name, avals, device, self.owner)
        found = store.load(key, device)
        if isinstance(found, executables.StoredFailure):  # this trace raised before: again
            self.values.update(found.facts)
            raise found.exc
        if found is not None:
            compiled, facts = found
            self.values.update(facts)
            return compiled
        with self.values.recording() as facts, cache.bypassed() as storable:
            try:
                compiled = jitted.lower(*args).compile()
            except Exception as exc:
                if storable:
                    store.save_failure(key, exc, facts)
                raise
        if not (storable and store.save(key, compiled, facts)):
            self._pinned.add((name, avals))
        return compiled

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
        self._live.clear()
        self._pinned.clear()
        self.values.clear()
        self._log_probs.clear()
