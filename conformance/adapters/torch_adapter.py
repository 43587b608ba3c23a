"""torch.distributions."""

from __future__ import annotations

from typing import Any

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

    def batch_shape(self, dist: Any) -> tuple[int, ...]:
        return tuple(dist.batch_shape)

    def event_shape(self, dist: Any) -> tuple[int, ...]:
        return tuple(dist.event_shape)
