"""numpyro.distributions on JAX, compiled by default as its users run it.

Construction, ``log_prob``, gradients, vmap and effect-handler sites each evaluate inside one
``jax.jit`` function per binding and operation (see :mod:`conformance.adapters.numpyro.compiled`);
:meth:`NumpyroAdapter.eager` is the same framework op by op, for the ``eager`` check and for
inputs outside the support or domain (validation errors and warnings are eager behaviour:
under ``jax.jit`` NumPyro cannot see the values).

float64 runs switch JAX's x64 mode on only inside :meth:`NumpyroAdapter.precision`, so it never
leaks into float32 runs in the same process (and a global ``JAX_ENABLE_X64`` cannot leak either).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

import numpy as np

from conformance.adapters.base import Adapter, split_mapped
from conformance.adapters.hooks import Command
from conformance.adapters.kl import DividesByRules
from conformance.adapters.numpyro.compiled import CompiledFunctions, Deferred, signature
from conformance.adapters.numpyro.contexts import NumpyroContexts
from conformance.adapters.numpyro.dialect import JaxDialect
from conformance.adapters.numpyro.store import cache, lowering
from conformance.adapters.summaries import ReadsSummaries, read_summary
from conformance.operations import DrawMode, DrawRaised, Operation
from conformance.registry import Binding
from conformance.registry.bounds import static_bounds
from conformance.reproducers.dialects import Dialect
from conformance.summaries import Summary


def x64(enabled: bool) -> contextlib.AbstractContextManager:
    """JAX's x64 switch as a context manager, on old (0.4.x) and new releases alike."""
    import jax

    if hasattr(jax, "enable_x64"):
        return jax.enable_x64(enabled)
    from jax import experimental

    return experimental.enable_x64() if enabled else experimental.disable_x64()


def _vmap_key(axes: Mapping[str, int], value_axis: int | None) -> tuple:
    """Names one vmapped log_prob: its compiled function, and the value a gradient left."""
    return ("vmap", tuple(sorted(axes.items())), value_axis)


