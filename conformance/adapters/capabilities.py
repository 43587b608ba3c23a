"""What an adapter can do beyond the core, one protocol per operation: an adapter says what it
can do by what it implements.

:class:`~conformance.adapters.base.Adapter` is what every framework gives (names, bindings,
arrays in and out, construction, shapes, log_prob). Each optional operation is a protocol here;
an adapter offers an operation when it implements the operation's protocol *and* its
``operations`` table names it, saying how (shown in results: ``"jax.vmap"``). The table may
name fewer operations than the protocols allow (GPyTorch differentiates with torch's
``log_prob_vjp`` but claims no ``torch.func``; its iterative path inherits torch's vmap and
claims none), never more: :func:`disagreements` finds those.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from conformance.contexts import (
    CallingContext,
    ContextDtypes,
    ContextInput,
    ContextOutcome,
    Mode,
)
from conformance.operations import DrawMode, Operation
from conformance.registry import Binding

if TYPE_CHECKING:
    from conformance.adapters.base import Adapter


@runtime_checkable
class Differentiates(Protocol):
    """Gradients of log_prob (:attr:`Operation.GRAD`, :attr:`Operation.GRAD_FUNCTIONAL`)."""

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

        ``method`` is how the ``operations`` table says the operation runs. Everything not in
        ``wrt`` (integer inputs above all) is held constant. A gradient the framework does not
        produce (disconnected) is returned as None.
        """
        ...


@runtime_checkable
class Vmaps(Protocol):
    """log_prob and its gradient under the framework's vmap (:attr:`Operation.VMAP`)."""

    def vmap_log_prob(
        self,
        binding: Binding,
        params: Mapping[str, Any],
        value: Any,
        in_axes: Mapping[str, int | None],
        value_axis: int | None,
    ) -> Any:
        """log_prob under the framework's vmap; ``in_axes`` maps each parameter to its axis."""
        ...

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
        ...


@runtime_checkable
class Compiles(Protocol):
    """Construction and log_prob compiled together, where the framework's default is eager
    (:attr:`Operation.JIT`: torch.compile)."""

    def jit_log_prob(self, binding: Binding, params: Mapping[str, Any], value: Any) -> Any:
        """log_prob of the distribution built from ``params``, compiled with its construction."""
        ...

    def jit_vjp(
        self,
        binding: Binding,
        params: Mapping[str, Any],
        value: Any,
        cotangent: Any,
        wrt: tuple[str, ...],
    ) -> dict[str, Any]:
        """The VJP of :meth:`jit_log_prob`, as :meth:`Differentiates.log_prob_vjp` gives it."""
        ...


@runtime_checkable
class EffectHandlers(Protocol):
    """A sample site under the framework's effect handlers (:attr:`Operation.PLATE`,
    :attr:`Operation.SCAN`, :attr:`Operation.PLATE_IN_SCAN`)."""

    def effect_site(
        self,
        kind: str,
        binding: Binding,
        params: Mapping[str, Any],
        value: Any,
        plate: tuple[int, int] | None,
        steps: int | None,
    ) -> tuple[tuple[int, ...], Any]:
        """(the site's distribution's batch shape, its log_prob); ``plate`` is (size, dim) or
        None, ``steps`` the scan length or None."""
        ...


@runtime_checkable
class Draws(Protocol):
    """Samples from a seed (:attr:`Operation.SAMPLE`)."""

    #: The ways this framework is asked for draws (:class:`DrawMode` → how, shown in results);
    #: ``RSAMPLE`` is used only where a distribution says it has one (:meth:`has_rsample`).
    draw_modes: Mapping[DrawMode, str]
    #: Where the draws' shapes are traced (:class:`TracedDrawShapes`), the modes whose draws
    #: are also made, to hold them to the support: those that run sampler code of their own.
    #: ``None``: every mode. Each mode drawn is one more sampler compiled into the item's program.
    support_draw_modes: frozenset[DrawMode] | None

    def has_rsample(self, binding: Binding, params: Mapping[str, Any]) -> bool:
        """Whether the distribution draws reparameterised (differentiable) samples."""
        ...

    def draw(
        self,
        binding: Binding,
        params: Mapping[str, Any],
        requests: Sequence[tuple[DrawMode, tuple[int, ...]]],
        seed: int,
    ) -> list[Any]:
        """Draws for each (mode, sample_shape) request, all from one seed (the same seed gives
        the same draws)."""
        ...


