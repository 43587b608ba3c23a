"""Summaries read as users read them (``dist.mean``, ``dist.entropy()``), and which of them a
framework class defines: the :class:`~conformance.adapters.capabilities.Summarizes` of torch,
GPyTorch and NumPyro's eager path."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any, ClassVar

from conformance.adapters.base import import_dotted
from conformance.registry import Binding
from conformance.summaries import Summary


@cache
def _defines(constructor: str, bases: tuple[str, ...], method: str) -> bool:
    cls = import_dotted(constructor)
    if not isinstance(cls, type):
        return True  # a factory: what it builds says, when called
    return defines(cls, tuple(map(import_dotted, bases)), method)


def defines(cls: type, bases: tuple[type, ...], method: str) -> bool:
    """Whether ``cls`` defines ``method`` below its framework base, whose own raises
    NotImplementedError (torch's ``stddev``, the root of the variance, counts as the class's
    when the class defines its variance)."""
    base = next((b for b in bases if isinstance(b, type) and issubclass(cls, b)), None)
    own = getattr(cls, method, None)
    if own is None:
        return False
    if base is None or own is not getattr(base, method, None):
        return True
    return method == Summary.STDDEV and defines(cls, bases, Summary.VARIANCE)


class ReadsSummaries:
    """Each summary read from the distribution built once, and its cdf and icdf, op by op."""

    distribution_bases: ClassVar[tuple[str, ...]]

    if TYPE_CHECKING:  # the adapter's

        def construct(self, binding: Binding, params: Mapping[str, Any]) -> Any: ...

    def implements(self, binding: Binding, method: str) -> bool:
        return _defines(binding.constructor, self.distribution_bases, method)

    def summaries(
        self, binding: Binding, params: Mapping[str, Any], names: Sequence[str]
    ) -> dict[str, Any]:
        dist = self.construct(binding, params)
        return {name: read_summary(dist, Summary(name)) for name in names}

    def cdf(self, binding: Binding, params: Mapping[str, Any], value: Any) -> Any:
        return self.construct(binding, params).cdf(value)

    def icdf(self, binding: Binding, params: Mapping[str, Any], q: Any) -> Any:
        return self.construct(binding, params).icdf(q)


def read_summary(dist: Any, summary: Summary) -> Any:
    """``summary`` of ``dist``, or the exception reading it raised."""
    try:
        return dist.entropy() if summary.called else getattr(dist, summary.value)
    except Exception as exc:  # this summary only: the others keep their values
        return exc
