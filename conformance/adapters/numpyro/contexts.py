"""NumPyro's calling contexts: NumPy and Python inputs, x64 for the whole process, validation,
and the model API (``numpyro.infer.util.log_density`` of a one-site model).

What NumPyro offers on the axis (:mod:`conformance.contexts`), the dtype JAX's promotion rules
give, and the calls themselves, each under its mode, restored when the call ends. The calls
trace with plain ``jax.jit`` / ``jax.grad`` / ``jax.vmap`` (not the executable store: a
context's inputs are NumPy arrays and Python numbers as often as JAX arrays), the parameters
and value as the function's arguments, as a user's model passes them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

from conformance.contexts import (
    VMAP_SIZE,
    Call,
    CallingContext,
    ContextAxis,
    ContextDtypes,
    ContextInput,
    ContextOutcome,
    InputKind,
    Mode,
    widest,
)
from conformance.registry import Binding
from conformance.registry.bounds import static_bounds

_KINDS = (InputKind.NATIVE, InputKind.NUMPY, InputKind.PYTHON)

NUMPYRO_AXIS = ContextAxis(
    modes=(Mode.DEFAULT, Mode.X64, Mode.VALIDATE_ON, Mode.VALIDATE_OFF),
    calls=(
        Call.LOG_PROB,
        Call.GRAD,
        Call.JIT,
        Call.VMAP,
        Call.LOG_DENSITY,
        Call.LOG_DENSITY_JIT,
        Call.LOG_DENSITY_GRAD,
        Call.LATENT,
        Call.LATENT_GRAD,
    ),
    param_kinds=_KINDS,
    value_kinds=_KINDS,
    # Each call traces and compiles afresh (a context's Python numbers are no store key), and
    # eager calls run op by op: one row per family and parametrisation of a file keeps the
    # cost within the suite's budget (two rows cost --quick 24 s of its 60), every mode, call
    # and kind still met over the families.
    rows=1,
)


def _strong(given: ContextInput) -> bool:
    """Whether JAX holds ``given`` at its own dtype (a Python number is weakly typed: it takes
    the dtype of the arrays it meets, or the default float when it meets none)."""
    return given.kind is not InputKind.PYTHON


class NumpyroContexts:
    """The calling-context half of NumPyro's adapter."""

    context_axis: ClassVar[ContextAxis | None] = NUMPYRO_AXIS
    context_rules: ClassVar[tuple[str, ...]] = (
        "Parameters and values are JAX arrays, NumPy arrays or Python numbers (`jnp.asarray` "
        "takes each). With x64 off every float is float32; with it on, a NumPy or JAX array "
        "keeps its dtype and a Python number is weakly typed: it takes the dtype of the arrays "
        "it meets, float64 when it meets none.",
        "The result's dtype is the widest float dtype among the strongly typed inputs, or the "
        "default float (float32, or float64 with x64 on) when none is: float32 inputs give "
        "float32 while x64 is on for the whole process (`jax.config.update('jax_enable_x64', "
        "True)`), and an integer value does not widen it.",
        "Not taken (documented, JAX's sharp bits): a nested list as an array; a call with one "
        "passes if it raises, and is held to the answer if it does not.",
        "`log_density` is `numpyro.infer.util.log_density` of a one-site model "
        "(`numpyro.sample('x', dist, obs=value)`), or of the site latent with its value given "
        "by `handlers.substitute`: the sum of log_prob. Its gradient is taken under `jax.jit`.",
    )

    # ----- what the rules give ----------------------------------------------------------------
    def context_dtypes(self, inputs: list[ContextInput], mode: Mode, dtype: str) -> ContextDtypes:
        default = "float64" if mode is Mode.X64 or dtype == "float64" else "float32"
        if default == "float32":
            taken = {g.name: "float32" if g.floating else g.dtype for g in inputs}
            return ContextDtypes(taken, "float32")
        strong = [g.dtype for g in inputs if _strong(g) and g.floating]
        weak_as = widest(strong, default)
        taken = {
            g.name: (g.dtype if _strong(g) else weak_as) if g.floating else g.dtype for g in inputs
        }
        return ContextDtypes(taken, widest(strong, default))

    def context_restriction(self, given: ContextInput) -> str | None:
        if given.kind is InputKind.PYTHON and given.ndim > 0:
            return "JAX takes no list as an array (its documented sharp bit: jnp.asarray first)"
        return None

    # ----- the calls --------------------------------------------------------------------------
    @staticmethod
    @contextlib.contextmanager
    def context_mode(mode: Mode) -> Iterator[None]:
        """``mode`` switched on for the call, and back to what it was after (also on error)."""
        import jax
        import numpyro
        from numpyro.distributions import Distribution

        with contextlib.ExitStack() as stack:
            if mode is Mode.X64:
                # The item's own precision is a context (thread-local), which a global update
                # would not override: x64 as the process would have it, for the call.
                if hasattr(jax, "enable_x64"):
                    stack.enter_context(jax.enable_x64(True))
                else:
                    from jax import experimental

                    stack.enter_context(experimental.enable_x64())
            elif mode in (Mode.VALIDATE_ON, Mode.VALIDATE_OFF):
                stack.callback(numpyro.enable_validation, Distribution._validate_args)
                numpyro.enable_validation(mode is Mode.VALIDATE_ON)
            yield

    def context_call(
        self,
        binding: Binding,
        params: Mapping[str, Any],
        value: Any,
        context: CallingContext,
        traced: tuple[str, ...],
        cotangent: Any,
        static: frozenset[str] = frozenset(),
    ) -> ContextOutcome:
        import jax
        import jax.numpy as jnp
        from numpyro import handlers, sample
        from numpyro.infer.util import log_density

        call = context.call
        fixed = {k: v for k, v in params.items() if k in static}
        fixed.update(static_bounds(binding, params))  # read before any trace
        args = {k: v for k, v in params.items() if k not in static}

        def dist_of(p: Mapping[str, Any]) -> Any:
            return self._distribution(binding, {**fixed, **p})  # type: ignore[attr-defined]

        def lp_of(p: Mapping[str, Any], v: Any) -> Any:
            return self.log_prob(dist_of(p), v)  # type: ignore[attr-defined]

        def observed(p: Mapping[str, Any], v: Any) -> Any:
            def model() -> None:
                sample("x", dist_of(p), obs=v)

            return log_density(model, (), {}, {})[0]

        def latent(p: Mapping[str, Any], v: Any) -> Any:
            def model() -> None:
                sample("x", dist_of(p))

            return log_density(handlers.substitute(model, data={"x": v}), (), {}, {})[0]

        with self.context_mode(context.mode):
            if call is Call.LOG_PROB:
                return ContextOutcome(lp_of(args, value), {})
            if call is Call.JIT:
                return ContextOutcome(jax.jit(lp_of)(args, value), {})
            if call is Call.LOG_DENSITY:
                return ContextOutcome(observed(args, value), {})
            if call is Call.LOG_DENSITY_JIT:
                return ContextOutcome(jax.jit(observed)(args, value), {})
            if call is Call.LATENT:
                return ContextOutcome(latent(args, value), {})
            if call is Call.VMAP:
                (name,) = traced
                if name == "value":
                    stacked = jnp.stack([jnp.asarray(value)] * VMAP_SIZE)
                    return ContextOutcome(jax.vmap(lambda v: lp_of(args, v))(stacked), {})
                rest = {k: v for k, v in args.items() if k != name}
                stacked = jnp.stack([jnp.asarray(args[name])] * VMAP_SIZE)
                mapped = jax.vmap(lambda m: lp_of({**rest, name: m}, value))(stacked)
                return ContextOutcome(mapped, {})
            (name,) = traced
            if call is Call.GRAD:

                def objective(x: Any, p: dict[str, Any], v: Any, ct: Any) -> Any:
                    lp = lp_of({**p, name: x}, v) if name != "value" else lp_of(p, x)
                    return jnp.sum(lp * ct), lp

                primal = value if name == "value" else args[name]
                grad, lp = jax.jit(jax.grad(objective, has_aux=True))(
                    primal, args, value, cotangent
                )
                return ContextOutcome(lp, {name: grad})
            if call is Call.LOG_DENSITY_GRAD:

                def density(x: Any, p: dict[str, Any], v: Any) -> Any:
                    return observed({**p, name: x}, v)

                lp, grad = jax.jit(jax.value_and_grad(density))(args[name], args, value)
                return ContextOutcome(lp, {name: grad})
            if call is Call.LATENT_GRAD:
                lp, grad = jax.jit(jax.value_and_grad(lambda v, p: latent(p, v)))(value, args)
                return ContextOutcome(lp, {"value": grad})
        raise NotImplementedError(f"numpyro has no call {call.value!r}")
