"""Replicas of bugs in NumPyro (on JAX), for today's NumPyro.

The two seed replicas are the released code that had the bug (numpyro 0.16.1's
``_default_promote_batch_shape``; numpyro 0.15.3's integer-valued ``log_prob`` bodies with
jax 0.4.34's ``xlogy``/``xlog1py`` JVP rule), so they fail exactly as those releases did.
"""

from __future__ import annotations

import copy
import math
from typing import Any

from conformance.mutants.base import Patcher


# ----- seed 3: pyro-ppl/numpyro#1971 ---------------------------------------------------------
def promote_batch_shape_first_param(d: Any) -> Any:
    """numpyro 0.16.1's ``_default_promote_batch_shape``: the batch shape of one parameter.

    Inside ``scan`` the traced site's parameters carry the time axis in front; the promoted
    batch shape is read from the *first* entry of ``arg_constraints`` only (MultivariateNormal:
    ``loc``), so a batch that comes from another parameter, or from a plate, is dropped —
    (4,) instead of (4, 5) in pyro-ppl/numpyro#1971. Fixed by pyro-ppl/numpyro#1973 (0.17.0),
    which broadcasts the batch shapes of every parameter.
    """
    attr_name = next(iter(d.arg_constraints))
    attr_event_dim = d.arg_constraints[attr_name].event_dim
    attr = getattr(d, attr_name)
    resolved_batch_shape = attr.shape[: max(0, attr.ndim - d.event_dim - attr_event_dim)]
    new_self = copy.deepcopy(d)
    new_self._batch_shape = resolved_batch_shape
    return new_self


def apply_numpyro_1971(patch: Patcher) -> None:
    from numpyro.distributions.batch_util import promote_batch_shape
    from numpyro.distributions.distribution import Distribution

    original = promote_batch_shape.registry[Distribution]
    promote_batch_shape.register(Distribution, promote_batch_shape_first_param)
    patch.on_undo(lambda: promote_batch_shape.register(Distribution, original))


# ----- seed 4: pyro-ppl/numpyro#1876 ---------------------------------------------------------
def float0_special_functions() -> tuple[Any, Any]:
    """``xlogy`` and ``xlog1py`` with jax 0.4.34's JVP rules.

    The rules multiply the tangent of ``x`` — for an integer ``x`` a ``float0`` zero — by
    ``log(y)``: ``TypeError: Called multiply with a float0 array`` once ``x`` reaches them
    without a cast to float (numpyro 0.15.3 passed integer values straight through).
    """
    import jax.numpy as jnp
    from jax import custom_jvp, lax
    from jax._src.numpy.util import promote_args_inexact

    @custom_jvp
    def xlogy(x: Any, y: Any) -> Any:
        x, y = promote_args_inexact("xlogy", x, y)
        return jnp.where(x != 0.0, lax.mul(x, lax.log(y)), jnp.zeros_like(x))

    @xlogy.defjvp
    def _xlogy_jvp(primals: tuple, tangents: tuple) -> tuple:
        (x, y), (x_dot, y_dot) = primals, tangents
        result = xlogy(x, y)
        return result, (x_dot * lax.log(y) + y_dot * x / y).astype(result.dtype)

    @custom_jvp
    def xlog1py(x: Any, y: Any) -> Any:
        x, y = promote_args_inexact("xlog1py", x, y)
        return jnp.where(x != 0.0, lax.mul(x, lax.log1p(y)), jnp.zeros_like(x))

    @xlog1py.defjvp
    def _xlog1py_jvp(primals: tuple, tangents: tuple) -> tuple:
        (x, y), (x_dot, y_dot) = primals, tangents
        result = xlog1py(x, y)
        return result, (x_dot * lax.log1p(y) + y_dot * x / (1 + y)).astype(result.dtype)

    return xlogy, xlog1py


