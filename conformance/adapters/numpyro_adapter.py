"""numpyro.distributions on JAX.

float64 runs switch JAX's x64 mode on only inside :meth:`NumpyroAdapter.precision`, so it never
leaks into float32 runs in the same process (and a global ``JAX_ENABLE_X64`` cannot leak either).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

import numpy as np

from conformance.adapters import jax_cache
from conformance.adapters.base import Adapter, split_mapped
from conformance.operations import Operation


def x64(enabled: bool) -> contextlib.AbstractContextManager:
    """JAX's x64 switch as a context manager, on old (0.4.x) and new releases alike."""
    import jax

    if hasattr(jax, "enable_x64"):
        return jax.enable_x64(enabled)
    from jax import experimental

    return experimental.enable_x64() if enabled else experimental.disable_x64()


class NumpyroAdapter(Adapter):
    name = "numpyro"
    package = "numpyro"
    module = "numpyro.distributions"
    # Parameters are validated eagerly at construction (when concrete); values outside the
    # support only warn unless numpyro.enable_validation() is on.
    validation = "params"
    registry_name = "numpyro"
    family_module = "numpyro.distributions"
    reproducer_dialect = "jax"

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
        jax_cache.configure()
        with x64(dtype == "float64"):
            yield

    def release_caches(self) -> None:
        """Eager JAX keeps an XLA executable per primitive and shape for good: drop them all."""
        jax = sys.modules.get("jax")
        if jax is not None:
            jax.clear_caches()

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
        Operation.JIT: "jax.jit",
        Operation.PLATE: "numpyro.plate",
        Operation.SCAN: "numpyro.contrib.control_flow.scan",
        Operation.PLATE_IN_SCAN: "numpyro.plate inside numpyro.contrib.control_flow.scan",
    }

    def log_prob_vjp(self, binding, params, value, cotangent, wrt, method):
        import jax
        import jax.numpy as jnp

        def log_prob(args: dict[str, Any]) -> Any:
            merged = {**params, **{k: v for k, v in args.items() if k != "value"}}
            return self.log_prob(self.construct(binding, merged), args.get("value", value))

        primals = {k: value if k == "value" else params[k] for k in wrt}
        if method == "grad":
            return dict(jax.grad(lambda a: jnp.sum(log_prob(a) * cotangent))(primals))
        if method == "grad_functional":
            out, pullback = jax.vjp(log_prob, primals)
            return dict(pullback(jnp.asarray(cotangent, dtype=out.dtype))[0])
        raise NotImplementedError(method)

    def _slice_vjp(self, binding, fixed, wrt):
        import jax
        import jax.numpy as jnp

        def slice_vjp(m: dict[str, Any], v: Any, ct: Any) -> dict[str, Any]:
            merged = {**fixed, **m}
            primals = {k: v if k == "value" else merged[k] for k in wrt}

            def objective(pr: dict[str, Any]) -> Any:
                p = {**merged, **{k: x for k, x in pr.items() if k != "value"}}
                return jnp.sum(self.log_prob(self.construct(binding, p), pr.get("value", v)) * ct)

            return jax.grad(objective)(primals)

        return slice_vjp

    def vmap_log_prob(self, binding, params, value, in_axes, value_axis):
        import jax

        mapped, fixed, axes = split_mapped(params, in_axes)

        def f(m: dict[str, Any], v: Any) -> Any:
            return self.log_prob(self.construct(binding, {**fixed, **m}), v)

        return jax.vmap(f, in_axes=(axes, value_axis))(mapped, value)

    def vmap_vjp(self, binding, params, value, cotangent, wrt, in_axes, value_axis):
        import jax

        mapped, fixed, axes = split_mapped(params, in_axes)
        fn = self._slice_vjp(binding, fixed, wrt)
        return dict(jax.vmap(fn, in_axes=(axes, value_axis, 0))(mapped, value, cotangent))

    def _arrays_and_static(self, params):
        import jax

        arrays = {k: v for k, v in params.items() if isinstance(v, jax.Array)}
        static = {k: v for k, v in params.items() if k not in arrays}
        return arrays, static

    def jit_log_prob(self, binding, params, value):
        import jax

        arrays, static = self._arrays_and_static(params)

        @jax.jit
        def f(p: dict[str, Any], v: Any) -> Any:
            return self.log_prob(self.construct(binding, {**static, **p}), v)

        return f(arrays, value)

    def jit_vjp(self, binding, params, value, cotangent, wrt):
        import jax

        arrays, static = self._arrays_and_static(params)
        fn = self._slice_vjp(binding, static, wrt)
        return dict(jax.jit(fn)(arrays, value, cotangent))

    def effect_site(self, kind, binding, params, value, plate, steps):
        import jax.numpy as jnp
        import numpyro
        from numpyro import handlers
        from numpyro.contrib.control_flow import scan

        arrays, static = self._arrays_and_static(params)

        def sample(p: dict[str, Any], obs: Any) -> None:
            dist = self.construct(binding, {**static, **p})
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
                def body(carry: dict[str, Any], x: dict[str, Any]) -> tuple[dict[str, Any], None]:
                    sample({k: carry[k] + x[k] for k in arrays}, x["value"])
                    return carry, None

                init = {k: jnp.zeros((), arrays[k].dtype) for k in arrays}
                xs = {k: jnp.broadcast_to(v, (steps, *v.shape)) for k, v in arrays.items()}
                xs["value"] = value
                scan(body, init, xs)

        site = handlers.trace(handlers.seed(model, 0)).get_trace()["x"]
        return tuple(site["fn"].batch_shape), site["fn"].log_prob(site["value"])

    def batch_shape(self, dist: Any) -> tuple[int, ...]:
        return tuple(dist.batch_shape)

    def event_shape(self, dist: Any) -> tuple[int, ...]:
        return tuple(dist.event_shape)
