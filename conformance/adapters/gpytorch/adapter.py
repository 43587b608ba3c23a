"""GPyTorch's multivariate normals with a dense tensor or a LinearOperator covariance.

Each covariance representation is its own adapter — ``gpytorch`` (dense tensor),
``gpytorch.dense``, ``gpytorch.root``, ``gpytorch.diag``, ``gpytorch.blockdiag``,
``gpytorch.kronecker`` — because GPyTorch and linear_operator take a different code path for
each; the registry's binding names the operator. ``gpytorch.iterative`` runs GPyTorch's other
numerical path (CG + stochastic Lanczos quadrature, forced with ``max_cholesky_size(0)``),
held to a tolerance declared in the registry. Every record notes the path that ran.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator, Mapping
from typing import Any, ClassVar

import numpy as np

from conformance.adapters.base import import_dotted
from conformance.adapters.gpytorch.covariance import covariance
from conformance.adapters.gpytorch.dialect import GpytorchDialect
from conformance.adapters.structure import block_size, kronecker_factors
from conformance.adapters.torch.adapter import TorchAdapter
from conformance.adapters.torch.contexts import TORCH_AXIS
from conformance.contexts import Call, ContextAxis, InputKind
from conformance.operations import Operation
from conformance.registry import Binding
from conformance.reproducers.dialects import Dialect


class GpytorchAdapter(TorchAdapter):
    name = "gpytorch"
    package = "gpytorch"
    module = "gpytorch"
    validation = "none"  # gpytorch's MultivariateNormal defaults to validate_args=False
    # GPyTorch is differentiated with torch.autograd (what BoTorch's fit_gpytorch_mll does);
    # it does not claim torch.func support, so no functional gradient item is made for it.
    operations: ClassVar[Mapping[Operation, str]] = {
        op: how
        for op, how in TorchAdapter.operations.items()
        if op is not Operation.GRAD_FUNCTIONAL
    }
    registry_name = "gpytorch"
    kl_rules = "gpytorch"
    family_module = None  # only the families the registry binds (not torch's convention)
    distribution_modules = ("gpytorch.distributions", "gpytorch.priors")
    distribution_bases = ("torch.distributions.Distribution", "gpytorch.priors.Prior")
    reported_packages = ("gpytorch", "linear_operator")
    imported_modules = ("gpytorch", "linear_operator")
    operator: ClassVar[str] = "tensor"
    # Parameters with event dimensions are copied per draw as torch's are (the covariance
    # copy wrapped in this adapter's operator) ...
    pathwise_event_draws: ClassVar[bool] = True
    # ... but a MultivariateNormal draws through its covariance's root decomposition, not the
    # loc + chol(Σ)·ε map the oracle declares (reference.Family.pathwise): its derivatives are
    # judged in expectation, by the draws' moments (rsample_grad).
    pathwise_own_map: ClassVar[str] = (
        "GPyTorch draws a MultivariateNormal as loc + R·ε with R its covariance's root "
        "decomposition (a LinearOperator's: Cholesky with added jitter, Lanczos or the "
        "operator's own), not loc + chol(Σ)·ε: its pathwise derivatives follow that map, which "
        "the oracle does not declare, so they are judged in expectation where the oracle knows "
        "the draws' moments"
    )
    # Autograd only (no torch.func claim, see above); the value a tensor, as torch's.
    context_axis: ClassVar[ContextAxis | None] = dataclasses.replace(
        TORCH_AXIS,
        calls=(Call.LOG_PROB, Call.GRAD),
        param_kinds=(InputKind.NATIVE, InputKind.PYTHON),
    )

    # ----- structure --------------------------------------------------------------------------
    def unsupported_inputs(self, binding: Binding, params: Mapping[str, np.ndarray]) -> str | None:
        found = covariance(binding, params)
        if found is None:
            return None
        name, mat = found
        mat = np.asarray(mat)
        if self.operator == "DiagLinearOperator" and np.any(
            mat - np.eye(mat.shape[-1]) * np.diagonal(mat, axis1=-2, axis2=-1)[..., None]
        ):
            return f"{self.name} needs a diagonal {name}; this case's is not diagonal"
        if self.operator == "BlockDiagLinearOperator" and block_size(mat) is None:
            return f"{self.name} needs a block-diagonal {name}; this case's is not"
        if (
            self.operator == "KroneckerProductLinearOperator"
            and kronecker_factors(mat, 1e-12) is None
        ):
            return f"{self.name} needs a {name} that is a Kronecker product; this case's is not"
        return None

    def operator_call(
        self, matrix: Callable[[], np.ndarray]
    ) -> tuple[Callable[..., Any], tuple] | None:
        """The function of :mod:`~conformance.adapters.gpytorch.operators` that builds this
        adapter's operator from the covariance tensor, and its arguments after the tensor; None
        for a plain tensor. ``matrix()`` gives the covariance's values, read only where the
        structure needs them (a tensor under vmap has none to read)."""
        from conformance.adapters.gpytorch import operators as ops

        op = self.operator
        if op == "tensor":
            return None
        if op == "DiagLinearOperator":
            return ops.diagonal_operator, ()
        if op == "BlockDiagLinearOperator":
            return ops.block_diagonal_operator, (block_size(matrix()),)
        if op == "KroneckerProductLinearOperator":
            factors = kronecker_factors(matrix())
            if factors is None:  # unsupported_inputs keeps such covariances from this adapter
                raise ValueError("the covariance is no Kronecker product")
            return ops.kronecker_operator, (factors[1].shape[-1],)
        return ops.named_operator, (op,)

    def wrap_covariance(self, array: Any) -> Any:
        """The covariance as this adapter's operator, built from the framework's own tensor."""
        call = self.operator_call(lambda: array.detach().cpu().numpy())
        return array if call is None else call[0](array, *call[1])

    def construct(self, binding: Binding, params: Mapping[str, Any]) -> Any:
        found = covariance(binding, params)
        wrapped = dict(params)
        if found is not None:
            wrapped[found[0]] = self.wrap_covariance(found[1])
        return super().construct(binding, wrapped)

    # ----- numerical path ----------------------------------------------------------------------
    #: GPyTorch settings this adapter evaluates under, as (context manager, its arguments);
    #: empty: the library's defaults. Reproducers render the same list.
    PATH_SETTINGS: ClassVar[tuple[tuple[str, tuple, dict], ...]] = ()
    #: Seed of torch's RNG while a path that draws random probes runs (None: no draws).
    #: linear_operator draws its stochastic-trace probes from the global RNG on every call, so
    #: without a seed a result depends on whatever ran before it in the process.
    PROBE_SEED: ClassVar[int | None] = None

    @contextlib.contextmanager
    def path_settings(self) -> Iterator[None]:
        import torch

        with contextlib.ExitStack() as stack:
            for path, args, kwargs in self.PATH_SETTINGS:
                stack.enter_context(import_dotted(path)(*args, **kwargs))
            if self.PROBE_SEED is not None:
                stack.enter_context(torch.random.fork_rng(devices=[]))
                torch.manual_seed(self.PROBE_SEED)
            yield

    def log_prob(self, dist: Any, value: Any) -> Any:
        with self.path_settings():
            return dist.log_prob(value)

    def drawing(self) -> contextlib.AbstractContextManager:
        return self.path_settings()

    def notes(self, binding: Binding, params: Mapping[str, np.ndarray]) -> dict:
        """Which numerical path GPyTorch takes for this covariance, and the settings deciding it."""
        import gpytorch

        found = covariance(binding, params)
        n = int(np.shape(found[1])[-1]) if found is not None else 0
        with self.path_settings():
            fast = bool(gpytorch.settings.fast_computations.log_prob.on())
            limit = int(gpytorch.settings.max_cholesky_size.value())
            probes = int(gpytorch.settings.num_trace_samples.value())
        iterative = fast and n > limit
        return {
            "covariance": self.operator,
            "numerical_path": "iterative (CG + stochastic Lanczos quadrature)"
            if iterative
            else "cholesky",
            "fast_computations.log_prob": fast,
            "max_cholesky_size": limit,
            "num_trace_samples": probes,
            "size": n,
        }

    # ----- reproducers ---------------------------------------------------------------------------
    def reproducer(self) -> Dialect | None:
        return GpytorchDialect(self)


class GpytorchDenseAdapter(GpytorchAdapter):
    name = "gpytorch.dense"
    registry_name = "gpytorch.dense"
    operator = "DenseLinearOperator"


class GpytorchRootAdapter(GpytorchAdapter):
    name = "gpytorch.root"
    registry_name = "gpytorch.root"
    operator = "RootLinearOperator"


class GpytorchDiagAdapter(GpytorchAdapter):
    name = "gpytorch.diag"
    registry_name = "gpytorch.diag"
    operator = "DiagLinearOperator"


class GpytorchBlockDiagAdapter(GpytorchAdapter):
    name = "gpytorch.blockdiag"
    registry_name = "gpytorch.blockdiag"
    operator = "BlockDiagLinearOperator"


class GpytorchKroneckerAdapter(GpytorchAdapter):
    """Factors recovered from the framework's own covariance tensor (A = Σ[::b, ::b] / Σ[0, 0],
    B = Σ[:b, :b]); kron(A, B) then differs from Σ by a rounding or two, within tolerance."""

    name = "gpytorch.kronecker"
    registry_name = "gpytorch.kronecker"
    operator = "KroneckerProductLinearOperator"


class GpytorchIterativeAdapter(GpytorchAdapter):
    """GPyTorch's iterative path on a DenseLinearOperator, forced even for small matrices."""

    name = "gpytorch.iterative"
    registry_name = "gpytorch.iterative"
    operator = "DenseLinearOperator"
    operations: ClassVar[Mapping[Operation, str]] = {
        Operation.GRAD: GpytorchAdapter.operations[Operation.GRAD],
        Operation.SAMPLE: GpytorchAdapter.operations[Operation.SAMPLE],
        Operation.CONTEXT: GpytorchAdapter.operations[Operation.CONTEXT],
    }
    opt_in: ClassVar[frozenset[Operation]] = frozenset()
    PATH_SETTINGS = (
        ("gpytorch.settings.max_cholesky_size", (0,), {}),
        ("gpytorch.settings.fast_computations", (), {"log_prob": True}),
        ("gpytorch.settings.deterministic_probes", (True,), {}),
    )
    PROBE_SEED = 0
