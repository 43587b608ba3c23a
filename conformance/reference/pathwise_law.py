"""The derivatives of a family's draws, so ``rsample_grad`` can hold a framework's pathwise
gradients to the oracle.

Three ways, by what the draws show (each a hook a family overrides):

- a map of standard noise the frameworks share (MultivariateNormal's loc + chol(Σ)·ε): its
  derivatives at each draw's noise (``_pathwise``); a univariate family's follow from its CDF;
- draws that hide their noise (a Dirichlet draw is Gamma draws normalised): the first two
  moments of s = Σ w·x (``_draw_moments``), whose derivatives every reparameterisation's mean
  pathwise derivatives equal (:meth:`PathwiseLaw.pathwise_moments`);
- moments that do not exist (heavy tails): the expectations of bounded test functions of s
  (:meth:`PathwiseLaw.bounded_pathwise`), for a univariate continuous law on the real line or
  the positive half-line, or a family whose s has one (``_weighted_law``: MultivariateStudentT's
  is a Student t).

Where the draws' density is not log_prob (NumPyro's MaskedDistribution at a masked-out
position), ``draw_log_density`` gives it, for the draws' implicit derivatives.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from . import bounded
from .declarations import Arrays, Options, OracleError, ParamInfo, ValueInfo, as_float64
from .numdiff import richardson_elementwise_grad


@dataclass(frozen=True)
class BoundedPathwise:
    """What :meth:`PathwiseLaw.bounded_pathwise` gives: the bumps' placement per batch element, the
    scale they are placed on, and each parameter's (∂E[g₁]/∂θ, ∂E[g₂]/∂θ), NaN at an element
    not :attr:`placed` (quartiles that overflow float64) or whose quadrature did not
    :attr:`converged`."""

    centre: np.ndarray
    width: np.ndarray
    log_scale: bool
    placed: np.ndarray
    converged: np.ndarray
    derivatives: dict[str, tuple[np.ndarray, np.ndarray]]

    def terms(self, s: np.ndarray, ds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each draw's g₁'(s)·∂s/∂θ and g₂'(s)·∂s/∂θ (:func:`bounded.derivative_terms`):
        their means must be :attr:`derivatives`."""
        return bounded.derivative_terms(s, ds, self.centre, self.width, self.log_scale)

    def judged(self, dtype: np.dtype) -> np.ndarray:
        """Per batch element: placed, converged, and the bumps within the range of draws of
        ``dtype`` (:func:`bounded.within_range`)."""
        inside = bounded.within_range(self.centre, self.width, self.log_scale, dtype)
        return self.placed & self.converged & inside

    def unjudged(self, dtype: np.dtype) -> str:
        """Why no batch element's draws of ``dtype`` can be judged ("" where some can)."""
        if np.any(self.judged(dtype)):
            return ""
        if not np.any(self.placed):
            return "the law's quartiles overflow float64 at every batch element"
        if not np.any(self.placed & self.converged):
            return "the test functions' quadrature did not converge at any batch element"
        return (
            f"the test functions reach beyond {np.dtype(dtype).name}'s range at every batch "
            "element: draws there round to 0 or overflow and cannot show the law"
        )

    def description(self, dtype: np.dtype) -> dict[str, Any]:
        """The test functions as an item's metrics state them."""
        return {
            "functions": list(bounded.NAMES),
            "z": "(log s - centre) / width" if self.log_scale else "(s - centre) / width",
            "centre": np.asarray(self.centre).tolist(),
            "width": np.asarray(self.width).tolist(),
            "judged_elements": int(np.count_nonzero(self.judged(dtype))),
            "elements": int(np.size(self.placed)),
        }


