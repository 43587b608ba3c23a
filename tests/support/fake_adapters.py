"""Adapters with one deliberate fault each, built on the real torch adapter.

They exist so the suite's own tests can prove that each check flags what it must: an exception,
a NaN, a wrong shape, a wrong value — reported as failing items, never as harness crashes.
"""

from __future__ import annotations

from typing import Any

from conformance.adapters.torch.adapter import TorchAdapter


def _numpyro_base():
    from conformance.adapters.numpyro.adapter import NumpyroAdapter

    return NumpyroAdapter


class RaisingAdapter(TorchAdapter):
    name = "fake.raises"

    def log_prob(self, dist: Any, value: Any) -> Any:
        raise RuntimeError("boom: simulated framework failure <b>")


class NanAdapter(TorchAdapter):
    name = "fake.nan"

    def log_prob(self, dist: Any, value: Any) -> Any:
        return dist.log_prob(value) * float("nan")


class WarningAdapter(TorchAdapter):
    """log_prob right, with a UserWarning on the way (as some frameworks warn on valid input)."""

    name = "fake.warns"

    def log_prob(self, dist: Any, value: Any) -> Any:
        import warnings

        warnings.warn("simulated framework warning", UserWarning, stacklevel=2)
        return dist.log_prob(value)


class ShiftedAdapter(TorchAdapter):
    """log_prob off by 1e-3: shapes right, values wrong."""

    name = "fake.shifted"

    def log_prob(self, dist: Any, value: Any) -> Any:
        return dist.log_prob(value) + 1e-3


class WrongBatchAdapter(TorchAdapter):
    """Reports a batch shape with a spurious leading 1."""

    name = "fake.wrong_batch"

    def batch_shape(self, dist: Any) -> tuple[int, ...]:
        return (1, *tuple(dist.batch_shape))


class Float64Adapter(TorchAdapter):
    """Returns log_prob in float64 whatever the input dtype (a dtype-promotion bug)."""

    name = "fake.float64"

    def log_prob(self, dist: Any, value: Any) -> Any:
        return dist.log_prob(value).double()


class MissingAdapter(TorchAdapter):
    name = "fake.missing"
    package = "no-such-framework"
    module = "no_such_framework_for_conformance_tests"


class HalvedGradAdapter(TorchAdapter):
    """log_prob exactly right, every gradient halved."""

    name = "fake.halved_grad"

    def log_prob_vjp(self, binding, params, value, cotangent, wrt, method):
        grads = super().log_prob_vjp(binding, params, value, cotangent, wrt, method)
        return {k: None if g is None else g * 0.5 for k, g in grads.items()}


class CancellingGradAdapter(TorchAdapter):
    """Values right; per-element ∂log_prob_b/∂loc off by ±0.1 with errors summing to zero.

    ∂(Σ_b log_prob_b)/∂loc is therefore right — only a non-uniform cotangent exposes it.
    """

    name = "fake.cancelling_grad"

    def log_prob(self, dist, value):
        import torch

        lp = dist.log_prob(value)
        loc = dist.loc.expand(lp.shape)
        signs = torch.ones(lp.numel(), dtype=lp.dtype)
        signs[1::2] = -1.0
        if lp.numel() % 2:
            signs[-1] = 0.0
        return lp + 0.1 * signs.reshape(lp.shape) * (loc - loc.detach())


class Float0Adapter(TorchAdapter):
    """Raises like JAX did on integer inputs before numpyro#1890 (a float0 tangent)."""

    name = "fake.float0"

    def log_prob_vjp(self, binding, params, value, cotangent, wrt, method):
        raise TypeError(
            "Called multiply with a float0 array. float0s do not support any operations by design"
        )


class InPlaceVmapAdapter(TorchAdapter):
    """Writes the result into an unbatched buffer in place, like theseus#650: fine eagerly,
    a RuntimeError under torch.func.vmap."""

    name = "fake.inplace"

    def log_prob(self, dist, value):
        import torch

        lp = dist.log_prob(value)
        buffer = torch.zeros(lp.shape[-1:] if lp.ndim else (), dtype=lp.dtype)
        buffer[...] = (
            lp[(0,) * (lp.ndim - 1)] if lp.ndim else lp
        )  # unbatched target, batched source
        return lp + (buffer - buffer.detach()) * 0


class JitOnlyAdapter(_numpyro_base()):  # type: ignore[misc]
    """Right eagerly and under vmap/grad; off by 1e-2 only when traced by jax.jit."""

    name = "fake.jit_only"

    def log_prob(self, dist, value):
        lp = dist.log_prob(value)
        if type(value).__name__ == "DynamicJaxprTracer":
            return lp + 1e-2
        return lp


