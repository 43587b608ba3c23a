"""The adapter's core: what every framework gives the checks, and nothing more.

An adapter converts NumPy arrays to the framework's arrays and back, builds a family's
distribution from a :class:`~conformance.registry.Binding`, and evaluates shapes and log_prob.
It knows nothing of tolerances, oracles or reports. What it can do beyond that (gradients,
vmap, draws, …) it says by implementing the protocols of :mod:`conformance.adapters.capabilities`;
the suite's own hooks (:mod:`conformance.adapters.hooks`) have defaults. Third-party frameworks
import all of it from :mod:`conformance.adapters.api` and register their adapter under the
``conformance.adapters`` entry point group.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.metadata
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

import numpy as np

from conformance.adapters.hooks import RunnerHooks
from conformance.contexts import ContextAxis
from conformance.operations import Operation
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


@functools.cache
def _absent(constructor: str) -> bool:
    """Whether the installed release lacks ``constructor``: its module imports and has no such
    attribute (a class added in a later release, NumPyro's Levy or CirculantNormal before
    0.17). A module that does not import is the adapter's ``unavailable``, not this."""
    try:
        importlib.import_module(constructor.rpartition(".")[0])
    except ImportError:
        return False
    try:
        import_dotted(constructor)
    except AttributeError:
        return True
    return False


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


class Adapter(RunnerHooks, ABC):
    """One framework (or one way of using it, e.g. GPyTorch with a RootLinearOperator).

    Everything framework-specific is said here, by each adapter: its names, bindings, arrays,
    construction, shapes and log_prob (the core, below), the operations it offers (each
    capability's protocol it implements, and ``operations``), and through the runner's hooks
    (:class:`~conformance.adapters.hooks.RunnerHooks`) the distributions whose versions a run
    reports, what a run's controller does when the workers are done, the subcommands and
    fresh-cache settings it brings. Nothing outside ``conformance/adapters`` (and the
    framework-specific ``conformance/mutants``) names a framework."""

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
    #: What the framework raises ValueError for by default: ``all`` (invalid parameters and
    #: values outside the support), ``params`` (invalid parameters only) or ``none``. A binding
    #: may override it. Checks hold the framework to this declaration.
    validation: ClassVar[str] = "all"

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
        if not isinstance(found, Binding):
            return f"{self.name} {found}"
        if _absent(found.constructor):
            return f"{self.name} {self.version()} has no {found.constructor}"
        return found

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
    #: Each operation this framework offers → how it does it (shown in results: ``"jax.vmap"``);
    #: each needs its protocol implemented (:data:`~conformance.adapters.capabilities.CAPABILITIES`).
    operations: ClassVar[Mapping[Operation, str]] = {}
    #: Offered operations that run only when a run opts in (too slow to run by default).
    opt_in: ClassVar[frozenset[Operation]] = frozenset()

    # ----- calling contexts (Operation.CONTEXT; see conformance.contexts) ------------------------
    #: The modes, calls and input kinds this framework offers (None: no calling-context items;
    #: an adapter that offers some implements
    #: :class:`~conformance.adapters.capabilities.CallingContexts`).
    context_axis: ClassVar[ContextAxis | None] = None
