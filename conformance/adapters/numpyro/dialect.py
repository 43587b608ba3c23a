"""How a reproducer writes JAX code: x64 as the item had it, arrays on the run's device, and
construction with log_prob compiled in one ``jax.jit`` function where the items are."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from conformance.reproducers.dialects import Dialect
from conformance.reproducers.script import plain_source


class JaxDialect(Dialect):
    imports = ("import jax", "import jax.numpy as jnp")
    roots = frozenset({"jax"})
    jit_decorator = "@jax.jit"

    def __init__(self, compiled: bool, draw_in_context: Callable[..., Any] | None = None) -> None:
        self.compiled = compiled
        #: The adapter's function that makes one draw request (its source goes into scripts).
        self.draw_in_context = draw_in_context

    def draw_definitions(self, ctx: Mapping[str, Any]) -> list[str]:
        """The adapter's own request maker, and ``requested(requests)``: the function of the
        arrays and a key that draws every request from one distribution, the key split once
        per request, as the adapter's draws are made."""
        if self.draw_in_context is None:
            return []
        every = ", ".join([*ctx["arrays"], "key"])
        return [
            *plain_source(self.draw_in_context),
            "def requested(requests):",
            f"    def draws({every}):",
            f"        dist = {ctx['call']}",
            "        keys = jax.random.split(key, len(requests))",
            f"        return [{self.draw_in_context.__name__}(dist, mode, shape, k) "
            "for (mode, shape), k in zip(requests, keys, strict=True)]",
            "    return draws",
            "KEY = jax.device_put(jax.random.PRNGKey(SEED), DEVICE)",
        ]

    def draw(self, ctx: Mapping[str, Any]) -> list[str] | None:
        if self.draw_in_context is None:
            return None
        every = ", ".join([*ctx["arrays"], "KEY"])
        made = (
            f"jax.jit(requested({ctx['requests']}))"
            if self.compiled
            else (f"requested({ctx['requests']})")
        )
        return [f"{ctx['into']} = [np.asarray(x) for x in {made}({every})]"]

    def pathwise(self, ctx: Mapping[str, Any]) -> list[str] | None:
        """As the adapter's ``pathwise_draws``: one function (jitted where the items are) of
        the arrays and the key, ``jax.grad`` through ``rsample`` with the parameters broadcast
        to (N, *batch) (a vector draw's to their shapes in ``ctx['copies']``, the draws'
        coordinates weighted by ``ctx['weights']``, an argument of the function as in the
        adapter), then through ``rsample(key, (N,))``."""
        arrays = ctx["arrays"]
        every = ", ".join(arrays)
        given = "{" + ", ".join(f"{a!r}: {a}" for a in arrays) + "}"
        made = "jax.jit(pathwise)" if self.compiled else "pathwise"
        copies, weights = ctx.get("copies"), ctx.get("weights")
        args = ", ".join([*arrays, "key", *(["w"] if weights else [])])
        if copies:
            own = [f"    own = {{k: jnp.broadcast_to(given[k], {copies}[k]) for k in wrt}}"]
        else:
            own = [
                "    batch = jnp.broadcast_shapes(*(jnp.shape(v) for v in given.values()))",
                "    own = {k: jnp.broadcast_to(given[k], (N, *batch)) for k in wrt}",
            ]
        call = ", ".join([*arrays, "KEY", *(["W"] if weights else [])])
        leaves = "jax.tree_util.tree_leaves(" + given + ")"
        return [
            f"def build({every}):",
            f"    return {ctx['call']}",
            f"def pathwise({args}):",
            f"    given = {given}",
            f"    wrt = [k for k in {ctx['names']} if k in given]",
            "    def draws(own, shape):",
            "        x = build(**{**given, **own}).rsample(key, shape)",
            f"        return {'(x * w)' if weights else 'x'}.sum(), x",
            *own,
            "    per_draw, each = jax.grad(draws, has_aux=True)(own, ())",
            "    total, summed = jax.grad(draws, has_aux=True)({k: given[k] for k in wrt}, (N,))",
            "    return each, per_draw, summed, total",
            "KEY = jax.device_put(jax.random.PRNGKey(SEED), DEVICE)",
            *(
                [f"W = jax.device_put(jnp.asarray({weights}, dtype={leaves}[0].dtype), DEVICE)"]
                if weights
                else []
            ),
            f"each, per_draw, summed, total = {made}({call})",
            "x, summed_x = np.asarray(each), np.asarray(summed)",
            "per_draw = {k: np.asarray(g) for k, g in per_draw.items()}",
            "total = {k: np.asarray(g) for k, g in total.items()}",
        ]

    def traced_shapes(self, ctx: Mapping[str, Any]) -> list[str] | None:
        """Each request traced alone (``jax.eval_shape``), so one that raises is named and the
        others still give their shapes, as the adapter reads them."""
        if self.draw_in_context is None:
            return None
        every = ", ".join([*ctx["arrays"], "KEY"])
        return [
            "traced = []",
            f"for request in {ctx['requests']}:",
            "    try:",
            f"        (found,) = jax.eval_shape(requested([request]), {every})",
            "        traced.append((tuple(found.shape), found.dtype.name))",
            "    except Exception as exc:  # this request's trace only: the others still trace",
            "        traced.append(f'raised {type(exc).__name__}: {exc}')",
        ]

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

    def kl_gradient(self, ctx: Mapping[str, Any]) -> list[str] | None:
        """Both constructions and the rule in one function of every array, compiled where the
        items compile, differentiated by jax.grad."""
        every = ", ".join(ctx["arrays"])
        argnums = tuple(ctx["arrays"].index(n) for n in ctx["wrt"])
        kl = ctx["divergence"].replace(ctx["slot"], ctx["call"])
        grad = f"jax.grad(objective, argnums={argnums!r})"
        return [
            f"def objective({every}, ct):",
            f"    return jnp.sum({kl} * ct)",
            f"grads = {f'jax.jit({grad})' if self.compiled else grad}({every}, CT_KL)",
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

    def context_call(self, ctx: Mapping[str, Any]) -> list[str] | None:
        """NumPyro's calling contexts as :class:`~conformance.adapters.numpyro.contexts.NumpyroContexts`
        makes them: the mode set for the rest of the script, then the call, the parameters and
        value as a jitted function's arguments."""
        mode, call, traced = ctx["mode"], ctx["call_name"], ctx["traced"]
        names = [*ctx["arrays"], "value"]
        every = ", ".join(names)
        lines = ["import numpyro", "import numpyro.handlers", "import numpyro.infer.util"]
        if mode == "x64":
            lines.append('jax.config.update("jax_enable_x64", True)  # for the whole process')
        elif mode in ("validate-on", "validate-off"):
            lines.append(f"numpyro.enable_validation({mode == 'validate-on'})")
        lines += [
            f"def log_prob({every}):",
            f"    return {ctx['call']}.log_prob(value)",
            f"def observed({every}):",
            "    def model():",
            f"        numpyro.sample('x', {ctx['call']}, obs=value)",
            "    return numpyro.infer.util.log_density(model, (), {}, {})[0]",
            f"def latent({every}):",
            "    def model():",
            f"        numpyro.sample('x', {ctx['call']})",
            "    substituted = numpyro.handlers.substitute(model, data={'x': value})",
            "    return numpyro.infer.util.log_density(substituted, (), {}, {})[0]",
            "grads = {}",
        ]
        argnum = names.index(traced[0]) if traced else 0
        simple = {
            "log_prob": f"lp = log_prob({every})",
            "jit": f"lp = jax.jit(log_prob)({every})",
            "log_density": f"lp = observed({every})",
            "log_density-jit": f"lp = jax.jit(observed)({every})",
            "latent": f"lp = latent({every})",
        }
        if call in simple:
            return [*lines, simple[call]]
        (name,) = traced
        if call == "vmap":
            mapped = ", ".join(n if n != name else "m" for n in names)
            return [
                *lines,
                f"lp = jax.vmap(lambda m: log_prob({mapped}))"
                f"(jnp.stack([jnp.asarray({name})] * {ctx['vmap_size']}))",
            ]
        if call == "grad":
            return [
                *lines,
                f"def objective({every}, ct):",
                f"    lp = log_prob({every})",
                "    return jnp.sum(lp * ct), lp",
                f"g, lp = jax.jit(jax.grad(objective, argnums={argnum}, has_aux=True))({every}, CT)",
                f"grads = {{{name!r}: g}}",
            ]
        density = {"log_density-grad": "observed", "latent-grad": "latent"}.get(call)
        if density is None:
            return None
        return [
            *lines,
            f"lp, g = jax.jit(jax.value_and_grad({density}, argnums={argnum}))({every})",
            f"grads = {{{name!r}: g}}",
        ]