class NumpyroAdapter(NumpyroContexts, ReadsSummaries, DividesByRules, Adapter):
    name = "numpyro"
    package = "numpyro"
    module = "numpyro.distributions"
    # Parameters are validated eagerly at construction (when concrete); values outside the
    # support only warn unless numpyro.enable_validation() is on.
    validation = "params"
    registry_name = "numpyro"
    kl_function = "numpyro.distributions.kl.kl_divergence"
    kl_rules = "numpyro"
    family_module = "numpyro.distributions"
    distribution_modules = ("numpyro.distributions",)
    distribution_bases = ("numpyro.distributions.Distribution",)
    # What a compiled function's trace can run, for the executable store's key
    # (conformance.adapters.numpyro.store.executables.code_scope): these packages' loaded modules, live;
    # jaxlib by version and source (a compiled extension whose Python half is run-time state);
    # the modules traces import lazily, imported first so every process walks the same set;
    # NumPyro keeps settings in module globals and class attributes (enable_validation), JAX in
    # jax.config (keyed by itself); distribution classes hashed per binding, as far as its
    # constructor reaches.
    traced_packages: ClassVar[tuple[str, ...]] = ("jax", "numpyro")
    extension_packages: ClassVar[tuple[str, ...]] = ("jaxlib",)
    traced_imports: ClassVar[tuple[str, ...]] = (
        "numpyro.primitives",
        "numpyro.handlers",
        "numpyro.contrib.control_flow.scan",
        "numpyro.contrib.control_flow.cond",
        "jax.experimental.serialize_executable",
    )
    setting_packages: ClassVar[tuple[str, ...]] = ("numpyro",)
    distribution_base: ClassVar[str] = "numpyro.distributions.Distribution"
    reported_packages: ClassVar[tuple[str, ...]] = ("jax", "jaxlib", "numpyro")
    imported_modules: ClassVar[tuple[str, ...]] = ("jax", "numpyro")

    @classmethod
    def after_run(cls, started: float) -> None:
        """Give each worker's JAX cache directory what the others compiled (see
        :func:`~conformance.adapters.numpyro.store.cache.share_between_workers`)."""
        with contextlib.suppress(OSError):
            cache.share_between_workers(changed_since=started)

    @classmethod
    def commands(cls) -> tuple[Command, ...]:
        from conformance.adapters.numpyro.store.commands import JAX_CACHE

        return (JAX_CACHE,)

    @classmethod
    def fresh_cache_environment(cls, directory: str) -> dict[str, str]:
        return {cache.ENV: directory}

    def reproducer(self) -> Dialect | None:
        return JaxDialect(self.evaluates_compiled(), draw_in_context=_draw_in_context)

    def device_unavailable(self, device: str) -> str | None:
        if device == "cpu":
            return None
        import jax

        if device == "cuda":
            try:
                jax.devices("gpu")
            except RuntimeError as exc:
                return f"JAX sees no GPU: {exc}"
            return None
        return f"unknown device {device!r}"

    @contextlib.contextmanager
    def precision(self, dtype: str) -> Iterator[None]:
        cache.configure()
        lowering.share_context()
        # Before anything is traced: the code patched at start-up (sitecustomize, a session
        # fixture) is what the executable store keys on, the same set in every process.
        self._functions.take_fingerprint()
        # Entered once per item: a log_prob remembered from a gradient serves only the parts of
        # the same item, so no item's result depends on which item ran before it.
        self._functions.forget_log_probs()
        with x64(dtype == "float64"):
            yield

    def release_caches(self) -> None:
        """Eager JAX keeps an XLA executable per primitive and shape for good: drop them all."""
        self._functions.clear()
        if self._eager_twin is not None:
            self._eager_twin.release_caches()
        jax = sys.modules.get("jax")
        if jax is not None:
            jax.clear_caches()
        lowering.drop_context()

    def _device(self, device: str) -> Any:
        import jax

        return jax.devices("gpu" if device == "cuda" else "cpu")[0]

    def asarray(self, array: np.ndarray, device: str) -> Any:
        import jax

        return jax.device_put(np.array(array), self._device(device))

    def to_numpy(self, array: Any) -> np.ndarray:
        return np.asarray(array)

    operations: ClassVar[Mapping[Operation, str]] = {
        Operation.GRAD: "jax.grad",
        Operation.GRAD_FUNCTIONAL: "jax.vjp",
        Operation.VMAP: "jax.vmap",
        Operation.EAGER: "op by op, without jax.jit",
        Operation.PLATE: "numpyro.plate",
        Operation.SCAN: "numpyro.contrib.control_flow.scan",
        Operation.PLATE_IN_SCAN: "numpyro.plate inside numpyro.contrib.control_flow.scan",
        Operation.CONTEXT: "as users call it: NumPy and Python inputs, x64, log_density",
        Operation.SAMPLE: "Distribution.sample(jax.random.PRNGKey(seed), sample_shape) under jax.jit",
        Operation.SUMMARIES: "the properties mean, variance, mode; entropy(); under jax.jit",
        Operation.CDF: "Distribution.cdf under jax.jit",
        Operation.ICDF: "Distribution.icdf under jax.jit",
        Operation.KL: "numpyro.distributions.kl_divergence(p, q) under jax.jit",
    }
    draw_modes: ClassVar[Mapping[DrawMode, str]] = {
        DrawMode.SAMPLE: "Distribution.sample(key, sample_shape)",
        DrawMode.RSAMPLE: "Distribution.rsample(key, sample_shape)",
        DrawMode.VMAP: "jax.vmap over sample_shape[0] keys of Distribution.sample(key, "
        "sample_shape[1:])",
        DrawMode.PLATE: "numpyro.sample inside a numpyro.plate per sample dimension, under "
        "handlers.seed",
        DrawMode.SCAN: "numpyro.sample in numpyro.contrib.control_flow.scan of length "
        "sample_shape[0], inside a numpyro.plate per later sample dimension",
    }
    #: Drawn for the support besides being traced: ``sample``, and ``vmap`` over keys (JAX's
    #: batching rules rewrite the sampler, its rejection loops above all). Traced only:
    #: ``rsample`` (NumPyro's ``rsample`` is ``sample`` for every distribution that has one),
    #: a plate (the expanded distribution's ``sample``: the same sampler at a larger shape) and
    #: ``scan`` (the same sampler in a loop's body). Each drawn mode is a sampler compiled into
    #: the item's program: five of them were most of a cold ``sample_shapes`` item.
    support_draw_modes: ClassVar[frozenset[DrawMode] | None] = frozenset(
        {DrawMode.SAMPLE, DrawMode.VMAP}
    )

    # ----- compiled or eager ----------------------------------------------------------------
    def __init__(self, compiled: bool = True) -> None:
        self.compiled = compiled
        self._eager_twin: NumpyroAdapter | None = None
        self._functions = CompiledFunctions(type(self))

    def evaluates_compiled(self) -> bool:
        return self.compiled

    def eager(self) -> NumpyroAdapter:
        if not self.compiled:
            return self
        if self._eager_twin is None:
            self._eager_twin = type(self)(compiled=False)
        return self._eager_twin

    def _distribution(self, binding: Binding, params: Mapping[str, Any]) -> Any:
        """The real NumPyro distribution (inside a compiled function, or eagerly)."""
        return Adapter.construct(self, binding, params)

    def construct(self, binding: Binding, params: Mapping[str, Any]) -> Any:
        if not self.compiled:
            return self._distribution(binding, params)
        import jax
        import jax.numpy as jnp

        arrays, static = self._arrays_and_static(binding, params)
        key = self._shapes_key(binding, static, arrays)
        shapes = self._functions.values.get(key)
        if shapes is None:

            def trace() -> tuple[tuple[int, ...], tuple[int, ...]]:
                found: dict[str, tuple[int, ...]] = {}

                def build(a: dict[str, Any]) -> Any:
                    dist = self._distribution(binding, {**static, **a})
                    found["batch"] = tuple(dist.batch_shape)
                    found["event"] = tuple(dist.event_shape)
                    return jnp.zeros(())

                jax.eval_shape(build, arrays)
                return found["batch"], found["event"]

            shapes = self._functions.learn(key, (arrays,), trace)
            self._functions.values[key] = shapes
        return Deferred(self, binding, arrays, static, *shapes)

    def _shapes_key(self, binding: Binding, static: Mapping[str, Any], arrays: Mapping) -> Any:
        return ("shapes", *self._functions.key(binding, static), signature(dict(arrays)))

    def _record_shapes(self, binding, static, arrays, dist) -> None:
        """Note a traced distribution's shapes, so building it for its shapes needs no trace."""
        key = self._shapes_key(binding, static, arrays)
        self._functions.values[key] = (tuple(dist.batch_shape), tuple(dist.event_shape))

    def compiled_log_prob(self, dist: Deferred, value: Any) -> Any:
        """``dist.log_prob(value)`` of a :class:`Deferred`: construction and log_prob compiled."""

        def make() -> Any:
            def log_prob(arrays: dict[str, Any], v: Any) -> Any:
                built = self._distribution(dist.binding, {**dist.static, **arrays})
                return self.log_prob(built, v)

            return log_prob

        known = self._functions.remembered_log_prob(dist.binding, dist.static, dist.arrays, value)
        if known is not None:
            return known
        fn = self._functions.jitted(("log_prob",), dist.binding, dist.static, make)
        return fn(dist.arrays, value)

    def _primal_log_prob(self, binding, static):
        """(primals, arrays, value) → log_prob, the primals (``wrt``) replacing their inputs.

        Traced, it also notes the distribution's shapes, so building it for its shapes later
        needs no trace of its own."""

        def log_prob(primals: dict[str, Any], arrays: dict[str, Any], v: Any) -> Any:
            p = {**static, **arrays, **{k: x for k, x in primals.items() if k != "value"}}
            dist = self._distribution(binding, p)
            if self.compiled:
                self._record_shapes(binding, static, {k: p[k] for k in arrays}, dist)
            return self.log_prob(dist, primals.get("value", v))

        return log_prob

    def _objective(self, binding, static):
        """(primals, arrays, value, cotangent) → (Σ cotangent · log_prob, log_prob): the
        gradient w.r.t. the primals, with log_prob on the way (``has_aux``), as MCMC's
        value-and-grad computes it."""
        import jax.numpy as jnp

        log_prob = self._primal_log_prob(binding, static)

        def objective(primals: dict[str, Any], arrays: dict[str, Any], v: Any, ct: Any) -> Any:
            lp = log_prob(primals, arrays, v)
            return jnp.sum(lp * ct), lp

        return objective

    def log_prob_vjp(self, binding, params, value, cotangent, wrt, method):
        import jax
        import jax.numpy as jnp

        arrays, static = self._arrays_and_static(binding, params)
        primals = {k: value if k == "value" else params[k] for k in wrt}

        def make() -> Any:
            """(primals, arrays, value, cotangent) → (gradient, log_prob)."""
            if method == "grad":
                return jax.grad(self._objective(binding, static), has_aux=True)
            log_prob = self._primal_log_prob(binding, static)

            def pullback(primals, a, v, ct):
                out, back = jax.vjp(lambda pr: log_prob(pr, a, v), primals)
                return back(jnp.asarray(ct, dtype=out.dtype))[0], out

            return pullback

        if method not in ("grad", "grad_functional"):
            raise NotImplementedError(method)
        if not self.compiled:
            return dict(make()(primals, arrays, value, cotangent)[0])
        fn = self._functions.jitted(("vjp", method, tuple(wrt)), binding, static, make)
        grads, lp = fn(primals, arrays, value, cotangent)
        self._functions.remember_log_prob(binding, static, arrays, value, lp)
        return dict(grads)

    def vmap_log_prob(self, binding, params, value, in_axes, value_axis):
        import jax

        mapped, fixed, axes = split_mapped(params, in_axes)
        arrays, static = self._arrays_and_static(binding, fixed, params)

        def make() -> Any:
            def f(m: dict[str, Any], a: dict[str, Any], v: Any) -> Any:
                return self.log_prob(self._distribution(binding, {**static, **a, **m}), v)

            def mapped_log_prob(m, a, v):
                return jax.vmap(f, in_axes=(axes, None, value_axis))(m, a, v)

            return mapped_log_prob

        key = _vmap_key(axes, value_axis)
        if self.compiled:
            known = self._functions.remembered_log_prob(
                binding, static, {**arrays, **mapped}, value, how=key
            )
            if known is not None:
                return known
        return self._call(key, binding, static, make, mapped, arrays, value)

    def vmap_vjp(self, binding, params, value, cotangent, wrt, in_axes, value_axis):
        import jax

        mapped, fixed, axes = split_mapped(params, in_axes)
        arrays, static = self._arrays_and_static(binding, fixed, params)

        def make() -> Any:
            objective = self._objective(binding, static)

            def slice_vjp(m: dict[str, Any], a: dict[str, Any], v: Any, ct: Any) -> Any:
                merged = {**a, **m}
                primals = {k: v if k == "value" else merged[k] for k in wrt}
                return jax.grad(objective, has_aux=True)(primals, merged, v, ct)

            def mapped_vjp(m, a, v, ct):
                return jax.vmap(slice_vjp, in_axes=(axes, None, value_axis, 0))(m, a, v, ct)

            return mapped_vjp

        key = ("vmap_vjp", tuple(sorted(axes.items())), value_axis, tuple(wrt))
        grads, lp = self._call(key, binding, static, make, mapped, arrays, value, cotangent)
        if self.compiled:  # the vmapped log_prob of the same mapping, for vmap_log_prob
            self._functions.remember_log_prob(
                binding, static, {**arrays, **mapped}, value, lp, how=_vmap_key(axes, value_axis)
            )
        return dict(grads)

    def summaries(self, binding, params, names):
        """Every summary the class defines, in one compiled function per binding and shapes
        (the ``moments`` and ``entropy`` items of a case share it); where tracing that raises,
        each asked summary alone, so one that raises leaves the others their values."""
        if not self.compiled:
            return ReadsSummaries.summaries(self, binding, params, names)
        arrays, static = self._arrays_and_static(binding, params)
        every = tuple(s.value for s in Summary if self.implements(binding, s))
        together = every if set(names) <= set(every) else tuple(names)

        def evaluate(asked: tuple[str, ...]) -> dict[str, Any]:
            def make() -> Any:
                def read(a: dict[str, Any]) -> dict[str, Any]:
                    dist = self._distribution(binding, {**static, **a})
                    found = {n: read_summary(dist, Summary(n)) for n in asked}
                    for value in found.values():
                        if isinstance(value, Exception):
                            raise value
                    return found

                return read

            return self._call(("summaries", asked), binding, static, make, arrays)

        try:
            found = evaluate(together)
            return {n: found[n] for n in names}
        except Exception as exc:
            if len(together) == 1:
                return {names[0]: exc}
        out: dict[str, Any] = {}
        for name in names:
            try:
                out[name] = evaluate((name,))[name]
            except Exception as exc:  # this summary only
                out[name] = exc
        return out

    def cdf(self, binding, params, value):
        """``dist.cdf(value)``, construction and cdf compiled together."""
        arrays, static = self._arrays_and_static(binding, params)

        def make() -> Any:
            def cdf(a: dict[str, Any], v: Any) -> Any:
                return self._distribution(binding, {**static, **a}).cdf(v)

            return cdf

        return self._call(("cdf",), binding, static, make, arrays, value)

    def icdf(self, binding, params, q):
        """``dist.icdf(q)``, construction and icdf compiled together."""
        arrays, static = self._arrays_and_static(binding, params)

        def make() -> Any:
            def icdf(a: dict[str, Any], p: Any) -> Any:
                return self._distribution(binding, {**static, **a}).icdf(p)

            return icdf

        return self._call(("icdf",), binding, static, make, arrays, q)

    def kl_divergence(self, p_binding, p_params, q_binding, q_params):
        """``kl_divergence(p, q)``, both constructions and the rule compiled together, keyed
        by both bindings and their static parameters."""
        if not self.compiled:
            return DividesByRules.kl_divergence(self, p_binding, p_params, q_binding, q_params)
        p_arrays, p_static = self._arrays_and_static(p_binding, p_params)
        q_arrays, q_static = self._arrays_and_static(q_binding, q_params)

        def make() -> Any:
            from numpyro.distributions.kl import kl_divergence

            def divergence(p: dict[str, Any], q: dict[str, Any]) -> Any:
                return kl_divergence(
                    self._distribution(p_binding, {**p_static, **p}),
                    self._distribution(q_binding, {**q_static, **q}),
                )

            return divergence

        rules = self._functions.rules_token(self.kl_function)
        what = ("kl", rules, *self._functions.key(q_binding, q_static))
        return self._call(what, p_binding, p_static, make, p_arrays, q_arrays)

    def kl_vjp(self, p_binding, p_params, q_binding, q_params, cotangent, wrt):
        """The gradient by jax.grad of Σ cotangent · kl_divergence(p, q), compiled with both
        constructions."""
        import jax
        import jax.numpy as jnp

        p_arrays, p_static = self._arrays_and_static(p_binding, p_params)
        q_arrays, q_static = self._arrays_and_static(q_binding, q_params)
        sides = {"p": p_arrays, "q": q_arrays}
        primals = {key: sides[key[0]][key[2:]] for key in wrt}

        def make() -> Any:
            from numpyro.distributions.kl import kl_divergence

            def objective(pr: dict[str, Any], p: dict[str, Any], q: dict[str, Any], ct: Any):
                p = {**p, **{k[2:]: v for k, v in pr.items() if k.startswith("p:")}}
                q = {**q, **{k[2:]: v for k, v in pr.items() if k.startswith("q:")}}
                kl = kl_divergence(
                    self._distribution(p_binding, {**p_static, **p}),
                    self._distribution(q_binding, {**q_static, **q}),
                )
                return jnp.sum(kl * ct), kl

            return jax.grad(objective, has_aux=True)

        rules = self._functions.rules_token(self.kl_function)
        what = ("kl_vjp", tuple(wrt), rules, *self._functions.key(q_binding, q_static))
        grads, _ = self._call(
            what, p_binding, p_static, make, primals, p_arrays, q_arrays, cotangent
        )
        return dict(grads)

    def _call(self, key, binding, static, make, *args):
        """``make()`` applied to ``args``: compiled (and reused) or eagerly, as this adapter runs."""
        if not self.compiled:
            return make()(*args)
        return self._functions.jitted(key, binding, static, make)(*args)

    def _arrays_and_static(self, binding, params, concrete=None):
        """The parameters a compiled function takes as arguments (JAX arrays), and the others
        with the binding's static bounds, read from ``concrete`` (default ``params``; a
        vmapped call's whole parameters) before any trace."""
        import jax

        arrays = {k: v for k, v in params.items() if isinstance(v, jax.Array)}
        static = {k: v for k, v in params.items() if k not in arrays}
        static.update(static_bounds(binding, params if concrete is None else concrete))
        return arrays, static

    def effect_site(self, kind, binding, params, value, plate, steps):
        import jax.numpy as jnp
        import numpyro
        from numpyro import handlers
        from numpyro.contrib.control_flow import scan

        arrays, static = self._arrays_and_static(binding, params)
        batch_shapes = self._functions.values

        def make() -> Any:
            def site_log_prob(arrays: dict[str, Any], value: Any) -> Any:
                def sample(p: dict[str, Any], obs: Any) -> None:
                    dist = self._distribution(binding, {**static, **p})
                    if plate is None:
                        numpyro.sample("x", dist, obs=obs)
                        return
                    with numpyro.plate("plate", plate[0], dim=plate[1]):
                        numpyro.sample("x", dist, obs=obs)

                if kind == "plate":

                    def model() -> None:
                        sample(arrays, value)

                else:
                    # Every parameter enters the scan body as carry + input, like the model of
                    # pyro-ppl/numpyro#1971 (loc = c + a): the body sees per-step parameters.
                    def model() -> None:
                        def body(carry: dict[str, Any], x: dict[str, Any]) -> tuple[Any, None]:
                            sample({k: carry[k] + x[k] for k in arrays}, x["value"])
                            return carry, None

                        init = {k: jnp.zeros((), arrays[k].dtype) for k in arrays}
                        xs = {k: jnp.broadcast_to(v, (steps, *v.shape)) for k, v in arrays.items()}
                        xs["value"] = value
                        scan(body, init, xs)

                site = handlers.trace(handlers.seed(model, 0)).get_trace()["x"]
                # Recorded while tracing: a compiled call that reuses the trace never runs this.
                batch_shapes[(*key, *fkey, signature(arrays, value))] = tuple(
                    site["fn"].batch_shape
                )
                return self.log_prob(site["fn"], site["value"])

            return site_log_prob

        key, fkey = ("site", kind, plate, steps), self._functions.key(binding, static)
        out = self._call(key, binding, static, make, arrays, value)
        return batch_shapes[(*key, *fkey, signature(arrays, value))], out

    # ----- draws ---------------------------------------------------------------------------------
    def has_rsample(self, binding, params):
        """``Distribution.has_rsample`` of the distribution these parameters build (a property
        of some wrappers, read from their base), learned by tracing the construction once."""
        import jax
        import jax.numpy as jnp

        arrays, static = self._arrays_and_static(binding, params)
        if not self.compiled:
            return bool(self._distribution(binding, params).has_rsample)

        def trace() -> bool:
            found: dict[str, bool] = {}

            def build(a: dict[str, Any]) -> Any:
                found["rsample"] = bool(self._distribution(binding, {**static, **a}).has_rsample)
                return jnp.zeros(())

            jax.eval_shape(build, arrays)
            return found["rsample"]

        key = ("has_rsample", *self._functions.key(binding, static), signature(dict(arrays)))
        return self._functions.learn(key, (arrays,), trace)

    def _draws(self, binding, static, requests, raised=None) -> tuple[tuple, Any]:
        """The requests as (mode, shape) pairs, and a maker of (arrays, key) → every request's
        draws from one distribution, the key split once per request. Given a dict ``raised``,
        a request whose draws raise while tracing gives None and its exception there (by
        index), and the others still draw."""
        import jax

        asked = tuple((DrawMode(mode), tuple(shape)) for mode, shape in requests)
        for mode, _ in asked:
            if mode not in self.draw_modes:
                raise NotImplementedError(f"{self.name} has no draw mode {mode}")

        def make() -> Any:
            def draws(a: dict[str, Any], key: Any) -> list[Any]:
                dist = self._distribution(binding, {**static, **a})
                keys = jax.random.split(key, len(asked))
                found: list[Any] = []
                for i, ((mode, shape), k) in enumerate(zip(asked, keys, strict=True)):
                    try:
                        found.append(_draw_in_context(dist, mode, shape, k))
                    except Exception as exc:  # this context only: the others still draw
                        if raised is None:
                            raise
                        raised[i] = exc
                        found.append(None)
                return found

            return draws

        return asked, make

    def draw(self, binding, params, requests, seed):
        """Every request drawn in one compiled function from ``jax.random.PRNGKey(seed)``,
        as NumPyro's ``sample(key, sample_shape)`` and ``rsample`` take keys (a jitted model or
        ``Predictive`` draws this way)."""
        import jax

        arrays, static = self._arrays_and_static(binding, params)
        asked, make = self._draws(binding, static, requests)
        key = jax.random.PRNGKey(seed)
        leaf = next(iter(jax.tree_util.tree_leaves(arrays)), None)
        if leaf is not None:
            key = jax.device_put(key, next(iter(leaf.devices())))
        return list(self._call(("draw", asked), binding, static, make, arrays, key))

    #: Parameters whose draws are not one noise's monotone map (see
    #: :class:`conformance.adapters.capabilities.PathwiseDraws`), with the reason.
    pathwise_exempt_parameters: ClassVar[Mapping[str, Mapping[str, str]]] = {
        "StudentT": {
            "df": "StudentT.sample multiplies a normal draw by the root of df over a chi-square "
            "draw (two noises): its derivative by df depends on both, not on the draw alone",
        },
        "Beta": {  # Beta and BetaProportion (mean, concentration)
            name: "Beta.sample is the first coordinate of a Dirichlet draw, two Gamma draws "
            "normalised (two noises): its derivatives by the parameters depend on both"
            for name in ("concentration1", "concentration0", "mean", "concentration")
        },
        "AsymmetricLaplace": {
            "asymmetry": "AsymmetricLaplace.sample is loc - scale·asymmetry·u + scale/asymmetry·v "
            "with two exponential draws u, v (two noises): its derivative by asymmetry, "
            "-scale·(u + v/asymmetry²), depends on both, not on the draw alone",
        },
        "AsymmetricLaplaceQuantile": {
            "quantile": "AsymmetricLaplaceQuantile.sample is AsymmetricLaplace's, whose "
            "asymmetry and scale the quantile sets (two exponential draws, two noises): its "
            "derivative by quantile depends on both, not on the draw alone",
        },
        "FoldedDistribution": {
            name: "FoldedDistribution.sample is |y| of a Normal draw y, a map not monotone in "
            "the noise: d|y|/dθ = sign(y)·dy/dθ depends on the sign the draw lost, not on the "
            "draw alone"
            for name in ("loc", "scale")
        },
    }

    def pathwise_exempt(self, family: str) -> Mapping[str, str]:
        return self.pathwise_exempt_parameters.get(family, {})

    #: Parameters with event dimensions can be copied per draw (``pathwise_draws``' copies).
    pathwise_event_draws: ClassVar[bool] = True

    def pathwise_draws(self, binding, params, names, n, seed, copies=None, weights=None):
        """Reparameterised draws and their derivatives, in one compiled function as a jitted
        SVI step takes them (``jax.grad`` through ``rsample``): ``rsample(key)`` with every
        parameter in ``names`` broadcast to (n, *batch) (or to its shape in ``copies``: a
        parameter with event dimensions), so the gradient of the draws' sum gives each draw's
        own derivative, and ``rsample(key, (n,))`` with the gradient of its sum (each draw's
        coordinates weighted by ``weights``, an argument of the compiled function)."""
        import jax
        import jax.numpy as jnp

        arrays, static = self._arrays_and_static(binding, params)
        wrt = tuple(k for k in names if k in arrays)
        # Static: the compiled function is made per set of copy shapes (each is one signature).
        shapes = tuple(sorted((k, tuple(v)) for k, v in (copies or {}).items() if k in wrt))

        def make() -> Any:
            def pathwise(a: dict[str, Any], key: Any, w: Any) -> tuple:
                def draws(given: dict[str, Any], shape: tuple[int, ...]) -> tuple[Any, Any]:
                    x = self._distribution(binding, {**static, **a, **given}).rsample(key, shape)
                    return (x if w is None else x * w).sum(), x

                # The parameters' broadcast shape, read from the traced shapes (a function is
                # reused across cases: nothing shape-dependent may be closed over).
                if shapes:
                    own = {k: jnp.broadcast_to(a[k], shape) for k, shape in shapes}
                else:
                    batch = jnp.broadcast_shapes(*(jnp.shape(v) for v in a.values()))
                    own = {k: jnp.broadcast_to(a[k], (n, *batch)) for k in wrt}
                per_draw, each = jax.grad(draws, has_aux=True)(own, ())
                shared = {k: a[k] for k in wrt}
                total, summed = jax.grad(draws, has_aux=True)(shared, (n,))
                return each, per_draw, summed, total

            return pathwise

        key = jax.random.PRNGKey(seed)
        leaf = next(iter(jax.tree_util.tree_leaves(arrays)), None)
        if leaf is not None:
            key = jax.device_put(key, next(iter(leaf.devices())))
        dtype = leaf.dtype if leaf is not None else jnp.float32
        w = None if weights is None else jnp.asarray(weights, dtype=dtype)
        if w is not None and leaf is not None:
            w = jax.device_put(w, next(iter(leaf.devices())))
        name = ("pathwise", wrt, n, shapes, w is not None)
        return self._call(name, binding, static, make, arrays, key, w)

    def draw_shapes(self, binding, params, requests):
        """The draws' shapes and dtypes by tracing the same function (``jax.eval_shape``):
        under ``jax.jit`` they are fixed at trace time, so no sampler is compiled for them."""
        import jax

        arrays, static = self._arrays_and_static(binding, params)
        raised: dict[int, Exception] = {}
        asked, make = self._draws(binding, static, requests, raised)
        key = jax.random.PRNGKey(0)

        def trace() -> list[tuple[tuple[int, ...], str] | DrawRaised]:
            raised.clear()
            shapes = jax.eval_shape(make(), arrays, key)
            if raised and len(raised) == len(asked):  # nothing draws: the call raises
                raise raised[0]
            return [
                DrawRaised(type(raised[i]).__name__, str(raised[i]))
                if i in raised
                else (tuple(x.shape), str(x.dtype))
                for i, x in enumerate(shapes)
            ]

        if not self.compiled:
            return trace()
        name = ("draw_shapes", asked, *self._functions.key(binding, static))
        return self._functions.learn(name, (arrays, key), trace)

    def batch_shape(self, dist: Any) -> tuple[int, ...]:
        return tuple(dist.batch_shape)  # a Deferred's are the traced distribution's

    def event_shape(self, dist: Any) -> tuple[int, ...]:
        return tuple(dist.event_shape)


