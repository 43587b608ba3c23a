"""How a reproducer writes torch code: tensors on the run's device, autograd or torch.func."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from conformance.records.dialects import Dialect


class TorchDialect(Dialect):
    imports = ("import torch",)
    roots = frozenset({"torch"})

    def setup(self, dtype: str, device: str) -> list[str]:
        return [f'DEVICE = "{device}"']

    def array(self, expr: str) -> str:
        return f"torch.as_tensor({expr}, device=DEVICE)"

    def to_numpy(self, expr: str) -> str:
        return f"{expr}.detach().cpu().numpy()"

    def gradient(self, ctx: Mapping[str, Any]) -> list[str]:
        wrt = ctx["wrt"]
        args = ", ".join(wrt)
        if ctx["method"] == "grad_functional":
            return [
                f"def objective({args}):",
                f"    dist = {ctx['call']}",
                "    return (dist.log_prob(value) * CT).sum()",
                f"grads = torch.func.grad(objective, argnums={tuple(range(len(wrt)))!r})({args})",
            ]
        return [
            *(f"{name}.requires_grad_(True)" for name in wrt),
            f"dist = {ctx['call']}",
            "lp = dist.log_prob(value)",
            f"grads = torch.autograd.grad((lp * CT).sum(), [{args}], allow_unused=True)",
        ]
