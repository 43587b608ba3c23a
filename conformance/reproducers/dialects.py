"""How a reproducer script writes one adapter's framework code: its dialect.

Each adapter declares one dialect object (:meth:`~conformance.adapters.base.Adapter.reproducer`,
a subclass of :class:`Dialect` in the adapter's own package)
that renders exactly what the adapter does — how arrays are made and read back, how each
argument is built (GPyTorch's covariance operators), the settings ``log_prob`` runs under (a
numerical path, the seed of its probes), whether construction and ``log_prob`` are compiled and
how a gradient is taken. :mod:`conformance.reproducers.render` writes everything else (the subject's
expected arrays, tolerances and comparison), the same for every framework.

A dialect writes source only: it imports no framework.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from conformance.operations import DrawMode
from conformance.registry import Binding


def requests_literal(requests: list[tuple[DrawMode, tuple[int, ...]]]) -> str:
    """A script's list of draw requests, each mode named as the script's ``DrawMode`` names it."""
    return "[" + ", ".join(f"(DrawMode.{m.name}, {tuple(s)!r})" for m, s in requests) + "]"


def draw_modes_class() -> list[str]:
    """The suite's draw modes as a script's plain class (its requests name them)."""
    return [
        "class DrawMode:",
        '    """The ways the suite asks for draws, by its names."""',
        *(f"    {m.name} = {m.value!r}" for m in DrawMode),
    ]


class Dialect:
    """How one framework's code is written; subclasses fill in the framework's spelling."""

    #: The framework's imports (numpy and sys are the script's own).
    imports: tuple[str, ...] = ()
    #: Modules whose names a script never imports again (the framework's root, already imported).
    roots: frozenset[str] = frozenset()
    batch_shape: str = "tuple({d}.batch_shape)"
    event_shape: str = "tuple({d}.event_shape)"
    #: Whether construction and log_prob run inside one compiled function, and the decorator
    #: that compiles it.
    compiled: bool = False
    jit_decorator: str = ""

    def setup(self, dtype: str, device: str) -> list[str]:
        """Lines run first: the precision and the device the check ran on."""
        return []

    def array(self, expr: str) -> str:
        """A framework array from the NumPy expression ``expr`` (dtype kept)."""
        raise NotImplementedError

    def to_numpy(self, expr: str) -> str:
        """A NumPy array from the framework expression ``expr``."""
        raise NotImplementedError

    def argument(self, binding: Binding, keyword: str, expr: str, arrays: Mapping[str, Any]) -> str:
        """Source of argument ``keyword`` as the adapter passes it (``expr``: the plain array)."""
        return expr

    def definitions(self, binding: Binding, arrays: Mapping[str, Any]) -> list[str]:
        """Functions the arguments' source calls (defined before the arrays)."""
        return []

    def modules(self, binding: Binding) -> set[str]:
        """Modules the script imports beyond the constructor's."""
        return set()

    def contexts(self, binding: Binding) -> tuple[list[str], list[str]]:
        """Context managers ``log_prob`` runs under, and statements run first inside them."""
        return [], []

    def gradient(self, ctx: Mapping[str, Any]) -> list[str]:
        """Lines that leave ``grads`` (one per name of ``ctx['wrt']``, in order)."""
        raise NotImplementedError

    def kl_gradient(self, ctx: Mapping[str, Any]) -> list[str] | None:
        """Lines that leave ``grads`` (one per name of ``ctx['wrt']``, in order): the gradient
        of Σ ``CT_KL`` · ``ctx['divergence']`` with p built by ``ctx['call']`` where the
        divergence says ``ctx['slot']``; ``ctx['arrays']`` are every array of both sides. None
        where the dialect writes none."""
        return None

    def context_call(self, ctx: Mapping[str, Any]) -> list[str] | None:
        """Lines that make ``ctx['context']``'s call (its mode switched on first) and leave
        ``lp`` (log_prob, or the model's log density) and ``grads`` (traced input → gradient),
        with ``ctx['call']`` the constructor and ``ctx['traced']`` the traced inputs; None
        where the dialect writes no calling context."""
        return None

    def draw_definitions(self, ctx: Mapping[str, Any]) -> list[str]:
        """What :meth:`draw` and :meth:`traced_shapes` use (defined once, before them)."""
        return []

    def draw(self, ctx: Mapping[str, Any]) -> list[str] | None:
        """Lines that leave ``ctx['into']``, a list of NumPy arrays: the draws of each
        (mode, sample_shape) of the script's list named ``ctx['requests']``, made as the
        adapter makes them from seed ``SEED`` (so the item's own draws, on the item's
        platform); None where the dialect writes no draws."""
        return None

    def traced_shapes(self, ctx: Mapping[str, Any]) -> list[str] | None:
        """Where the adapter reads the draws' shapes from a trace (JAX): lines that leave
        ``traced``, each request's ``(shape, dtype name)`` or the ``'raised …'`` its trace
        gave, for the requests named ``ctx['requests']``; None where nothing is traced."""
        return None

    def pathwise(self, ctx: Mapping[str, Any]) -> list[str] | None:
        """Lines that leave ``x`` (``rsample()`` with each parameter named in the script's
        list ``ctx['names']`` copied per draw to (N, *batch)), ``per_draw`` (name → each
        draw's derivative), ``summed_x`` (``rsample((N,))``) and ``total`` (name → the gradient
        of its sum), as NumPy, made as the adapter makes them from ``SEED``; None where the
        dialect writes none. A vector draw's ``ctx`` also names ``copies`` (the script's dict
        of each parameter's shape per draw, in place of (N, *batch)) and ``weights`` (the
        script's array weighting the draw's coordinates in both sums), as the adapter's
        ``pathwise_draws`` takes them."""
        return None
