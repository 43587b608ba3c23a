"""How a reproducer writes torch code: tensors on the run's device, autograd or torch.func."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from conformance.reproducers.dialects import Dialect


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

    def kl_gradient(self, ctx: Mapping[str, Any]) -> list[str] | None:
        wrt = ", ".join(ctx["wrt"])
        kl = ctx["divergence"].replace(ctx["slot"], "dist")
        return [
            *(f"{name}.requires_grad_(True)" for name in ctx["wrt"]),
            f"dist = {ctx['call']}",
            f"kl = {kl}",
            f"grads = torch.autograd.grad((kl * CT_KL).sum(), [{wrt}], allow_unused=True)",
        ]

    def draw(self, ctx: Mapping[str, Any]) -> list[str] | None:
        """Every request from one distribution, torch's generator seeded with ``SEED`` as the
        adapter seeds it (forked, so nothing else moves it)."""
        into, requests = ctx["into"], ctx["requests"]
        return [
            "with torch.random.fork_rng(devices=[]):",
            "    torch.manual_seed(SEED)",
            f"    dist = {ctx['call']}",
            f"    {into} = [",
            "        dist.rsample(torch.Size(shape)).detach()",
            "        if mode == DrawMode.RSAMPLE",
            "        else dist.sample(torch.Size(shape))",
            f"        for mode, shape in {requests}",
            "    ]",
            f"{into} = [{self.to_numpy('x')} for x in {into}]",
        ]

    def pathwise(self, ctx: Mapping[str, Any]) -> list[str] | None:
        """As the adapter's ``pathwise_draws``: parameters expanded to (N, *batch) (a vector
        draw's to their shapes in ``ctx['copies']``, its coordinates weighted by
        ``ctx['weights']``), one leaf per draw, and the case's own parameters for
        ``rsample((N,))``, each draw seeded."""
        every = ", ".join(ctx["arrays"])
        names = ctx["names"]
        copies, weights = ctx.get("copies"), ctx.get("weights")
        given = "{" + ", ".join(f"{a!r}: {a}" for a in ctx["arrays"]) + "}"
        shape = f"*{copies}[k]" if copies else "N, *batch"
        batch = (
            []
            if copies
            else [
                "batch = torch.broadcast_shapes("
                "*(torch.as_tensor(v).shape for v in given.values()))"
            ]
        )

        def loss(x: str, into: str, leaves: str) -> list[str]:
            """``into`` = the gradient of Σ x (each coordinate weighted) by ``leaves``."""
            if not weights:
                total = f"{x}.sum()"
                pre: list[str] = []
            else:
                total = "loss"
                pre = [f"loss = ({x} * torch.as_tensor({weights}, dtype={x}.dtype)).sum()"]
            return [
                *pre,
                f"{into} = torch.autograd.grad(",
                f"    {total}, list({leaves}.values()), allow_unused=True, materialize_grads=True",
                ")",
            ]

        return [
            f"def build({every}):",
            f"    return {ctx['call']}",
            f"given = {given}",
            *batch,
            "own = {",
            f"    k: given[k].detach().expand({shape}).clone().requires_grad_()",
            f"    for k in {names}",
            "    if k in given",
            "}",
            "with torch.random.fork_rng(devices=[]):",
            "    torch.manual_seed(SEED)",
            "    each = build(**{**given, **own}).rsample()",
            *loss("each", "grads", "own"),
            "shared = {k: given[k].detach().clone().requires_grad_(True) for k in own}",
            "with torch.random.fork_rng(devices=[]):",
            "    torch.manual_seed(SEED)",
            "    summed = build(**{**given, **shared}).rsample(torch.Size((N,)))",
            *loss("summed", "totals", "shared"),
            f"x, summed_x = {self.to_numpy('each')}, {self.to_numpy('summed')}",
            f"per_draw = {{k: {self.to_numpy('g')} for k, g in zip(own, grads, strict=True)}}",
            f"total = {{k: {self.to_numpy('g')} for k, g in zip(shared, totals, strict=True)}}",
        ]

    def context_call(self, ctx: Mapping[str, Any]) -> list[str] | None:
        """torch's calling contexts as :class:`~conformance.adapters.torch.contexts.TorchContexts`
        makes them: the mode set for the rest of the script, then the call."""
        mode, call, traced = ctx["mode"], ctx["call_name"], ctx["traced"]
        constructor = ctx["call"]
        lines: list[str] = []
        if mode == "default-float64":
            lines.append("torch.set_default_dtype(torch.float64)")
        elif mode in ("validate-on", "validate-off"):
            flag = mode == "validate-on"
            lines.append(f"torch.distributions.Distribution.set_default_validate_args({flag})")
        inner: list[str]
        args = ", ".join(traced)
        if call == "log_prob":
            inner = [f"lp = {constructor}.log_prob(value)", "grads = {}"]
        elif call == "grad":
            inner = [
                *(f"{n} = {n}.detach().clone().requires_grad_(True)" for n in traced),
                f"lp = {constructor}.log_prob(value)",
                f"grads = dict(zip({list(traced)!r}, torch.autograd.grad((lp * CT).sum(), "
                f"[{args}], allow_unused=True, materialize_grads=True)))",
            ]
        elif call == "func-grad":
            inner = [
                f"def objective({args}):",
                f"    lp = {constructor}.log_prob(value)",
                "    return (lp * CT).sum(), lp",
                f"g, lp = torch.func.grad(objective, has_aux=True)({args})",
                f"grads = {{{traced[0]!r}: g}}",
            ]
        elif call == "vmap":
            (name,) = traced
            inner = [
                f"def mapped({name}):",
                f"    return {constructor}.log_prob(value)",
                f"lp = torch.func.vmap(mapped)(torch.stack([{name}] * {ctx['vmap_size']}))",
                "grads = {}",
            ]
        else:
            return None
        manager = {"no_grad": "torch.no_grad()", "inference_mode": "torch.inference_mode()"}
        if mode in manager:
            return [*lines, f"with {manager[mode]}:", *("    " + ln for ln in inner)]
        return [*lines, *inner]
