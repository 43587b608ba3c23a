"""KL divergences as users compute them: the framework's ``kl_divergence(p, q)`` on two
distributions built from their parameters, the :class:`~conformance.adapters.capabilities.DividesKL`
of torch, GPyTorch and NumPyro's eager path."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import TYPE_CHECKING, Any, ClassVar

from conformance.adapters.base import import_dotted
from conformance.registry import Binding
from conformance.registry.kl_pairs import kl_rules


@cache
def _pairs(framework: str) -> frozenset[tuple[str, str]]:
    return frozenset(pq for rule in kl_rules().get(framework, ()) for pq in rule.oracle)


class DividesByRules:
    """``kl_divergence(p, q)`` eagerly, by the function the framework dispatches its rules
    with; the pairs are those ``kl_pairs.yaml`` lists under :attr:`kl_rules`."""

    #: The dotted path of the framework's ``kl_divergence``.
    kl_function: ClassVar[str]
    #: Whose rules in ``kl_pairs.yaml`` the function dispatches to.
    kl_rules: ClassVar[str]

    if TYPE_CHECKING:  # the adapter's

        def construct(self, binding: Binding, params: Mapping[str, Any]) -> Any: ...

    def kl_pairs(self) -> frozenset[tuple[str, str]]:
        return _pairs(self.kl_rules)

    def kl_divergence(
        self,
        p_binding: Binding,
        p_params: Mapping[str, Any],
        q_binding: Binding,
        q_params: Mapping[str, Any],
    ) -> Any:
        divergence = import_dotted(self.kl_function)
        return divergence(self.construct(p_binding, p_params), self.construct(q_binding, q_params))
