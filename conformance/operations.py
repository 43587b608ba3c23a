"""The operations a check needs from a framework: the contract between checks and adapters.

A check names the one operation it requires beyond construct and ``log_prob`` (which every
adapter has); an adapter declares which operations it offers and how (``"jax.vmap"``), so
neither side knows the other by a check's name, and a typo is an AttributeError, not a check
that silently never runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Operation(StrEnum):
    """What a framework is asked to do with a distribution, beyond building it and log_prob."""

    GRAD = "grad"  # reverse mode through the framework's tape/pullback (autograd.grad, jax.grad)
    GRAD_FUNCTIONAL = "grad_functional"  # a functional transform (torch.func.grad, jax.vjp)
    VMAP = "vmap"
    JIT = "jit"  # compiled, where the framework's default is eager (torch.compile)
    EAGER = "eager"  # op by op, where the framework's default is compiled (NumPyro under jax.jit)
    PLATE = "plate"
    SCAN = "scan"
    PLATE_IN_SCAN = "plate_in_scan"
    SAMPLE = "sample"  # draws: dist.sample(sample_shape) (a PRNG key where the framework takes one)
    CONTEXT = "context"  # calls as users make them: input kinds, global modes, model APIs
    SUMMARIES = "summaries"  # what a distribution says without a value: mean, …, entropy()
    CDF = "cdf"  # dist.cdf(value)
    ICDF = "icdf"  # dist.icdf(q)
    KL = "kl"  # kl_divergence(p, q), the framework's registered rule


class DrawMode(StrEnum):
    """How a framework is asked for draws (``Draws.draw``): each gives
    ``sample_shape + batch_shape + event_shape``."""

    SAMPLE = "sample"  # dist.sample(sample_shape)
    RSAMPLE = "rsample"  # dist.rsample(sample_shape), where the distribution has one
    # The calling contexts of a model's draws, each giving the same shape for sample_shape s:
    VMAP = "vmap"  # jax.vmap over s[0] keys of dist.sample(key, s[1:])
    PLATE = "plate"  # a sample site inside one plate per dimension of s (none for ())
    SCAN = "scan"  # a sample site in a scan of length s[0], inside plates for s[1:]

    @property
    def needs_leading(self) -> bool:
        """Whether the mode maps a leading sample dimension (so has no draw for ())."""
        return self in (DrawMode.VMAP, DrawMode.SCAN)


@dataclass(frozen=True)
class DrawRaised:
    """In place of one draw request's shape (``TracedDrawShapes.draw_shapes``): building its draws
    raised while the framework traced them, so the other requests of the same call are still
    judged. Plain strings, so a stored trace keeps it."""

    type_name: str
    message: str

    def __str__(self) -> str:
        return f"raised {self.type_name}: {self.message}"


#: The differentiation operations (their adapter method is ``log_prob_vjp``).
GRADIENTS = frozenset({Operation.GRAD, Operation.GRAD_FUNCTIONAL})
#: The effect-handler operations (their adapter method is ``effect_site``).
EFFECTS = frozenset({Operation.PLATE, Operation.SCAN, Operation.PLATE_IN_SCAN})
