"""numpyro.distributions on JAX.

float64 runs switch JAX's x64 mode on only inside :meth:`NumpyroAdapter.precision`, so it never
leaks into float32 runs in the same process (and a global ``JAX_ENABLE_X64`` cannot leak either).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, ClassVar

import numpy as np

from conformance.adapters.base import Adapter
from conformance.registry import bindings_for


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
    bindings = bindings_for("numpyro")
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
        with x64(dtype == "float64"):
            yield

    def _device(self, device: str) -> Any:
        import jax

        return jax.devices("gpu" if device == "cuda" else "cpu")[0]

    def asarray(self, array: np.ndarray, device: str) -> Any:
        import jax

        return jax.device_put(np.array(array), self._device(device))

    def to_numpy(self, array: Any) -> np.ndarray:
        return np.asarray(array)

    gradient_methods: ClassVar[dict[str, str]] = {"grad": "jax.grad", "grad_functional": "jax.vjp"}

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

    def batch_shape(self, dist: Any) -> tuple[int, ...]:
        return tuple(dist.batch_shape)

    def event_shape(self, dist: Any) -> tuple[int, ...]:
        return tuple(dist.event_shape)