@runtime_checkable
class TracedDrawShapes(Protocol):
    """Draws' shapes and dtypes known without drawing, where the framework fixes them before
    anything runs (JAX: at trace time; a compiled draw has exactly its traced shape and dtype).
    Without it the checks read them from draws."""

    def draw_shapes(
        self,
        binding: Binding,
        params: Mapping[str, Any],
        requests: Sequence[tuple[DrawMode, tuple[int, ...]]],
    ) -> list[tuple[tuple[int, ...], str]] | None:
        """The shape and dtype of each request's draws, or None: read them from draws."""
        ...


@runtime_checkable
class PathwiseDraws(Protocol):
    """What the check asks of an adapter that offers pathwise derivatives of its draws."""

    def pathwise_draws(
        self, binding: Any, params: Mapping[str, Any], names: list[str], n: int, seed: int
    ) -> tuple[Any, dict[str, Any], Any, dict[str, Any]]:
        """(draws from parameters expanded to (n, *batch), each draw's derivative by each
        parameter in ``names``; draws of ``rsample((n,))``, the gradient of their sum).

        An adapter with ``pathwise_event_draws`` also takes ``copies``: each parameter's shape
        per draw, (n, *batch, *its event), for parameters with event dimensions; and
        ``weights`` (the event's shape): the derivatives are then of Σ w·x over each draw's
        coordinates, not of their plain sum."""
        ...

    def pathwise_exempt(self, family: str) -> Mapping[str, str]:
        """The parameters of ``family`` whose draws are not one noise's monotone map, each
        with the reason (not judged draw by draw)."""
        ...


@runtime_checkable
class CallingContexts(Protocol):
    """Calls as users make them: input kinds, global modes, model APIs (:attr:`Operation.CONTEXT`,
    see :mod:`conformance.contexts`). ``Adapter.context_axis`` says which."""

    #: What docs/conventions.md says of this framework on the axis: its promotion rules and
    #: the kinds it documents it does not take, one sentence each.
    context_rules: tuple[str, ...]

    def context_dtypes(self, inputs: list[ContextInput], mode: Mode, dtype: str) -> ContextDtypes:
        """The dtype each input takes and the result's, by the framework's own promotion rules
        (stated in :attr:`context_rules`), without running it: what a context item expects."""
        ...

    def context_restriction(self, given: ContextInput) -> str | None:
        """Why the framework documents that it does not take ``given`` (an item calling with it
        then passes when the call raises, and must still answer right when it does not), or
        None."""
        ...

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
        ...


@runtime_checkable
class Summarizes(Protocol):
    """What a distribution says without a value: its mean, variance, stddev, mode and entropy
    (:attr:`Operation.SUMMARIES`)."""

    def implements(self, binding: Binding, method: str) -> bool:
        """Whether the binding's class defines ``method`` itself (a method or property of its
        own or of a parent below the framework's base class, whose own only raises)."""
        ...

    def summaries(
        self, binding: Binding, params: Mapping[str, Any], names: Sequence[str]
    ) -> dict[str, Any]:
        """Each summary in ``names`` of the distribution built from ``params`` (``entropy()``
        called, the others read as properties), or the exception reading it raised: one that
        raises leaves the others their values."""
        ...


@runtime_checkable
class Cdfs(Protocol):
    """``dist.cdf(value)`` (:attr:`Operation.CDF`)."""

    def implements(self, binding: Binding, method: str) -> bool:
        """Whether the binding's class defines ``method`` itself (see :class:`Summarizes`)."""
        ...

    def cdf(self, binding: Binding, params: Mapping[str, Any], value: Any) -> Any:
        """P(X ≤ value) of the distribution built from ``params``, log_prob-shaped."""
        ...


