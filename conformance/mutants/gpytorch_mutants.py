"""Replica of a GPyTorch MultivariateNormal batch-matching bug (the class of
cornellius-gp/gpytorch#2564), for today's GPyTorch."""

from __future__ import annotations

import math
from typing import Any

from conformance.mutants.base import Patcher


def misaligned_mvn_log_prob(self: Any, value: Any) -> Any:
    """GPyTorch's ``MultivariateNormal.log_prob`` with the covariance's batch matched to
    ``value - mean`` from the left instead of the right.

    GPyTorch repeats a lazy covariance by hand to the batch shape of ``value - mean``; today's
    code left-pads the covariance's batch with 1s first, so the repeat factors line up with the
    trailing dims (broadcasting's rule). This replica zips the two batch shapes unpadded, so a
    value with extra leading (sample) dims gets its factors from the wrong dims: the covariance
    is repeated to a batch that is not the value's, and inv_quad_logdet either raises or pairs
    value and covariance batches wrongly.
    """
    from gpytorch import settings
    from torch.distributions import MultivariateNormal as TorchMultivariateNormal

    if settings.fast_computations.log_prob.off():
        return TorchMultivariateNormal.log_prob(self, value)
    if self._validate_args:
        self._validate_sample(value)
    mean, covar = self.loc, self.lazy_covariance_matrix
    diff = value - mean
    if diff.shape[:-1] != covar.batch_shape:
        if len(diff.shape[:-1]) < len(covar.batch_shape):
            diff = diff.expand(covar.shape[:-1])
        else:
            # MUTATION: GPyTorch zips against (1,) * k + covar.batch_shape (right-aligned).
            covar = covar.repeat(
                *(
                    diff_size // covar_size
                    for diff_size, covar_size in zip(
                        diff.shape[:-1], covar.batch_shape, strict=False
                    )
                ),
                *(1 for _ in range(diff.dim() - 1 - covar.dim() + 2)),
                1,
                1,
            )
    covar = covar.evaluate_kernel()
    inv_quad, logdet = covar.inv_quad_logdet(inv_quad_rhs=diff.unsqueeze(-1), logdet=True)
    return -0.5 * sum([inv_quad, logdet, diff.size(-1) * math.log(2 * math.pi)])


def apply_gpytorch_2564(patch: Patcher) -> None:
    from gpytorch.distributions import MultivariateNormal

    patch.setattr(MultivariateNormal, "log_prob", misaligned_mvn_log_prob)


def apply_mvn_rsample_grad_half(patch: Patcher) -> None:
    """GPyTorch's MultivariateNormal.rsample with the same draws but half their pathwise
    gradient: the draws' law and log_prob are right; only the derivatives, which GPyTorch's
    root decomposition makes and which are judged in expectation, are off."""
    from gpytorch.distributions import MultivariateNormal

    original = MultivariateNormal.rsample

    def rsample(self: Any, *args: Any, **kwargs: Any) -> Any:
        x = original(self, *args, **kwargs)
        return x.detach() + 0.5 * (x - x.detach())  # MUTATION: GPyTorch's gradient is x's own

    patch.setattr(MultivariateNormal, "rsample", rsample)
