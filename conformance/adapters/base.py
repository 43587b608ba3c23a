"""The adapter interface: everything the checks need from one framework, and nothing more.

An adapter converts NumPy arrays to the framework's arrays and back, builds a family's
distribution from a :class:`~conformance.registry.Binding`, and evaluates shapes and log_prob.
It knows nothing of tolerances, oracles or reports. Third-party frameworks subclass
:class:`Adapter` and register it under the ``conformance.adapters`` entry point group.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.metadata
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from conformance.contexts import (
    CallingContext,
    ContextAxis,
    ContextDtypes,
    ContextInput,
    ContextOutcome,
    Mode,
)
from conformance.operations import DrawMode, Operation
from conformance.registry import ARG_KINDS, Binding, Bindings, bindings_for, find_binding
from conformance.registry.bounds import bound_name, largest
from conformance.reproducers.dialects import Dialect
from conformance.versions import version_text


def import_dotted(path: str) -> Any:
    """``"pkg.mod.Name"`` → the object, importing ``pkg.mod``."""
    module, _, attr = path.rpartition(".")
    obj = importlib.import_module(module)
    for part in attr.split(":"):
        obj = getattr(obj, part)
    return obj


def resolve_arg(spec: Any, params: Mapping[str, Any]) -> Any:
    """One entry of a binding's ``args`` tree → the object passed to the constructor (a list
    of entries → a list: TransformedDistribution's transforms)."""
    if isinstance(spec, list):
        return [resolve_arg(item, params) for item in spec]
    if not isinstance(spec, dict) or len(ARG_KINDS & set(spec)) != 1:
        raise ValueError(f"binding argument {spec!r} is not {{param|literal|call|max_of: …}}")
    if "param" in spec:
        return params[spec["param"]]
    if "literal" in spec:
        return spec["literal"]
    if "max_of" in spec:
        bound = params.get(bound_name(spec["max_of"]))
        return largest(params[spec["max_of"]]) if bound is None else bound
    nested = spec.get("args", {})
    return import_dotted(spec["call"])(**{k: resolve_arg(v, params) for k, v in nested.items()})


def split_mapped(
    params: Mapping[str, Any], in_axes: Mapping[str, int | None]
) -> tuple[dict[str, Any], dict[str, Any], dict[str, int]]:
    """(parameters vmap maps, parameters it holds fixed, the mapped ones' axes)."""
    mapped = {k: v for k, v in params.items() if in_axes.get(k) is not None}
    fixed = {k: v for k, v in params.items() if in_axes.get(k) is None}
    return mapped, fixed, {k: in_axes[k] for k in mapped}  # type: ignore[misc]


#: ``off``: adapters that keep compiled executables between runs keep none
#: (``conformance run --no-executable-store``; xdist workers inherit the variable).
EXECUTABLE_STORE_ENV = "CONFORMANCE_EXECUTABLE_STORE"


@dataclass(frozen=True)
class Command:
    """A ``conformance`` subcommand a framework's adapter brings (NumPyro's cache pruning for
    CI caches): its parser is filled by ``arguments``, ``run`` gets the parsed namespace and
    returns the exit status."""

    name: str
    help: str
    description: str
    arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