@runtime_checkable
class Icdfs(Protocol):
    """``dist.icdf(q)`` (:attr:`Operation.ICDF`)."""

    def implements(self, binding: Binding, method: str) -> bool:
        """Whether the binding's class defines ``method`` itself (see :class:`Summarizes`)."""
        ...

    def icdf(self, binding: Binding, params: Mapping[str, Any], q: Any) -> Any:
        """The least x with P(X ≤ x) ≥ q of the distribution built from ``params``."""
        ...


@runtime_checkable
class DividesKL(Protocol):
    """``kl_divergence(p, q)`` by the framework's own rules (:attr:`Operation.KL`)."""

    #: The dotted path of the framework's ``kl_divergence`` (what a reproducer calls).
    kl_function: str

    def kl_pairs(self) -> frozenset[tuple[str, str]]:
        """The (p family, q family) pairs, as the oracle names families, whose KL the
        framework computes by a rule it registers (``conformance/registry/kl_pairs.yaml``);
        q ``"*"``: every q the oracle pairs with that p (:func:`~conformance.registry.kl_pairs.serves`)."""
        ...

    def kl_divergence(
        self,
        p_binding: Binding,
        p_params: Mapping[str, Any],
        q_binding: Binding,
        q_params: Mapping[str, Any],
    ) -> Any:
        """KL(p‖q) of the distributions built from each side's parameters, shaped
        ``broadcast(p.batch_shape, q.batch_shape)``."""
        ...

    def kl_vjp(
        self,
        p_binding: Binding,
        p_params: Mapping[str, Any],
        q_binding: Binding,
        q_params: Mapping[str, Any],
        cotangent: Any,
        wrt: Sequence[str],
    ) -> dict[str, Any]:
        """∂(Σ cotangent · KL(p‖q))/∂x for each x of ``wrt`` (``p:<name>`` or ``q:<name>``),
        reverse mode as users differentiate; None for a gradient the framework does not
        produce."""
        ...


#: The protocol each operation needs; None: the core has it (``Adapter.eager()``: every
#: adapter evaluates op by op, and the table says where that differs from its default).
CAPABILITIES: Mapping[Operation, type | None] = {
    Operation.GRAD: Differentiates,
    Operation.GRAD_FUNCTIONAL: Differentiates,
    Operation.VMAP: Vmaps,
    Operation.JIT: Compiles,
    Operation.EAGER: None,
    Operation.PLATE: EffectHandlers,
    Operation.SCAN: EffectHandlers,
    Operation.PLATE_IN_SCAN: EffectHandlers,
    Operation.SAMPLE: Draws,
    Operation.CONTEXT: CallingContexts,
    Operation.SUMMARIES: Summarizes,
    Operation.CDF: Cdfs,
    Operation.ICDF: Icdfs,
    Operation.KL: DividesKL,
}


def offers(adapter: Adapter, operation: Operation) -> bool:
    """Whether ``adapter`` can run ``operation``: it implements the protocol and its
    ``operations`` table says how."""
    capability = CAPABILITIES[operation]
    implemented = capability is None or isinstance(adapter, capability)
    return implemented and operation in adapter.operations


def disagreements(adapter: Adapter) -> list[str]:
    """Where ``adapter``'s tables claim more than it implements: an operation named in
    ``operations`` without its protocol, or one in ``opt_in`` that ``operations`` lacks."""
    found = [
        f"{adapter.name} names {op} in operations but does not implement {capability.__name__}"
        for op in adapter.operations
        if (capability := CAPABILITIES[op]) is not None and not isinstance(adapter, capability)
    ]
    found += [
        f"{adapter.name} opts in to {op}, which its operations do not name"
        for op in adapter.opt_in
        if op not in adapter.operations
    ]
    return found
