"""torch.distributions."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from conformance.adapters.base import Adapter
from conformance.registry import bindings_for


class TorchAdapter(Adapter):
    name = "torch"
    package = "torch"
    module = "torch"
    bindings = bindings_for("torch")
    reproducer_dialect = "torch"

    def device_unavailable(self, device: str) -> str | None:
        if device == "cpu":
            return None
        import torch

        if device == "cuda" and not torch.cuda.is_available():
            return "torch sees no CUDA device (torch.cuda.is_available() is False)"
        return None if device == "cuda" else f"unknown device {device!r}"

    def asarray(self, array: np.ndarray, device: str) -> Any:
        import torch

        return torch.as_tensor(np.array(array), device=device)

    def to_numpy(self, array: Any) -> np.ndarray:
        return array.detach().cpu().numpy()

    gradient_methods: ClassVar[dict[str, str]] = {
        "grad": "torch.autograd.grad",
        "grad_functional": "torch.func.grad",
    }

    def log_prob_vjp(self, binding, params, value, cotangent, wrt, method):
        import torch

        def objective(args: dict[str, Any]) -> Any:
            merged = {**params, **{k: v for k, v in args.items() if k != "value"}}
            lp = self.log_prob(self.construct(binding, merged), args.get("value", value))
            return (lp * cotangent).sum()

        primals = {k: value if k == "value" else params[k] for k in wrt}
        if method == "grad":
            leaves = {k: v.detach().clone().requires_grad_(True) for k, v in primals.items()}
            grads = torch.autograd.grad(objective(leaves), list(leaves.values()), allow_unused=True)
            return dict(zip(leaves, grads, strict=True))
        if method == "grad_functional":
            return dict(torch.func.grad(objective)(primals))
        raise NotImplementedError(method)

    def batch_shape(self, dist: Any) -> tuple[int, ...]:
        return tuple(dist.batch_shape)

    def event_shape(self, dist: Any) -> tuple[int, ...]:
        return tuple(dist.event_shape)
