"""rsample_grad: pathwise gradients of reparameterised draws (the check: :mod:`.check`)."""

from conformance.checks.rsample_grad.check import RsampleGradCheck

__all__ = ["RsampleGradCheck"]