class PathwiseLaw:
    """What the oracle knows of the derivatives of a family's draws (see the module docstring):
    :class:`~.core.Family` inherits it, and a family overrides its hooks (``_pathwise``,
    ``_draw_moments``, ``_weighted_law``, ``moments_unjudged``, ``draw_log_density``)."""

    # What it reads of the family it is part of (``core.Family`` defines each).
    name: str
    value: ValueInfo
    default_parametrization: str
    if TYPE_CHECKING:

        def params(self, parametrization: str | None = None) -> dict[str, ParamInfo]: ...

        def check_options(self, options: Options | None) -> dict[str, Any]: ...

        def params_broadcast_to(
            self, params: Arrays, batch: tuple[int, ...], parametrization: str | None = None
        ) -> dict[str, np.ndarray]: ...

        def sample(
            self,
            params: Arrays,
            sample_shape: tuple[int, ...],
            rng: np.random.Generator,
            parametrization: str | None = None,
        ) -> np.ndarray: ...

        def log_prob(
            self,
            params: Arrays,
            value: np.ndarray,
            parametrization: str | None = None,
            options: Options | None = None,
        ) -> np.ndarray: ...

        def _overrides(self, hook: str) -> bool: ...

    def draw_log_density(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray | None:
        """The log density of the draws' law at ``value`` (inputs broadcast to one shape), where
        log_prob is not it; None (the default) where it is. A masked-out position of NumPyro's
        MaskedDistribution scores 0 whatever its value, while its draws keep the base's law:
        the implicit derivative of those draws needs the base's density."""
        return None

    def has_pathwise(self) -> bool:
        """Whether the oracle knows the pathwise derivatives of these draws from their map of
        standard noise (:meth:`pathwise`)."""
        return self._overrides("_pathwise")

    def pathwise(
        self,
        params: Arrays,
        draws: np.ndarray,
        parametrization: str | None = None,
        options: Options | None = None,
        weights: np.ndarray | None = None,
    ) -> dict[str, np.ndarray]:
        """For draws x (shape ``(*batch, *event)``) of the family's declared map x = T(θ, ε):
        ∂(Σ_event w·x)/∂θ at the noise ε that gave each draw, for every parameter, with the
        parameters broadcast to the draws' batch (one copy per draw); ``weights`` w has the
        event's shape (default ones). Unequal weights see each coordinate's derivative apart,
        and a draw on the simplex, whose coordinates' sum is always 1, something at all."""
        key = parametrization or self.default_parametrization
        x = np.asarray(draws, dtype=np.float64)
        rank = self.value.event_rank
        batch = x.shape[: x.ndim - rank]
        w = np.ones(x.shape[x.ndim - rank :]) if weights is None else np.asarray(weights, float)
        broadcast = self.params_broadcast_to(as_float64(params), tuple(batch), key)
        return self._pathwise(broadcast, x, w, key, self.check_options(options))

    def _pathwise(
        self,
        params: Arrays,
        draws: np.ndarray,
        weights: np.ndarray,
        parametrization: str,
        options: Options,
    ) -> dict[str, np.ndarray]:
        """:meth:`pathwise` on parameters broadcast to the draws' batch."""
        raise OracleError(f"{self.name} declares no map of noise for its draws")

    def has_pathwise_moments(self) -> bool:
        """Whether the oracle knows the draws' first two moments along a weighting
        (:meth:`draw_moments`), and so their derivatives (:meth:`pathwise_moments`)."""
        return self._overrides("_draw_moments")

    def draw_moments(
        self,
        params: Arrays,
        weights: np.ndarray,
        batch: tuple[int, ...],
        parametrization: str | None = None,
        options: Options | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """(E[s], E[s²]) with s = Σ_event w·x, per batch element (the parameters broadcast to
        ``batch``)."""
        key, broadcast, w, checked = self._moment_inputs(
            params, weights, batch, parametrization, options
        )
        return self._draw_moments(broadcast, w, key, checked)

    def _moment_inputs(
        self,
        params: Arrays,
        weights: np.ndarray,
        batch: tuple[int, ...],
        parametrization: str | None,
        options: Options | None,
    ) -> tuple[str, dict[str, np.ndarray], np.ndarray, dict[str, Any]]:
        """The parametrization, the parameters broadcast to ``batch``, the weights and the
        checked options, as :meth:`_draw_moments` takes them."""
        key = parametrization or self.default_parametrization
        broadcast = self.params_broadcast_to(as_float64(params), tuple(batch), key)
        return key, broadcast, np.asarray(weights, dtype=np.float64), self.check_options(options)

    def pathwise_moments(
        self,
        params: Arrays,
        weights: np.ndarray,
        batch: tuple[int, ...],
        parametrization: str | None = None,
        options: Options | None = None,
        names: list[str] | None = None,
    ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """For every differentiable parameter θ (those in ``names``, where given):
        (∂E[s]/∂θ, ∂E[s²]/∂θ) with s = Σ_event w·x,
        per batch element (each of shape (*batch, *θ's event)), by Richardson's differences
        of :meth:`draw_moments` (closed forms: accurate to about 1e-10).

        For any reparameterisation x = T(θ, ε), d/dθ E[g(x)] = E[∇g(x)·∂x/∂θ]; with g = s and
        g = s² the mean of each draw's ∂s/∂θ, and of 2s·∂s/∂θ, must be these numbers. They
        judge pathwise derivatives where no declared map reads the noise back from the draw
        (``rsample_grad`` in expectation)."""
        key, broadcast, w, checked = self._moment_inputs(
            params, weights, batch, parametrization, options
        )
        info = self.params(key)
        wrt, domains = self._differentiated(info, names)
        found = []
        for moment in (0, 1):

            def f(moved: dict[str, np.ndarray], moment: int = moment) -> np.ndarray:
                return self._draw_moments(moved, w, key, checked)[moment]

            found.append(
                richardson_elementwise_grad(
                    f,
                    broadcast,
                    {k: info[k].event_rank for k in broadcast},
                    wrt,
                    domains,
                )
            )
        return {k: (found[0][k], found[1][k]) for k in wrt}

    @staticmethod
    def _differentiated(
        info: dict[str, ParamInfo], names: list[str] | None
    ) -> tuple[list[str], dict[str, str]]:
        """The parameters an expectation is differentiated by (every differentiable one, or
        those in ``names``: Wishart's df alone, not every entry of its scale), and the domains
        Richardson's steps are sized to (numdiff.step_scale sizes a unit-interval step to the
        ends, and an open unit interval is the same interval; step_scale itself also sizes the
        gradients' tolerance floors, so it is left as it is)."""
        wrt = [k for k, p in info.items() if not p.static and not p.integer]
        if names is not None:
            wrt = [k for k in wrt if k in names]
        domains = {
            k: "unit_interval" if p.domain == "open_unit_interval" else p.domain
            for k, p in info.items()
        }
        return wrt, domains

    def moments_unjudged(self, params: Arrays, parametrization: str | None = None) -> str:
        """Why the draws' mean pathwise derivatives cannot be judged at ``params`` at the
        stated false-failure rate ("" where they can): a derivative of infinite variance (a
        direction y/‖y‖'s, (I − x·xᵀ)/‖y‖, at d = 2) leaves the t statistic's tails far
        heavier than the normal's."""
        return ""

    def _draw_moments(
        self, params: Arrays, weights: np.ndarray, parametrization: str, options: Options
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`draw_moments` on parameters broadcast to the batch."""
        raise OracleError(f"{self.name} declares no moments of its draws")

    def has_bounded_pathwise(self) -> bool:
        """Whether :meth:`bounded_pathwise` can judge these draws: a univariate continuous law
        on the real line or the positive half-line, or a family whose weighted draws Σ w·x
        have such a law (:meth:`_weighted_law`)."""
        if self._overrides("_weighted_law"):
            return True
        return (
            self.value.event_rank == 0
            and not self.value.discrete
            and self.value.support in ("real", "positive")
        )

    def bounded_pathwise(
        self,
        params: Arrays,
        weights: np.ndarray,
        batch: tuple[int, ...],
        parametrization: str | None = None,
        options: Options | None = None,
        names: list[str] | None = None,
    ) -> BoundedPathwise:
        """For every differentiable parameter θ (those in ``names``, where given):
        (∂E[g₁(s)]/∂θ, ∂E[g₂(s)]/∂θ), s = Σ_event w·x, per batch element, for the bounded
        test functions of :mod:`reference.bounded` placed at the law's median and quartile
        spread; by Richardson's differences of their quadratures.

        Where a law's moments do not exist or rest on its rarest draws (a Student t's df), the
        mean pathwise derivative of a bounded g still equals these (``rsample_grad`` in
        expectation, bounded)."""
        key, broadcast, w, checked = self._moment_inputs(
            params, weights, batch, parametrization, options
        )
        info = self.params(key)
        wrt, domains_of = self._differentiated(info, names)
        law, _, _ = self._weighted_law(broadcast, w, key)
        log_scale = bounded.in_log_scale(law.value.support)
        drawn = self.sample(
            broadcast,
            (bounded.PLACEMENT_DRAWS,),
            np.random.default_rng(bounded.PLACEMENT_SEED),
            key,
        )
        event_axes = tuple(range(drawn.ndim - self.value.event_rank, drawn.ndim))
        weighted = (drawn * w).sum(axis=event_axes) if event_axes else drawn * w
        found_at = bounded.placement(bounded.coordinate(weighted, log_scale))
        placed = found_at.placed
        # An element the bumps cannot be placed on is integrated at a stand-in placement (no
        # NaN reaches the differences) and its derivatives are NaN.
        at = found_at.where(placed)

        def expectations(moved: dict[str, np.ndarray]) -> tuple:
            moved_law, moved_params, moved_key = self._weighted_law(moved, w, key)
            return bounded.expectations(
                lambda x: moved_law.log_prob(moved_params, x, moved_key, checked),
                at,
                log_scale,
            )

        converged = expectations(broadcast)[2]
        found = []
        for which in (0, 1):

            def f(moved: dict[str, np.ndarray], which: int = which) -> np.ndarray:
                return expectations(moved)[which]

            found.append(
                richardson_elementwise_grad(
                    f, broadcast, {k: info[k].event_rank for k in broadcast}, wrt, domains_of
                )
            )
        unjudged = ~(placed & converged)

        def masked(d: np.ndarray) -> np.ndarray:
            mask = unjudged.reshape(unjudged.shape + (1,) * (d.ndim - unjudged.ndim))
            return np.where(mask, np.nan, d)

        return BoundedPathwise(
            at.centre,
            at.width,
            log_scale,
            placed,
            converged,
            {k: (masked(found[0][k]), masked(found[1][k])) for k in wrt},
        )

    def _weighted_law(
        self, params: Arrays, weights: np.ndarray, parametrization: str
    ) -> tuple[PathwiseLaw, dict[str, np.ndarray], str]:
        """The univariate law of s = Σ_event w·x (a family, its parameters broadcast to the
        batch, its parametrization): a multivariate t's s is a Student t. A univariate
        family's s is its draw (w = 1)."""
        if self.value.event_rank or np.any(np.asarray(weights) != 1.0):
            raise OracleError(f"{self.name} declares no law of its weighted draws")
        return self, dict(params), parametrization
