"""torch.distributions."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

import numpy as np

from conformance.adapters.base import Adapter, split_mapped
from conformance.adapters.kl import DividesByRules
from conformance.adapters.summaries import ReadsSummaries
from conformance.adapters.torch.contexts import TorchContexts
from conformance.adapters.torch.dialect import TorchDialect
from conformance.operations import DrawMode, Operation
from conformance.reproducers.dialects import Dialect


class TorchAdapter(TorchContexts, ReadsSummaries, DividesByRules, Adapter):
    name = "torch"
    package = "torch"
    module = "torch"
    registry_name = "torch"
    kl_function = "torch.distributions.kl.kl_divergence"
    kl_rules = "torch"
    family_module: ClassVar[str | None] = "torch.distributions"
    distribution_modules: ClassVar[tuple[str, ...]] = ("torch.distributions",)
    distribution_bases: ClassVar[tuple[str, ...]] = ("torch.distributions.Distribution",)
    reported_packages: ClassVar[tuple[str, ...]] = ("torch",)
    imported_modules: ClassVar[tuple[str, ...]] = ("torch",)

    def reproducer(self) -> Dialect | None:
        return TorchDialect()

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

    # torch.compile costs about 2 s per new shape on a CPU (Normal 2.2 s, MVN 1.7 s on the
    # 2-core CI machine): hundreds of cases would take tens of minutes, so it is opt-in.
    operations: ClassVar[Mapping[Operation, str]] = {
        Operation.GRAD: "torch.autograd.grad",
        Operation.GRAD_FUNCTIONAL: "torch.func.grad",
        Operation.VMAP: "torch.func.vmap",
        Operation.JIT: "torch.compile",
        Operation.CONTEXT: "as users call it: input kinds, global modes, torch.func",
        Operation.SAMPLE: "Distribution.sample under torch.manual_seed",
        Operation.SUMMARIES: "the properties mean, variance, stddev, mode; entropy()",
        Operation.CDF: "Distribution.cdf",
        Operation.ICDF: "Distribution.icdf",
        Operation.KL: "torch.distributions.kl_divergence(p, q)",
    }
    draw_modes: ClassVar[Mapping[DrawMode, str]] = {
        DrawMode.SAMPLE: "Distribution.sample",
        DrawMode.RSAMPLE: "Distribution.rsample",
    }
    opt_in: ClassVar[frozenset[Operation]] = frozenset({Operation.JIT})
    #: Every mode's draws are made and held to the support.
    support_draw_modes: ClassVar[frozenset[DrawMode] | None] = None

    def kl_vjp(self, p_binding, p_params, q_binding, q_params, cotangent, wrt):
        """The gradient by torch.autograd.grad of Σ cotangent · kl_divergence(p, q)."""
        import torch

        sides = {"p": dict(p_params), "q": dict(q_params)}
        leaves = {}
        for key in wrt:
            side, name = key.split(":", 1)
            leaves[key] = sides[side][name] = sides[side][name].detach().requires_grad_(True)
        kl = self.kl_divergence(p_binding, sides["p"], q_binding, sides["q"])
        grads = torch.autograd.grad(
            (kl * cotangent).sum(), list(leaves.values()), allow_unused=True
        )
        return dict(zip(leaves, grads, strict=True))

    def log_prob_vjp(self, binding, params, value, cotangent, wrt, method):
        import torch

        def objective(args: dict[str, Any]) -> Any:
            merged = {**params, **{k: v for k, v in args.items() if k != "value"}}
            lp = self.log_prob(self.construct(binding, merged), args.get("value", value))
            return (lp * cotangent).sum()

        primals = {k: value if k == "value" else params[k] for k in wrt}
        if method == "grad":
            leaves = {k: v.detach().clone().requires_grad_(True) for k, v in primals.items()}
            # An input log_prob does not use differentiably (Uniform's value, read only by
            # comparisons) gets None, which torch documents as a zero gradient: materialise it.
            grads = torch.autograd.grad(
                objective(leaves), list(leaves.values()), allow_unused=True, materialize_grads=True
            )
            return dict(zip(leaves, grads, strict=True))
        if method == "grad_functional":
            return dict(torch.func.grad(objective)(primals))
        raise NotImplementedError(method)

    # torch.func.vmap cannot trace data-dependent Python control flow, which torch's argument
    # validation is (``constraint.check(x).all()`` → bool). Transformed calls therefore run
    # with validation off — the documented way to use distributions under torch.func.vmap.
    @staticmethod
    @contextlib.contextmanager
    def no_validation() -> Iterator[None]:
        import torch

        previous = torch.distributions.Distribution._validate_args
        torch.distributions.Distribution.set_default_validate_args(False)
        try:
            yield
        finally:
            torch.distributions.Distribution.set_default_validate_args(previous)

    def vmap_log_prob(self, binding, params, value, in_axes, value_axis):
        import torch

        mapped, fixed, axes = split_mapped(params, in_axes)

        def f(m: dict[str, Any], v: Any) -> Any:
            return self.log_prob(self.construct(binding, {**fixed, **m}), v)

        with self.no_validation():
            return torch.func.vmap(f, in_dims=(axes, value_axis))(mapped, value)

    def vmap_vjp(self, binding, params, value, cotangent, wrt, in_axes, value_axis):
        import torch

        mapped, fixed, axes = split_mapped(params, in_axes)

        def slice_vjp(m: dict[str, Any], v: Any, ct: Any) -> dict[str, Any]:
            merged = {**fixed, **m}
            primals = {k: v if k == "value" else merged[k] for k in wrt}

            def objective(pr: dict[str, Any]) -> Any:
                p = {**merged, **{k: x for k, x in pr.items() if k != "value"}}
                return (self.log_prob(self.construct(binding, p), pr.get("value", v)) * ct).sum()

            return torch.func.grad(objective)(primals)

        with self.no_validation():
            return dict(
                torch.func.vmap(slice_vjp, in_dims=(axes, value_axis, 0))(mapped, value, cotangent)
            )

    def _compiled(self, binding, params):
        import torch

        arrays = {k: v for k, v in params.items() if isinstance(v, torch.Tensor)}
        static = {k: v for k, v in params.items() if k not in arrays}

        def log_prob(p: dict[str, Any], v: Any) -> Any:
            return self.log_prob(self.construct(binding, {**static, **p}), v)

        return torch.compile(log_prob, dynamic=False), arrays

    def jit_log_prob(self, binding, params, value):
        compiled, arrays = self._compiled(binding, params)
        with self.no_validation():
            return compiled(arrays, value)

    def jit_vjp(self, binding, params, value, cotangent, wrt):
        import torch

        compiled, arrays = self._compiled(binding, params)
        leaves = {
            k: (value if k == "value" else arrays[k]).detach().clone().requires_grad_(True)
            for k in wrt
        }
        merged = {**arrays, **{k: v for k, v in leaves.items() if k != "value"}}
        with self.no_validation():
            lp = compiled(merged, leaves.get("value", value))
        grads = torch.autograd.grad(
            (lp * cotangent).sum(), list(leaves.values()), allow_unused=True, materialize_grads=True
        )
        return dict(zip(leaves, grads, strict=True))

    def batch_shape(self, dist: Any) -> tuple[int, ...]:
        return tuple(dist.batch_shape)

    def event_shape(self, dist: Any) -> tuple[int, ...]:
        return tuple(dist.event_shape)

    # ----- draws ---------------------------------------------------------------------------------
    @contextlib.contextmanager
    def seeded(self, seed: int) -> Iterator[None]:
        """torch's global generator seeded for one draw, and restored after it (draws read the
        global generator: without this an item's draws would depend on the items before it)."""
        import torch

        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            yield

    def drawing(self) -> contextlib.AbstractContextManager:
        """The settings draws run under (GPyTorch's numerical path)."""
        return contextlib.nullcontext()

    def has_rsample(self, binding, params):
        return bool(self.construct(binding, params).has_rsample)

    #: Parameters not judged draw by draw, with why: draws that are not one noise's monotone map
    #: (their per-draw derivative differs from the implicit-reparameterisation identity's while
    #: agreeing in expectation), or a parameter that cannot be copied per draw.
    pathwise_exempt_parameters: ClassVar[Mapping[str, Mapping[str, str]]] = {
        "StudentT": {
            "df": "StudentT.rsample divides a normal draw by the root of a chi-square draw "
            "(two noises): its derivative by df depends on both, not on the draw alone",
        },
        "FisherSnedecor": {
            name: "FisherSnedecor.rsample divides two Gamma draws (two noises): its "
            "derivatives by df1 and df2 depend on both, not on the draw alone"
            for name in ("df1", "df2")
        },
        "RelaxedOneHotCategorical": {
            "temperature": "the temperature cannot be copied per draw: ExpRelaxedCategorical "
            "does not broadcast a batched temperature against the logits (known failure "
            "torch-relaxed-one-hot-temperature-batch), so rsample raises where the per-draw "
            "derivatives would be asked for",
        },
    }

    def pathwise_exempt(self, family: str) -> Mapping[str, str]:
        return self.pathwise_exempt_parameters.get(family, {})

    #: Parameters with event dimensions can be copied per draw (``pathwise_draws``' copies).
    pathwise_event_draws: ClassVar[bool] = True

    def pathwise_draws(self, binding, params, names, n, seed, copies=None, weights=None):
        """Reparameterised draws and their derivatives two ways (see
        :class:`conformance.adapters.capabilities.PathwiseDraws`): ``rsample()`` with every
        parameter in ``names`` expanded to (n, *batch) (or to its shape in ``copies``: a
        parameter with event dimensions), one leaf per draw, so autograd gives each draw's own
        derivative; and ``rsample((n,))`` of the case's distribution, with the gradient of the
        draws' sum that a user's loss gets (each draw's coordinates weighted by ``weights``)."""
        import torch

        def weighted(x: Any) -> Any:
            return x if weights is None else x * torch.as_tensor(weights, dtype=x.dtype)

        with self.drawing():
            shapes = dict(copies or {})
            if not shapes:
                # The parameters' broadcast shape, not the distribution's batch_shape: torch's
                # RelaxedBernoulli leaves a batched temperature out of its batch_shape.
                batch = torch.broadcast_shapes(*(torch.as_tensor(v).shape for v in params.values()))
                shapes = {k: (n, *batch) for k in names}
            own = {k: params[k].detach().expand(*shapes[k]).clone().requires_grad_() for k in names}
            with self.seeded(seed):
                each = self.construct(binding, {**params, **own}).rsample()
            per_draw = torch.autograd.grad(
                weighted(each).sum(), list(own.values()), allow_unused=True, materialize_grads=True
            )
            shared = {k: params[k].detach().clone().requires_grad_(True) for k in names}
            with self.seeded(seed):
                summed = self.construct(binding, {**params, **shared}).rsample(torch.Size((n,)))
            total = torch.autograd.grad(
                weighted(summed).sum(),
                list(shared.values()),
                allow_unused=True,
                materialize_grads=True,
            )
        return (
            each.detach(),
            dict(zip(own, (g.detach() for g in per_draw), strict=True)),
            summed.detach(),
            dict(zip(shared, (g.detach() for g in total), strict=True)),
        )

    def draw(self, binding, params, requests, seed):
        import torch

        out = []
        with self.drawing(), self.seeded(seed):
            dist = self.construct(binding, params)
            for mode, shape in requests:
                if mode is DrawMode.RSAMPLE:
                    out.append(dist.rsample(torch.Size(shape)).detach())
                elif mode is DrawMode.SAMPLE:
                    out.append(dist.sample(torch.Size(shape)))
                else:
                    raise NotImplementedError(f"{self.name} has no draw mode {mode}")
        return out
