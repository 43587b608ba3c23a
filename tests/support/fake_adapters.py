"""Adapters with one deliberate fault each, built on the real torch adapter.

They exist so the suite's own tests can prove that each check flags what it must: an exception,
a NaN, a wrong shape, a wrong value — reported as failing items, never as harness crashes.
"""

from __future__ import annotations

from typing import Any

from conformance.adapters.torch_adapter import TorchAdapter


class RaisingAdapter(TorchAdapter):
    name = "fake.raises"

    def log_prob(self, dist: Any, value: Any) -> Any:
        raise RuntimeError("boom: simulated framework failure <b>")


class NanAdapter(TorchAdapter):
    name = "fake.nan"

    def log_prob(self, dist: Any, value: Any) -> Any:
        return dist.log_prob(value) * float("nan")


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
