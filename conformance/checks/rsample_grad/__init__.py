"""rsample_grad: whether a framework's reparameterised draws carry the right gradients.

A Monte Carlo loss differentiates through its draws, so a sampler whose draws are right but
whose derivatives are wrong trains silently wrong. Each differentiable parameter is judged one
of three ways, each in its own module:

* :mod:`.by_draw`: each univariate draw's derivative against the implicit-reparameterisation
  identity, dx/dθ = −(∂F/∂θ)(x) / f(x), per draw and as rsample((n,))'s summed gradient;
* :mod:`.vector_map`: a multivariate draw's, against its declared map of standard noise, read
  back from the draw;
* :mod:`.in_expectation`: where no number is right for one draw (several noises, a map that
  loses the noise), the mean derivative, by the law's moments or bounded test functions.

:mod:`.check` routes each parameter and picks the item's script; :mod:`.call` makes the one
pathwise call all three share. Only float32 items: the identity's derivatives are accurate
enough to judge float32's rounding, not float64's.
"""

from conformance.checks.rsample_grad.check import RsampleGradCheck

__all__ = ["RsampleGradCheck"]