def _draw_in_context(dist: Any, mode: DrawMode, shape: tuple[int, ...], key: Any) -> Any:
    """One request's draws, of shape ``shape`` + batch + event in every mode: as the
    distribution's own method, or as a model draws (vmap over keys, plates, scan)."""
    import jax
    import numpyro
    from numpyro import handlers
    from numpyro.contrib.control_flow import scan

    if mode is DrawMode.SAMPLE:
        return dist.sample(key, shape)
    if mode is DrawMode.RSAMPLE:
        return dist.rsample(key, shape)
    if mode is DrawMode.VMAP:
        return jax.vmap(lambda k: dist.sample(k, shape[1:]))(jax.random.split(key, shape[0]))

    def site(sizes: tuple[int, ...]) -> Any:
        """A sample site inside one plate per size, left of the batch dimensions."""
        with contextlib.ExitStack() as plates:
            for i, size in enumerate(sizes):
                dim = -(len(dist.batch_shape) + len(sizes) - i)
                plates.enter_context(numpyro.plate(f"sample_{i}", size, dim=dim))
            return numpyro.sample("x", dist)

    if mode is DrawMode.PLATE:
        return handlers.seed(lambda: site(shape), key)()
    if mode is DrawMode.SCAN:

        def model() -> Any:
            return scan(lambda carry, _: (carry, site(shape[1:])), None, None, length=shape[0])[1]

        return handlers.seed(model, key)()
    raise NotImplementedError(f"no draw mode {mode}")
