"""Replicas of bugs in torch.distributions (and in a port of it), for today's torch.

Each function here is today's torch code with the one change that makes the bug, marked
``# MUTATION``; everything else is kept as it is so the replica fails exactly as the original did.
"""

from __future__ import annotations

import math
from typing import Any

from conformance.mutants.base import Patcher

_LOG_SQRT_2PI = math.log(math.sqrt(2 * math.pi))


# ----- seed 1: dotnet/TorchSharp#1334 -------------------------------------------------------
def torchsharp_batch_mahalanobis(bL: Any, bx: Any) -> Any:
    """torch's ``_batch_mahalanobis`` as TorchSharp ported it (dotnet/TorchSharp#1334).

    The port built ``bx``'s new shape from all *but* the first ``outer_batch_dims`` dims of
    ``bx`` where torch takes the first ``outer_batch_dims``; for loc (3,), covariance (1, 3, 3)
    and value (1, 3) the reshape asks for (1, 3, 1, 1, 3) from 3 numbers and throws
    ``shape '[1, 3, 1, 1, 3]' is invalid for input of size 3``.
    """
    import torch

    n = bx.size(-1)
    bx_batch_shape = bx.shape[:-1]
    bx_batch_dims = len(bx_batch_shape)
    bL_batch_dims = bL.dim() - 2
    outer_batch_dims = bx_batch_dims - bL_batch_dims
    old_batch_dims = outer_batch_dims + bL_batch_dims
    new_batch_dims = outer_batch_dims + 2 * bL_batch_dims
    bx_new_shape = bx.shape[outer_batch_dims:]  # MUTATION: torch has bx.shape[:outer_batch_dims]
    for sL, sx in zip(bL.shape[:-2], bx.shape[outer_batch_dims:-1], strict=False):
        bx_new_shape += (sx // sL, sL)
    bx_new_shape += (n,)
    bx = bx.reshape(bx_new_shape)
    permute_dims = (
        list(range(outer_batch_dims))
        + list(range(outer_batch_dims, new_batch_dims, 2))
        + list(range(outer_batch_dims + 1, new_batch_dims, 2))
        + [new_batch_dims]
    )
    bx = bx.permute(permute_dims)
    flat_L = bL.reshape(-1, n, n)
    flat_x = bx.reshape(-1, flat_L.size(0), n)
    flat_x_swap = flat_x.permute(1, 2, 0)
    M_swap = torch.linalg.solve_triangular(flat_L, flat_x_swap, upper=False).pow(2).sum(-2)
    M = M_swap.t()
    permuted_M = M.reshape(bx.shape[:-1])
    permute_inv_dims = list(range(outer_batch_dims))
    for i in range(bL_batch_dims):
        permute_inv_dims += [outer_batch_dims + i, old_batch_dims + i]
    reshaped_M = permuted_M.permute(permute_inv_dims)
    return reshaped_M.reshape(bx_batch_shape)


def apply_torchsharp_1334(patch: Patcher) -> None:
    from torch.distributions import multivariate_normal

    patch.setattr(multivariate_normal, "_batch_mahalanobis", torchsharp_batch_mahalanobis)


# ----- seed 5: facebookresearch/theseus#650 -------------------------------------------------
def inplace_normal_log_prob(self: Any, value: Any) -> Any:
    """Normal.log_prob accumulating into a buffer it allocates itself (the Theseus pattern).

    Outside vmap this is exact. Under ``torch.func.vmap`` the buffer is a plain (unbatched)
    tensor while the terms are batched, and ``out -= term`` raises "vmap: inplace
    arithmetic(self, *extra_args) is not possible because there exists a Tensor `other` in
    extra_args that has more elements than `self`" (facebookresearch/theseus#650).
    """
    import torch

    if self._validate_args:
        self._validate_sample(value)
    shape = torch.broadcast_shapes(value.shape, self.batch_shape)
    # MUTATION: torch returns the expression; this writes it into an unbatched buffer in place.
    out = torch.zeros(shape, dtype=self.loc.dtype, device=self.loc.device)
    out -= (value - self.loc) ** 2 / (2 * self.scale**2)
    out -= self.scale.log() + _LOG_SQRT_2PI
    return out


def apply_inplace_vmap(patch: Patcher) -> None:
    from torch.distributions import Normal

    patch.setattr(Normal, "log_prob", inplace_normal_log_prob)


# ----- own: value right, gradient wrong -----------------------------------------------------
def _log_scale_function() -> Any:
    """``log(scale)`` with a hand-written backward that is off by a factor of 2."""
    import torch

    class LogScale(torch.autograd.Function):
        generate_vmap_rule = True  # so torch.func.grad/vmap accept it, as they would upstream

        @staticmethod
        def forward(scale: Any) -> Any:
            return scale.log()

        @staticmethod
        def setup_context(ctx: Any, inputs: tuple, output: Any) -> None:
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            (scale,) = ctx.saved_tensors
            return 2 * grad / scale  # MUTATION: d log(s)/ds = 1/s

    return LogScale


def apply_grad_factor(patch: Patcher) -> None:
    from torch.distributions import Normal

    log_scale = _log_scale_function()

    def log_prob(self: Any, value: Any) -> Any:
        """torch's Normal.log_prob with ``scale.log()`` replaced by the faulty LogScale."""
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale**2
        return -((value - self.loc) ** 2) / (2 * var) - log_scale.apply(self.scale) - _LOG_SQRT_2PI

    patch.setattr(Normal, "log_prob", log_prob)


# ----- own: a parametrisation read transposed -------------------------------------------------
def apply_scale_tril_upper(patch: Patcher) -> None:
    """MultivariateNormal(scale_tril=L) that reads L as the *upper* factor: Σ = LᵀL, not LLᵀ.

    Construction and validation are today's; only the factor the distribution keeps is
    replaced by the lower Cholesky factor of LᵀL, as a port that mixed up row- and column-major
    storage (or a Cholesky convention) would. A diagonal L gives the same Σ, so only
    non-diagonal scale_tril cases can tell.
    """
    import torch
    from torch.distributions import MultivariateNormal

    original = MultivariateNormal.__init__

    def __init__(
        self: Any,
        loc: Any,
        covariance_matrix: Any = None,
        precision_matrix: Any = None,
        scale_tril: Any = None,
        validate_args: Any = None,
    ) -> None:
        original(self, loc, covariance_matrix, precision_matrix, scale_tril, validate_args)
        if scale_tril is not None:
            factor = self._unbroadcasted_scale_tril
            # MUTATION: torch keeps L itself (Σ = L Lᵀ).
            self._unbroadcasted_scale_tril = torch.linalg.cholesky(factor.mT @ factor)
            self.scale_tril = self._unbroadcasted_scale_tril.expand(
                self.batch_shape + self.event_shape + self.event_shape
            )

    patch.setattr(MultivariateNormal, "__init__", __init__)


# ----- own: shape bookkeeping wrong, values right --------------------------------------------
def apply_normal_batch_from_loc(patch: Patcher) -> None:
    """Normal whose ``batch_shape`` is loc's shape alone, before broadcasting against scale.

    log_prob still broadcasts loc and scale, so every value is right: only the shape checks
    (and code that trusts ``batch_shape``, like plates and ``expand``) can see it.
    """
    import torch
    from torch.distributions import Normal

    original = Normal.__init__

    def __init__(self: Any, loc: Any, scale: Any, validate_args: Any = None) -> None:
        original(self, loc, scale, validate_args)
        # MUTATION: torch uses the broadcast shape of (loc, scale).
        self._batch_shape = torch.Size(loc.shape) if isinstance(loc, torch.Tensor) else torch.Size()

    patch.setattr(Normal, "__init__", __init__)


# ----- own: draws -----------------------------------------------------------------------------
def apply_normal_draws_scale(patch: Patcher) -> None:
    """Normal's sample and rsample with the scale 5 % too large (log_prob untouched): the draws'
    law is wrong while every value and gradient check passes. 5 %, not 1 %: sample_fit's 2¹⁴
    draws see a scale error of about 3 % (the normal scores' sum of squares)."""
    import torch
    from torch.distributions import Normal

    def rsample(self: Any, sample_shape: Any = ()) -> Any:
        shape = self._extended_shape(torch.Size(sample_shape))
        eps = torch.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale * 1.05  # MUTATION: torch has eps * self.scale

    def sample(self: Any, sample_shape: Any = ()) -> Any:
        with torch.no_grad():
            return rsample(self, sample_shape)

    patch.setattr(Normal, "rsample", rsample)
    patch.setattr(Normal, "sample", sample)


def apply_normal_rsample_grad_half(patch: Patcher) -> None:
    """Normal.rsample with the same draws but half their pathwise gradient (by loc and by
    scale): every value, law and log_prob check passes; only the draws' derivatives are off."""
    from torch.distributions import Normal

    original = Normal.rsample

    def rsample(self: Any, sample_shape: Any = ()) -> Any:
        x = original(self, sample_shape)
        return x.detach() + 0.5 * (x - x.detach())  # MUTATION: torch's gradient is x's own

    patch.setattr(Normal, "rsample", rsample)


def apply_studentt_rsample_chi2_grad_half(patch: Patcher) -> None:
    """StudentT.rsample with the same draws but half the chi-square draw's pathwise gradient:
    the derivatives by loc and scale are right, the one by df is not, and no draw shows the
    chi-square it depends on, so only a check in expectation (bounded test functions: the law
    has no moments at small df) sees it."""
    import torch
    from torch.distributions import StudentT
    from torch.distributions.utils import _standard_normal

    def rsample(self: Any, sample_shape: Any = ()) -> Any:
        shape = self._extended_shape(torch.Size(sample_shape))
        x = _standard_normal(shape, dtype=self.df.dtype, device=self.df.device)
        z = self._chi2.rsample(torch.Size(sample_shape))
        z = z.detach() + 0.5 * (z - z.detach())  # MUTATION: torch's gradient is z's own
        return self.loc + self.scale * (x * torch.rsqrt(z / self.df))

    patch.setattr(StudentT, "rsample", rsample)


def apply_mvn_rsample_grad_coordinates_reversed(patch: Patcher) -> None:
    """MultivariateNormal.rsample with the same draws, each coordinate's pathwise gradient that
    of the coordinate at the other end (a backward pass that indexes the event in reverse): the
    draws' law and log_prob are right, and so is the gradient of the coordinates' plain sum,
    so only a check that weighs the coordinates apart sees it."""
    from torch.distributions import MultivariateNormal

    original = MultivariateNormal.rsample

    def rsample(self: Any, sample_shape: Any = ()) -> Any:
        x = original(self, sample_shape)
        reversed_ = x.flip(-1)
        return x.detach() + (reversed_ - reversed_.detach())  # MUTATION: torch's is x's own

    patch.setattr(MultivariateNormal, "rsample", rsample)


def apply_dirichlet_rsample_grad_without_simplex_term(patch: Patcher) -> None:
    """Dirichlet.rsample with the same draws and a backward pass that forgets the simplex: each
    coordinate's gradient as if it moved alone, without the −x·Σ(x·grad_output) term that keeps
    the draws' derivatives summing to 0 (the class of pytorch/pytorch#4602, where Dirichlet's
    reparameterised gradient was wrong for more than two categories). No draw shows the noise
    these derivatives multiply, so only a check in expectation sees it."""
    import torch
    from torch.distributions import dirichlet

    def backward(x: Any, concentration: Any, grad_output: Any) -> Any:
        total = concentration.sum(-1, True).expand_as(concentration)
        grad = torch._dirichlet_grad(x, concentration, total)
        return (
            grad * grad_output
        )  # MUTATION: torch has (grad_output - (x * grad_output).sum(-1, True))

    patch.setattr(dirichlet, "_Dirichlet_backward", backward)


def apply_one_hot_draws_probs_as_logits(patch: Patcher) -> None:
    """OneHotCategorical.sample draws its categories with the probabilities read as logits (a
    probs/logits mix-up in the sampler only): log_prob is right, the draws' law is the softmax
    of the probabilities (0.29, 0.32, 0.39 for 0.2, 0.3, 0.5)."""
    import torch
    from torch.distributions import Categorical, OneHotCategorical

    def sample(self: Any, sample_shape: Any = ()) -> Any:
        sample_shape = torch.Size(sample_shape)
        probs = self._categorical.probs
        drawn = Categorical(logits=probs)  # MUTATION: torch samples self._categorical
        indices = drawn.sample(sample_shape)
        return torch.nn.functional.one_hot(indices, probs.size(-1)).to(probs)

    patch.setattr(OneHotCategorical, "sample", sample)


def apply_normal_draws_ignore_sample_shape(patch: Patcher) -> None:
    """Normal's sample and rsample drop sample_shape: one draw of batch_shape whatever is
    asked (the shape bookkeeping of a port that reads sample_shape from the wrong argument)."""
    import torch
    from torch.distributions import Normal

    def rsample(self: Any, sample_shape: Any = ()) -> Any:
        shape = self._extended_shape(torch.Size())  # MUTATION: torch passes sample_shape
        eps = torch.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def sample(self: Any, sample_shape: Any = ()) -> Any:
        with torch.no_grad():
            return rsample(self, sample_shape)

    patch.setattr(Normal, "rsample", rsample)
    patch.setattr(Normal, "sample", sample)


# ----- own: summaries ----------------------------------------------------------------------
def apply_normal_variance_unsquared(patch: Patcher) -> None:
    """Normal.variance returning the scale, not its square: every log_prob, gradient and draw
    is right; the variance (and the stddev, its root in torch) is off wherever scale ≠ 1."""
    from torch.distributions import Normal

    patch.setattr(Normal, "variance", property(lambda self: self.scale))  # MUTATION: scale**2


def apply_normal_cdf_variance_as_scale(patch: Patcher) -> None:
    """Normal.cdf standardising by the variance instead of the scale: right at scale 1, wrong
    everywhere else, while log_prob and draws are right."""
    import torch
    from torch.distributions import Normal

    def cdf(self: Any, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / (self.scale**2 * math.sqrt(2))  # MUTATION: torch has scale
        return 0.5 * (1 + torch.erf(z))

    patch.setattr(Normal, "cdf", cdf)


def apply_normal_icdf_variance_as_scale(patch: Patcher) -> None:
    """Normal.icdf multiplying the standard quantile by the variance instead of the scale:
    right at scale 1 and at the median, wrong elsewhere, while log_prob and cdf are right."""
    import torch
    from torch.distributions import Normal

    def icdf(self: Any, value: Any) -> Any:
        z = torch.erfinv(2 * value - 1) * math.sqrt(2)
        return self.loc + self.scale**2 * z  # MUTATION: torch has self.scale * z

    patch.setattr(Normal, "icdf", icdf)


def apply_kl_normal_flattened(patch: Patcher) -> None:
    """torch's KL(Normal‖Normal) on each side's parameters flattened and the result shaped
    as p's batch: right where p's and q's batch shapes agree, raising where they broadcast (the
    batched-reshape class of the seed bugs, in a KL rule)."""
    from torch.distributions import Normal, kl

    def kl_normal_normal(p: Any, q: Any) -> Any:
        p_loc, p_scale = p.loc.reshape(-1), p.scale.reshape(-1)  # MUTATION: torch broadcasts
        q_loc, q_scale = q.loc.reshape(-1), q.scale.reshape(-1)
        var_ratio = (p_scale / q_scale).pow(2)
        t1 = ((p_loc - q_loc) / q_scale).pow(2)
        return (0.5 * (var_ratio + t1 - 1 - var_ratio.log())).reshape(p.batch_shape)

    key = (Normal, Normal)
    original = kl._KL_REGISTRY[key]
    kl._KL_REGISTRY[key] = kl_normal_normal
    kl._KL_MEMOIZE.clear()

    def restore() -> None:
        kl._KL_REGISTRY[key] = original
        kl._KL_MEMOIZE.clear()

    patch.on_undo(restore)