class Adapter(ABC):
    """One framework (or one way of using it, e.g. GPyTorch with a RootLinearOperator).

    Everything framework-specific is said here, by each adapter: its names, the distributions
    whose versions a run reports, what a run's controller does when the workers are done, the
    subcommands and fresh-cache settings it brings. Nothing outside ``conformance/adapters``
    (and the framework-specific ``conformance/mutants``) names a framework."""

    #: The adapter's name as it appears in item ids and results (``torch``, ``gpytorch.root``).
    name: ClassVar[str]
    #: The installed distribution whose version is reported (``torch``, ``numpyro``).
    package: ClassVar[str]
    #: Module to import to find out whether the framework is installed.
    module: ClassVar[str]
    #: family → bindings, given in code (a third-party adapter); None: read from the registry
    #: (:mod:`conformance.registry`) under :attr:`registry_name`, when first asked for.
    bindings: ClassVar[Bindings | None] = None
    #: The registry's key for this framework (``torch``); subclasses of an adapter inherit it.
    registry_name: ClassVar[str | None] = None
    #: Module whose attribute named after a family builds it (``torch.distributions``): the
    #: registry's default binding for every family whose file does not say otherwise.
    family_module: ClassVar[str | None] = None
    #: Modules whose public distribution classes the framework ships (``conformance coverage``
    #: lists each), and the classes there that are bases rather than distributions: a class
    #: counts when its ``log_prob`` is defined below every base (GPyTorch's ``NormalPrior``
    #: runs ``Prior.log_prob`` over torch's Normal and does not count).
    distribution_modules: ClassVar[tuple[str, ...]] = ()
    distribution_bases: ClassVar[tuple[str, ...]] = ()
    #: Installed distributions whose versions a run reports (results.json's ``frameworks``,
    #: the report header, ``conformance --version``), the framework's own and what it runs on.
    reported_packages: ClassVar[tuple[str, ...]] = ()
    #: Modules a user's program imports to use the framework (the benchmark times their import
    #: in a fresh interpreter).
    imported_modules: ClassVar[tuple[str, ...]] = ()
    #: What the framework raises ValueError for by default: ``all`` (invalid parameters and
    #: values outside the support), ``params`` (invalid parameters only) or ``none``. A binding
    #: may override it. Checks hold the framework to this declaration.
    validation: ClassVar[str] = "all"

    # ----- the run around the items (class-level: no instance, no framework import) --------
    @classmethod
    def after_run(cls, started: float) -> None:
        """On the controller, once xdist workers ran items: e.g. share what each worker
        cached with the others, so the next run starts warm everywhere. ``started``: the run's
        start (``time.time()``). Nothing, for a framework that keeps nothing between runs."""
        return None

    @classmethod
    def commands(cls) -> tuple[Command, ...]:
        """The ``conformance`` subcommands this framework brings."""
        return ()

    @classmethod
    def fresh_cache_environment(cls, directory: str) -> dict[str, str]:
        """Variables that give a run an empty compilation cache under ``directory``
        (``conformance bench --cold``); empty where the framework keeps none between runs."""
        return {}

    # ----- availability -------------------------------------------------------------------
    def unavailable(self) -> str | None:
        """Why this framework cannot run here (not installed, broken import), or None."""
        try:
            importlib.import_module(self.module)
        except Exception as exc:  # an import that crashes is as unavailable as a missing one
            return f"{self.package} is not importable: {type(exc).__name__}: {exc}"
        return None

    def version(self) -> str:
        return version_text(self.package)

    def device_unavailable(self, device: str) -> str | None:
        """Why ``device`` cannot be used by this framework here, or None."""
        return None if device == "cpu" else f"{self.name} does not support device {device!r}"

    def family_bindings(self) -> Bindings:
        """family → bindings: the class's own, else the registry's (read once, on first use)."""
        if self.bindings is not None:
            return self.bindings
        if self.registry_name is None:
            return {}
        return bindings_for(self.registry_name, self.family_module)

    def binding(self, family: str, parametrization: str) -> Binding | str:
        found = find_binding(self.family_bindings(), family, parametrization)
        return found if isinstance(found, Binding) else f"{self.name} {found}"

    def notes(self, binding: Binding, params: Mapping[str, np.ndarray]) -> dict:
        """Facts about how the framework evaluates this binding, recorded with each result
        (e.g. GPyTorch's numerical path). Empty for most frameworks."""
        return {}

    def binding_validation(self, binding: Binding) -> str:
        return self.validation if binding.validation is None else binding.validation

    def unsupported_inputs(self, binding: Binding, params: Mapping[str, np.ndarray]) -> str | None:
        """A reason this binding cannot take these particular inputs (e.g. non-diagonal), or None."""
        return None

    # ----- evaluation -----------------------------------------------------------------------
    def evaluates_compiled(self) -> bool:
        """Whether construction and log_prob run compiled (reproducers then compile them too)."""
        return False

    def eager(self) -> Adapter:
        """This framework evaluating op by op: the adapter itself unless it compiles by default
        (NumPyro). Used by the ``eager`` check and for inputs a framework validates eagerly."""
        return self

    @contextlib.contextmanager
    def precision(self, dtype: str) -> Iterator[None]:
        """Context in which arrays of ``dtype`` behave (JAX needs x64 switched on for float64)."""
        yield

    def release_caches(self) -> None:
        """Drop the compiled code the framework keeps between calls (see :mod:`conformance.run.worker.memory`).

        Called between items when a worker outgrows its memory budget; most frameworks keep
        nothing worth dropping.
        """
        return None

    @abstractmethod
    def asarray(self, array: np.ndarray, device: str) -> Any:
        """A framework array holding exactly ``array`` (its dtype kept) on ``device``."""

    @abstractmethod
    def to_numpy(self, array: Any) -> np.ndarray:
        """A NumPy copy of a framework array (on the host)."""

    def construct(self, binding: Binding, params: Mapping[str, Any]) -> Any:
        """Build the distribution; ``params`` are framework arrays keyed by oracle names."""
        ctor = import_dotted(binding.constructor)
        if binding.args is None:
            return ctor(**{binding.keyword(k): v for k, v in params.items()})
        return ctor(**{k: resolve_arg(v, params) for k, v in binding.args.items()})

    @abstractmethod
    def batch_shape(self, dist: Any) -> tuple[int, ...]: ...

    @abstractmethod
    def event_shape(self, dist: Any) -> tuple[int, ...]: ...

    def log_prob(self, dist: Any, value: Any) -> Any:
        return dist.log_prob(value)

    # ----- reproducers -------------------------------------------------------------------------
    def reproducer(self) -> Dialect | None:
        """How reproducer scripts write exactly what this adapter does (one object, see
        :mod:`conformance.reproducers.dialects`); None: its failures carry no reproducer."""
        return None

    # ----- operations ----------------------------------------------------------------------------
    #: Each operation this framework offers → how it does it (shown in results: ``"jax.vmap"``).
    operations: ClassVar[Mapping[Operation, str]] = {}
    #: Offered operations that run only when a run opts in (too slow to run by default).
    opt_in: ClassVar[frozenset[Operation]] = frozenset()

    # ----- differentiation ---------------------------------------------------------------------

    def log_prob_vjp(
        self,
        binding: Binding,
        params: Mapping[str, Any],
        value: Any,
        cotangent: Any,
        wrt: tuple[str, ...],
        method: str,
    ) -> dict[str, Any]:
        """∂(Σ cotangent · log_prob)/∂x for each x in ``wrt`` (parameter names or ``"value"``).

        Everything not in ``wrt`` (integer inputs above all) is held constant. A gradient the
        framework does not produce (disconnected) is returned as None.
        """
        raise NotImplementedError(f"{self.name} does not differentiate ({method})")

    # ----- transforms ------------------------------------------------------------------------
    def vmap_log_prob(
        self,
        binding: Binding,
        params: Mapping[str, Any],
        value: Any,
        in_axes: Mapping[str, int | None],
        value_axis: int | None,
    ) -> Any:
        """log_prob under the framework's vmap; ``in_axes`` maps each parameter to its axis."""
        raise NotImplementedError(f"{self.name} has no vmap")

    def vmap_vjp(
        self,
        binding: Binding,
        params: Mapping[str, Any],
        value: Any,
        cotangent: Any,
        wrt: tuple[str, ...],
        in_axes: Mapping[str, int | None],
        value_axis: int | None,
    ) -> dict[str, Any]:
        """vmap of the per-slice VJP (cotangent mapped on axis 0): gradients stacked on axis 0."""
        raise NotImplementedError(f"{self.name} has no vmap")

    def jit_log_prob(self, binding: Binding, params: Mapping[str, Any], value: Any) -> Any:
        """Construction and log_prob compiled together (jax.jit, torch.compile)."""
        raise NotImplementedError(f"{self.name} has no jit")

    def jit_vjp(
        self,
        binding: Binding,
        params: Mapping[str, Any],
        value: Any,
        cotangent: Any,
        wrt: tuple[str, ...],
    ) -> dict[str, Any]:
        raise NotImplementedError(f"{self.name} has no jit")

    def effect_site(
        self,
        kind: str,
        binding: Binding,
        params: Mapping[str, Any],
        value: Any,
        plate: tuple[int, int] | None,
        steps: int | None,
    ) -> tuple[tuple[int, ...], Any]:
        """A sample site under effect handlers: (its distribution's batch shape, its log_prob).

        ``plate`` is (size, dim) or None; ``steps`` the scan length or None.
        """
        raise NotImplementedError(f"{self.name} has no effect handlers")

    # ----- draws ---------------------------------------------------------------------------------
    #: The ways this framework is asked for draws (:class:`DrawMode` → how, shown in results);
    #: ``RSAMPLE`` is used only where a distribution says it has one (:meth:`has_rsample`).
    draw_modes: ClassVar[Mapping[DrawMode, str]] = {}
    #: Where the draws' shapes are traced (:meth:`draw_shapes`), the modes whose draws are
    #: also made, to hold them to the support: those that run sampler code of their own.
    #: ``None``: every mode. Each mode drawn is one more sampler compiled into the item's program.
    support_draw_modes: ClassVar[frozenset[DrawMode] | None] = None

    def has_rsample(self, binding: Binding, params: Mapping[str, Any]) -> bool:
        """Whether the distribution draws reparameterised (differentiable) samples."""
        return False

    def draw(
        self,
        binding: Binding,
        params: Mapping[str, Any],
        requests: Sequence[tuple[DrawMode, tuple[int, ...]]],
        seed: int,
    ) -> list[Any]:
        """Draws for each (mode, sample_shape) request, all from one seed (the same seed gives
        the same draws). Offered where ``operations`` has :attr:`Operation.SAMPLE`."""
        raise NotImplementedError(f"{self.name} does not draw")

    def draw_shapes(
        self,
        binding: Binding,
        params: Mapping[str, Any],
        requests: Sequence[tuple[DrawMode, tuple[int, ...]]],
    ) -> list[tuple[tuple[int, ...], str]] | None:
        """The shape and dtype of each request's draws, known without drawing where the
        framework fixes them before anything runs (JAX: at trace time; a compiled draw has
        exactly its traced shape and dtype), or None: the checks then read them from draws."""
        return None

    # ----- calling contexts (Operation.CONTEXT; see conformance.contexts) ------------------------
    #: The modes, calls and input kinds this framework offers (None: no calling-context items).
    context_axis: ClassVar[ContextAxis | None] = None
    #: What docs/conventions.md says of this framework on the axis: its promotion rules and
    #: the kinds it documents it does not take, one sentence each.
    context_rules: ClassVar[tuple[str, ...]] = ()

    def context_dtypes(self, inputs: list[ContextInput], mode: Mode, dtype: str) -> ContextDtypes:
        """The dtype each input takes and the result's, by the framework's own promotion rules
        (stated in :attr:`context_rules`), without running it: what a context item expects."""
        raise NotImplementedError(f"{self.name} has no calling contexts")

    def context_restriction(self, given: ContextInput) -> str | None:
        """Why the framework documents that it does not take ``given`` (an item calling with it
        then passes when the call raises, and must still answer right when it does not), or
        None."""
        return None

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
        """Call the distribution the way ``context`` says, under its mode (restored after):
        ``params`` and ``value`` are already of their kinds; ``traced`` names the inputs a
        gradient or vmap call takes; ``cotangent`` weighs a gradient of log_prob; ``static``
        names the parameters that are Python constants whatever the context."""
        raise NotImplementedError(f"{self.name} has no calling contexts")