def apply_numpyro_1876(patch: Patcher) -> None:
    """numpyro 0.15.3's log_prob of BernoulliProbs, BinomialProbs, BinomialLogits and
    MultinomialProbs.

    pyro-ppl/numpyro#1890 (in 0.16.0) fixed #1876 by casting the value (and BinomialLogits'
    total_count) to float before ``xlogy``/``xlog1py``; these bodies are the ones from before.
    """
    import jax.numpy as jnp
    from jax.scipy.special import gammaln
    from numpyro.distributions import discrete
    from numpyro.distributions.util import clamp_probs, validate_sample

    xlogy, xlog1py = float0_special_functions()

    @validate_sample
    def bernoulli_probs_log_prob(self: Any, value: Any) -> Any:
        ps_clamped = clamp_probs(self.probs)
        return xlogy(value, ps_clamped) + xlog1py(1 - value, -ps_clamped)

    @validate_sample
    def binomial_probs_log_prob(self: Any, value: Any) -> Any:
        log_factorial_n = gammaln(self.total_count + 1)
        log_factorial_k = gammaln(value + 1)
        log_factorial_nmk = gammaln(self.total_count - value + 1)
        probs = clamp_probs(self.probs)
        return (
            log_factorial_n
            - log_factorial_k
            - log_factorial_nmk
            + xlogy(value, probs)
            + xlog1py(self.total_count - value, -probs)
        )

    @validate_sample
    def binomial_logits_log_prob(self: Any, value: Any) -> Any:
        log_factorial_n = gammaln(self.total_count + 1)
        log_factorial_k = gammaln(value + 1)
        log_factorial_nmk = gammaln(self.total_count - value + 1)
        normalize_term = (
            self.total_count * jnp.clip(self.logits, 0)
            + xlog1py(self.total_count, jnp.exp(-jnp.abs(self.logits)))
            - log_factorial_n
        )
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize_term

    @validate_sample
    def multinomial_probs_log_prob(self: Any, value: Any) -> Any:
        return gammaln(self.total_count + 1) + jnp.sum(
            xlogy(value, self.probs) - gammaln(value + 1), axis=-1
        )

    patch.setattr(discrete.BernoulliProbs, "log_prob", bernoulli_probs_log_prob)
    patch.setattr(discrete.BinomialProbs, "log_prob", binomial_probs_log_prob)
    patch.setattr(discrete.BinomialLogits, "log_prob", binomial_logits_log_prob)
    patch.setattr(discrete.MultinomialProbs, "log_prob", multinomial_probs_log_prob)


# ----- own: float32 precision loss ---------------------------------------------------------------
def apply_normal_log_of_pdf(patch: Patcher) -> None:
    """Normal.log_prob as ``log(pdf)``: exact enough in float64, wrong in float32's far tail.

    ``exp(-z²/2)`` underflows to a subnormal beyond z ≈ 13 and to 0 beyond z ≈ 14 in float32
    (log_prob -inf where the truth is about -100); float64 holds out to z ≈ 38.
    """
    import jax.numpy as jnp
    from numpyro.distributions import continuous
    from numpyro.distributions.util import validate_sample

    @validate_sample
    def log_prob(self: Any, value: Any) -> Any:
        value_scaled = (value - self.loc) / self.scale
        # MUTATION: numpyro stays in log space: -0.5 z² - log(√(2π) σ).
        pdf = jnp.exp(-0.5 * value_scaled**2) / (jnp.sqrt(2 * jnp.pi) * self.scale)
        return jnp.log(pdf)

    patch.setattr(continuous.Normal, "log_prob", log_prob)


# ----- own: a failure only under jax.jit ----------------------------------------------------------
def apply_normal_jit_only(patch: Patcher) -> None:
    """Normal.log_prob that takes another branch when its value is being staged out by jit.

    A "fast path" guarded by a tracer check (``isinstance(x, DynamicJaxprTracer)``, the way
    library code special-cases traced inputs) that drops the ``-log σ`` term: eager calls,
    ``jax.grad`` and ``jax.vmap`` run the right formula; only compiled code is wrong.
    """
    from jax._src.interpreters.partial_eval import DynamicJaxprTracer
    from numpyro.distributions import continuous
    from numpyro.distributions.util import validate_sample

    original = continuous.Normal.log_prob

    @validate_sample
    def log_prob(self: Any, value: Any) -> Any:
        if isinstance(value, DynamicJaxprTracer):
            value_scaled = (value - self.loc) / self.scale
            # MUTATION: the traced branch forgets log(σ) in the normaliser.
            return -0.5 * value_scaled**2 - math.log(math.sqrt(2 * math.pi))
        return original(self, value)

    patch.setattr(continuous.Normal, "log_prob", log_prob)


