"""What a distribution says without a value (mean, variance, mode, entropy), so the moments and
entropy checks hold every framework to one float64 answer.

A family overrides a hook (``_mean``, ``_variance``, ``_mode``, ``_entropy``) on parameters
already broadcast to its batch shape; this mixin checks and broadcasts the parameters once,
shapes the answer (``batch + event`` for the moments and the mode, ``batch`` for the entropy)
and sets NaN where a parameter is outside its domain. A hook says what mathematics says:

- NaN where the value is undefined (Cauchy's mean, StudentT's variance at df ≤ 1, a mode
  that is not unique);
- ±inf where it is infinite (StudentT's variance at 1 < df ≤ 2, Pareto's mean at alpha ≤ 1).

``stddev`` is the root of the variance. Which summaries a family has is which hooks it
overrides (:meth:`Summaries.has_summary`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from .declarations import Arrays, Options, OracleError, ParamInfo, as_float64

#: The summaries, as the frameworks name them; ``stddev`` reads the variance's hook.
SUMMARIES = ("mean", "variance", "stddev", "mode", "entropy")


def _hook(summary: str) -> str:
    if summary not in SUMMARIES:
        raise OracleError(f"no summary {summary!r} (known: {', '.join(SUMMARIES)})")
    return "_variance" if summary == "stddev" else f"_{summary}"


class Summaries:
    """The summaries of a family's distribution, as views of its hooks."""

    if TYPE_CHECKING:  # what the mixin reads of :class:`~.core.Family`
        name: str
        default_parametrization: str

        def params(self, parametrization: str | None = None) -> dict[str, ParamInfo]: ...
        def check_options(self, options: Options | None) -> dict[str, Any]: ...
        def batch_shape(
            self, params: Arrays, parametrization: str | None = None
        ) -> tuple[int, ...]: ...
        def event_shape(
            self, params: Arrays, parametrization: str | None = None
        ) -> tuple[int, ...]: ...
        def params_broadcast_to(
            self,
            params: Mapping[str, Any],
            batch: tuple[int, ...],
            parametrization: str | None = None,
        ) -> dict[str, np.ndarray]: ...
        def _params_valid(
            self, params: Arrays, parametrization: str, options: Options
        ) -> np.ndarray: ...
        def _overrides(self, hook: str) -> bool: ...
        @property
        def has_icdf(self) -> bool: ...

    def has_method(self, method: str) -> bool:
        """Whether the oracle knows ``method`` (a summary, ``cdf`` or ``icdf``) for this family."""
        if method == "icdf":
            return self.has_icdf
        return self._overrides("_cdf") if method == "cdf" else self.has_summary(method)

    def has_summary(self, summary: str) -> bool:
        """Whether the oracle knows ``summary`` for this family."""
        return self._overrides(_hook(summary))

    def summary(
        self,
        summary: str,
        params: Arrays,
        parametrization: str | None = None,
        options: Options | None = None,
    ) -> np.ndarray:
        """``summary`` at ``params``: shaped ``batch + event`` (``batch`` for the entropy), NaN
        where a parameter is outside its domain."""
        if not self.has_summary(summary):
            raise OracleError(f"{self.name} has no {summary} in the oracle")
        key = parametrization or self.default_parametrization
        opts = self.check_options(options)
        params = as_float64(params)
        batch = self.batch_shape(params, key)
        shape = batch + (() if summary == "entropy" else self.event_shape(params, key))
        broadcast = self.params_broadcast_to(params, batch, key)
        with np.errstate(all="ignore"):
            found = np.asarray(
                getattr(self, _hook(summary))(broadcast, key, opts), dtype=np.float64
            )
            if summary == "stddev":
                found = np.sqrt(found)
            valid = np.broadcast_to(self._params_valid(broadcast, key, opts), batch)
        out = np.broadcast_to(found, shape).copy()
        out[~valid] = np.nan  # a batch element's whole event
        return out

    # ----- hooks: parameters broadcast to the batch shape (each with its own event dims) --------
    def _mean(self, params: Arrays, parametrization: str, options: Options) -> np.ndarray:
        """E[X], shaped ``batch + event``."""
        raise OracleError(f"{self.name} has no mean in the oracle")

    def _variance(self, params: Arrays, parametrization: str, options: Options) -> np.ndarray:
        """Var[X] elementwise (a vector's diagonal of its covariance), ``batch + event``."""
        raise OracleError(f"{self.name} has no variance in the oracle")

    def _mode(self, params: Arrays, parametrization: str, options: Options) -> np.ndarray:
        """The unique maximiser of the density (or mass), ``batch + event``."""
        raise OracleError(f"{self.name} has no mode in the oracle")

    def _entropy(self, params: Arrays, parametrization: str, options: Options) -> np.ndarray:
        """−E[log p(X)] in nats, ``batch``."""
        raise OracleError(f"{self.name} has no entropy in the oracle")
