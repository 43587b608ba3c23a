"""torch's calling contexts: Python numbers beside tensors, global modes, torch.func.

What torch offers on the axis (:mod:`conformance.contexts`), the dtype its promotion rules give,
the kinds it documents it does not take, and the calls themselves, each under its mode,
restored when the call ends (nothing leaks into the next item).
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

_MODES = (
    Mode.DEFAULT,
    Mode.DEFAULT_FLOAT64,
    Mode.VALIDATE_ON,
    Mode.VALIDATE_OFF,
    Mode.NO_GRAD,
    Mode.INFERENCE_MODE,
)
#: torch.func.vmap cannot trace validation's data-dependent control flow (torch.func's
#: documented limit), so vmap runs with validation switched off; autograd has no graph under
#: no_grad or inference_mode (torch.func.grad keeps its own, as its documentation says).
_INCOMPATIBLE = frozenset(
    {(Mode.NO_GRAD, Call.GRAD), (Mode.INFERENCE_MODE, Call.GRAD)}
    | {(mode, Call.VMAP) for mode in _MODES if mode is not Mode.VALIDATE_OFF}
)

TORCH_AXIS = ContextAxis(
    modes=_MODES,
    calls=(Call.LOG_PROB, Call.GRAD, Call.FUNC_GRAD, Call.VMAP),
    param_kinds=(InputKind.NATIVE, InputKind.PYTHON, InputKind.NUMPY),
    value_kinds=(InputKind.NATIVE,),
    incompatible=_INCOMPATIBLE,
    traced_native=True,
)


def _tensor_like(given: ContextInput) -> bool:
    """Whether torch would hold ``given`` as a tensor of its own dtype (a Python number, or
    a NumPy float64 scalar, which is a Python float, takes another's)."""
    if given.kind is InputKind.NATIVE or given.ndim > 0:
        return True
    return given.kind is InputKind.NUMPY and given.dtype != "float64"


class TorchContexts:
    """The calling-context half of torch's adapters (GPyTorch's inherit it)."""

    context_axis: ClassVar[ContextAxis | None] = TORCH_AXIS
    context_rules: ClassVar[tuple[str, ...]] = (
        "Parameters are Python numbers or tensors (the distributions document `float or "
        "Tensor`): `broadcast_all` makes a Python number a tensor of the dtype of the first "
        "tensor parameter, or of `torch.get_default_dtype()` when there is none.",
        "The result's dtype is the widest float dtype among the tensors so made, the tensor "
        "parameters and the value (the default dtype when none is a float): float32 inputs "
        "give float32 under `torch.set_default_dtype(torch.float64)`, and Python-number "
        "parameters then give float64.",
        "Not taken (documented): a NumPy array or a NumPy scalar other than float64 as a "
        "parameter (`broadcast_all` raises ValueError), a nested list, and a value that is "
        "not a tensor (`log_prob(value: Tensor)`; validation raises ValueError). A call with "
        "one passes if it raises, and is held to the answer if it does not.",
        "`torch.func.vmap` runs with validation off (its documented limit on data-dependent "
        "control flow); autograd's gradient is not taken under `no_grad` or `inference_mode`, "
        "`torch.func.grad`'s is (it keeps its own graph).",
    )

    # ----- what the rules give ----------------------------------------------------------------
    def context_dtypes(self, inputs: list[ContextInput], mode: Mode, dtype: str) -> ContextDtypes:
        default = "float64" if mode is Mode.DEFAULT_FLOAT64 else "float32"
        params = [g for g in inputs if not g.is_value]
        tensors = [g.dtype for g in params if _tensor_like(g)]
        first = tensors[0] if tensors else default
        taken = {g.name: g.dtype if g.is_value or _tensor_like(g) else first for g in inputs}
        return ContextDtypes(taken, widest(list(taken.values()), default))

    def context_restriction(self, given: ContextInput) -> str | None:
        if given.is_value and given.kind is not InputKind.NATIVE:
            return "torch's log_prob takes a tensor value (validation raises ValueError)"
        if given.kind is InputKind.PYTHON and given.ndim > 0:
            return "torch takes a parameter as a number or a tensor, not a nested list"
        if given.kind is InputKind.NUMPY and (given.ndim > 0 or given.dtype != "float64"):
            return "torch takes a parameter as a Python number or a tensor, not NumPy's"
        return None

    # ----- the calls --------------------------------------------------------------------------
    @staticmethod
    @contextlib.contextmanager
    def context_mode(mode: Mode) -> Iterator[None]:
        """``mode`` switched on for the call, and back to what it was after (also on error)."""
        import torch

        distribution = torch.distributions.Distribution
        with contextlib.ExitStack() as stack:
            if mode is Mode.DEFAULT_FLOAT64:
                stack.callback(torch.set_default_dtype, torch.get_default_dtype())
                torch.set_default_dtype(torch.float64)
            elif mode in (Mode.VALIDATE_ON, Mode.VALIDATE_OFF):
                stack.callback(distribution.set_default_validate_args, distribution._validate_args)
                distribution.set_default_validate_args(mode is Mode.VALIDATE_ON)
            elif mode is Mode.NO_GRAD:
                stack.enter_context(torch.no_grad())
            elif mode is Mode.INFERENCE_MODE:
                stack.enter_context(torch.inference_mode())
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
        import torch

        call = context.call

        def log_prob(over: Mapping[str, Any]) -> Any:
            """log_prob with ``over`` (traced inputs) in place of their inputs."""
            merged = {**params, **{k: v for k, v in over.items() if k != "value"}}
            dist = self.construct(binding, merged)  # type: ignore[attr-defined]
            return self.log_prob(dist, over.get("value", value))  # type: ignore[attr-defined]

        with self.context_mode(context.mode):
            if call is Call.LOG_PROB:
                return ContextOutcome(log_prob({}), {})
            primals = {k: value if k == "value" else params[k] for k in traced}
            if call is Call.GRAD:
                leaves = {k: v.detach().clone().requires_grad_(True) for k, v in primals.items()}
                lp = log_prob(leaves)
                grads = torch.autograd.grad(
                    (lp * cotangent).sum(),
                    list(leaves.values()),
                    allow_unused=True,
                    materialize_grads=True,
                )
                return ContextOutcome(lp, dict(zip(leaves, grads, strict=True)))
            if call is Call.FUNC_GRAD:

                def objective(over: dict[str, Any]) -> tuple[Any, Any]:
                    lp = log_prob(over)
                    return (lp * cotangent).sum(), lp

                grads, lp = torch.func.grad(objective, has_aux=True)(primals)
                return ContextOutcome(lp, dict(grads))
            if call is Call.VMAP:
                (name,) = traced
                stacked = torch.stack([primals[name]] * VMAP_SIZE)
                return ContextOutcome(torch.func.vmap(lambda m: log_prob({name: m}))(stacked), {})
        raise NotImplementedError(f"torch has no call {call.value!r}")