# ----- own: a failure only op by op --------------------------------------------------------------
def apply_normal_eager_only(patch: Patcher) -> None:
    """Normal.log_prob that takes another branch when its value is a concrete array.

    The mirror of :func:`apply_normal_jit_only`: a fast path guarded by a concrete-value test
    (``isinstance(x, jax.Array)`` is false for a tracer) that drops the ``-log σ`` term, so only
    eager calls are wrong and every compiled item passes.
    """
    from jax._src.interpreters.partial_eval import DynamicJaxprTracer
    from numpyro.distributions import continuous
    from numpyro.distributions.util import validate_sample

    original = continuous.Normal.log_prob

    @validate_sample
    def log_prob(self: Any, value: Any) -> Any:
        if not isinstance(value, DynamicJaxprTracer):
            value_scaled = (value - self.loc) / self.scale
            # MUTATION: the concrete branch forgets log(σ) in the normaliser.
            return -0.5 * value_scaled**2 - math.log(math.sqrt(2 * math.pi))
        return original(self, value)

    patch.setattr(continuous.Normal, "log_prob", log_prob)


# ----- own: draws ----------------------------------------------------------------------------------
def apply_normal_draws_scale(patch: Patcher) -> None:
    """Normal's sample with the scale 5 % too large (log_prob untouched; rsample is sample for a
    reparameterised NumPyro distribution): the law of NumPyro's draws is off while every value
    and gradient check passes, and the draws are compiled (the executable store must not
    answer for the unmutated sampler)."""
    from jax import random
    from numpyro.distributions import Normal

    def sample(self: Any, key: Any, sample_shape: Any = ()) -> Any:
        eps = random.normal(key, shape=sample_shape + self.batch_shape + self.event_shape)
        return self.loc + eps * self.scale * 1.05  # MUTATION: NumPyro has eps * self.scale

    patch.setattr(Normal, "sample", sample)


def apply_normal_rsample_grad_half(patch: Patcher) -> None:
    """Normal's sample with the same draws but half their pathwise gradient (by loc and by
    scale): every value, law and log_prob check passes; only the derivatives of the draws that
    ``jax.grad`` takes through the compiled sampler are off."""
    from jax import lax, random
    from numpyro.distributions import Normal

    def sample(self: Any, key: Any, sample_shape: Any = ()) -> Any:
        eps = random.normal(key, shape=sample_shape + self.batch_shape + self.event_shape)
        x = self.loc + eps * self.scale
        return lax.stop_gradient(x) + 0.5 * (x - lax.stop_gradient(x))  # MUTATION: NumPyro's x

    patch.setattr(Normal, "sample", sample)


def apply_beta_sample_grad_half(patch: Patcher) -> None:
    """Beta's sample with the same draws but half their pathwise gradient: its derivatives by
    the concentrations combine two Gamma draws' noises, so no draw shows what they should be;
    only a check in expectation sees them halved."""
    from jax import lax
    from numpyro.distributions import Beta

    def sample(self: Any, key: Any, sample_shape: Any = ()) -> Any:
        x = self._dirichlet.sample(key, sample_shape)[..., 0]
        return lax.stop_gradient(x) + 0.5 * (x - lax.stop_gradient(x))  # MUTATION: NumPyro's x

    patch.setattr(Beta, "sample", sample)


# ----- own: summaries --------------------------------------------------------------------------
def apply_normal_entropy_constant(patch: Patcher) -> None:
    """Normal.entropy without its ½ (log(2π)/2 + log σ, the entropy less half a nat): every
    log_prob, gradient and draw is right, and the summaries are compiled (the executable store
    must not answer for the unmutated entropy)."""
    import jax.numpy as jnp
    from numpyro.distributions import Normal

    def entropy(self: Any) -> Any:
        return jnp.broadcast_to(0.5 * jnp.log(2 * jnp.pi) + jnp.log(self.scale), self.batch_shape)

    patch.setattr(Normal, "entropy", entropy)  # MUTATION: 0.5 + 0.5·log(2π) + log σ


def apply_kl_normal_log_ratio_sign(patch: Patcher) -> None:
    """NumPyro's KL(Normal‖Normal) adding log(σp²/σq²) where it should subtract it: right
    where the scales agree (p = q among them), wrong elsewhere; compiled, so the executable
    store must not answer for the unmutated rule."""
    import jax.numpy as jnp
    from numpyro.distributions import Normal, kl

    def kl_normal_normal(p: Any, q: Any) -> Any:
        var_ratio = jnp.square(p.scale / q.scale)
        t1 = jnp.square((p.loc - q.loc) / q.scale)
        return 0.5 * (var_ratio + t1 - 1 + jnp.log(var_ratio))  # MUTATION: − log(var_ratio)

    dispatcher = kl.kl_divergence
    key = (Normal, Normal)
    original = dispatcher.funcs[key]
    dispatcher.add(key, kl_normal_normal)

    def restore() -> None:
        dispatcher.add(key, original)

    patch.on_undo(restore)