class EagerOnlyAdapter(_numpyro_base()):  # type: ignore[misc]
    """Right when traced (jax.jit, grad, vmap); off by 1e-2 only on concrete values, op by op.

    A compiled item calls this hook twice: on the deferred distribution (its compiled call, where
    the traced inner call is right) and inside the compiled function; only a real distribution
    evaluated on a concrete value is wrong."""

    name = "fake.eager_only"

    def log_prob(self, dist, value):
        import jax

        from conformance.adapters.numpyro.compiled import Deferred

        lp = dist.log_prob(value)
        if not isinstance(dist, Deferred) and not isinstance(value, jax.core.Tracer):
            return lp + 1e-2
        return lp


class WrongPromotionAdapter(_numpyro_base()):  # type: ignore[misc]
    """NumPyro whose batch promotion under scan reads one parameter only (numpyro#1971)."""

    name = "fake.wrong_promotion"

    def effect_site(self, kind, binding, params, value, plate, steps):
        from numpyro.distributions import Distribution, batch_util

        original = batch_util.promote_batch_shape.dispatch(Distribution)

        def one_parameter_only(d):
            import copy

            import jax.numpy as jnp

            names = list(d.arg_constraints)
            last = None
            for attr_name in names:
                try:
                    event_dim = d.arg_constraints[attr_name].event_dim
                    attr = getattr(d, attr_name)
                except Exception:
                    continue
                last = jnp.shape(attr)[: max(0, jnp.ndim(attr) - event_dim)]
            new = copy.copy(d)
            new._batch_shape = last if last is not None else d.batch_shape
            return new

        batch_util.promote_batch_shape.register(Distribution)(one_parameter_only)
        try:
            return super().effect_site(kind, binding, params, value, plate, steps)
        finally:
            batch_util.promote_batch_shape.register(Distribution)(original)


class RankTwoAdapter(TorchAdapter):
    """Fails only when log_prob has two or more batch dims: a shape-dependent bug."""

    name = "fake.rank_two"

    def log_prob(self, dist, value):
        lp = dist.log_prob(value)
        if lp.ndim >= 2:
            raise RuntimeError(f"shape {tuple(lp.shape)} is invalid for input of size {lp.numel()}")
        return lp


# ----- faults that would take a run down: see conformance.run.worker.robustness --------------------------
#: Each fault fires only where the value holds this number, so one run mixes faulty items with
#: healthy ones and can show that every other result is kept.
FAULT_VALUE = 1234.5


class _SelectiveFault(TorchAdapter):
    """Healthy torch, except ``log_prob`` at a value that holds :data:`FAULT_VALUE`."""

    def log_prob(self, dist: Any, value: Any) -> Any:
        if bool((value == FAULT_VALUE).any()):
            self.fault()
        return super().log_prob(dist, value)

    def fault(self) -> None:
        raise NotImplementedError


class AbortAdapter(_SelectiveFault):
    """Aborts the interpreter (SIGABRT), as a failed C++ assertion in a framework does."""

    name = "fake.abort"

    def fault(self) -> None:
        import os

        os.abort()


class HangAdapter(_SelectiveFault):
    """Sleeps forever in log_prob (interruptible: the soft timeout ends it). Touches the file
    ``CONFORMANCE_TEST_HANG_FLAG`` names first, so a test knows a run is in the hang."""

    name = "fake.hang"

    def fault(self) -> None:
        import os
        import time

        flag = os.environ.get("CONFORMANCE_TEST_HANG_FLAG")
        if flag:
            with open(flag, "w") as fh:
                fh.write(str(os.getpid()))
        while True:
            time.sleep(3600)


class StuckAdapter(_SelectiveFault):
    """Hangs where no Python signal handler can run (SIGALRM blocked, like a C deadlock)."""

    name = "fake.stuck"

    def fault(self) -> None:
        import signal
        import time

        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
        while True:
            time.sleep(3600)


class LeakAdapter(_SelectiveFault):
    """Allocates (and touches) memory until an allocation fails."""

    name = "fake.leak"

    def fault(self) -> None:
        hoard = []
        while True:
            hoard.append(bytearray(64 << 20))


#: Markup, quotes, backslashes and control characters: what a framework message may hold.
HOSTILE_MESSAGE = (
    '</script><img src=x onerror=alert(1)> """ closes? \\x \\N \\U0001 C:\\Users\\new\\'
    "\nsecond line <!-- & \u2028 \x07 \x00 '''"
)


class HostileMessageAdapter(TorchAdapter):
    """Raises with a message built to break out of HTML, a docstring or a comment."""

    name = "fake.hostile"

    def log_prob(self, dist: Any, value: Any) -> Any:
        raise RuntimeError(HOSTILE_MESSAGE)


class AbortOnceAdapter(_SelectiveFault):
    """Aborts the first run of the faulty item only (the file ``CONFORMANCE_TEST_CRASH_FLAG``
    names records that it happened), as old XLA's nondeterministic compile segfaults did."""

    name = "fake.abortonce"

    def fault(self) -> None:
        import os

        flag = os.environ["CONFORMANCE_TEST_CRASH_FLAG"]
        if not os.path.exists(flag):
            with open(flag, "w") as fh:
                fh.write(str(os.getpid()))
            os.abort()
