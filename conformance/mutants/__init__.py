"""Mutants: faithful replicas of framework bugs, injected into today's releases at run time.

``conformance mutants`` runs the suite once per mutant (restricted to what the bug can touch)
and once without, and prints which items each mutant makes fail — the proof that the suite
catches the reported bugs (../shared/SEEDS.md) even where the buggy release no longer installs.
``CONFORMANCE_MUTANT=<name> conformance run …`` runs the suite with one mutant applied.
"""

from __future__ import annotations

from conformance.kinds import Kind
from conformance.mutants import gpytorch_mutants, numpyro_mutants, torch_mutants
from conformance.mutants.base import Mutant, Patcher

ENV = "CONFORMANCE_MUTANT"

# Mutants of one family share a selection, so they share one baseline run.
TORCH_MVN = ("--framework=torch", "--family=MultivariateNormal", "--check=shapes,log_prob")
TORCH_NORMAL = (
    "--framework=torch",
    "--family=Normal",
    "--check=shapes,log_prob,grad,grad_functional,vmap",
)
TORCH_NORMAL_DRAWS = ("--framework=torch", "--family=Normal", "--check=sample_shapes,sample_fit")
TORCH_NORMAL_PATHWISE = ("--framework=torch", "--family=Normal", "--check=sample_fit,rsample_grad")
TORCH_MVN_PATHWISE = (
    "--framework=torch",
    "--family=MultivariateNormal",
    "--check=sample_fit,rsample_grad",
)
TORCH_STUDENTT_PATHWISE = (
    "--framework=torch",
    "--family=StudentT",
    "--check=sample_fit,rsample_grad",
)
TORCH_DIRICHLET_PATHWISE = (
    "--framework=torch",
    "--family=Dirichlet",
    "--check=sample_fit,rsample_grad",
)
NUMPYRO_BETA_PATHWISE = ("--framework=numpyro", "--family=Beta", "--check=sample_fit,rsample_grad")
TORCH_ONE_HOT_DRAWS = (
    "--framework=torch",
    "--family=OneHotCategorical",
    "--check=log_prob,sample_fit",
)
NUMPYRO_NORMAL = ("--framework=numpyro", "--family=Normal", "--check=log_prob,eager")
NUMPYRO_NORMAL_DRAWS = (
    "--framework=numpyro",
    "--family=Normal",
    "--check=sample_shapes,sample_fit",
)
NUMPYRO_NORMAL_PATHWISE = (
    "--framework=numpyro",
    "--family=Normal",
    "--check=sample_fit,rsample_grad",
)
TORCH_NORMAL_SUMMARIES = ("--framework=torch", "--family=Normal", "--check=log_prob,moments")
TORCH_NORMAL_CDF = ("--framework=torch", "--family=Normal", "--check=log_prob,cdf")
TORCH_NORMAL_ICDF = ("--framework=torch", "--family=Normal", "--check=log_prob,icdf")
NUMPYRO_NORMAL_SUMMARIES = ("--framework=numpyro", "--family=Normal", "--check=log_prob,entropy")
TORCH_NORMAL_KL = ("--framework=torch", "--family=Normal", "--check=log_prob,kl")
NUMPYRO_NORMAL_KL = ("--framework=numpyro", "--family=Normal", "--check=log_prob,kl")

CATALOGUE: tuple[Mutant, ...] = (
    Mutant(
        name="torchsharp-1334",
        seed=1,
        title="batched Mahalanobis reshape from all-but the first outer_batch_dims dims",
        replicates="TorchSharp's port of torch's _batch_mahalanobis, injected into torch's MVN",
        link="https://github.com/dotnet/TorchSharp/issues/1334",
        framework="torch",
        apply=torch_mutants.apply_torchsharp_1334,
        selection=TORCH_MVN,
        killers=(
            "*/multivariate_normal.yaml::torchsharp-1334[torch-float32-log_prob]",
            "*/multivariate_normal.yaml::torchsharp-1334[torch-float64-log_prob]",
        ),
        message="shape '[1, 3, 1, 1, 3]' is invalid for input of size 3",
    ),
    Mutant(
        name="gpytorch-2564",
        seed=2,
        title="GPyTorch MVN log_prob matches the covariance batch to value - mean from the left",
        replicates="MultivariateNormal.log_prob's hand-written batch repeat, unpadded",
        link="https://github.com/cornellius-gp/gpytorch/issues/2564",
        framework="gpytorch",
        apply=gpytorch_mutants.apply_gpytorch_2564,
        selection=(
            "--framework=gpytorch",
            "--family=MultivariateNormal",
            "--check=log_prob,broadcast",
            "--dtype=float64",
        ),
        killers=("*+value-lead[gpytorch-*-broadcast]",),
    ),
    Mutant(
        name="numpyro-1971",
        seed=3,
        title="scan's promote_batch_shape takes the batch shape of the first parameter only",
        replicates="numpyro 0.16.1's _default_promote_batch_shape (fixed by numpyro#1973)",
        link="https://github.com/pyro-ppl/numpyro/issues/1971",
        framework="numpyro",
        apply=numpyro_mutants.apply_numpyro_1971,
        # The effect-handler cases (cases/numpyro_effects.yaml): NumPyro's scan traces every
        # item, at about a second each on a small CPU.
        selection=(
            "--framework=numpyro",
            "--check=shapes,plate,scan,plate_in_scan",
            "--variants=off",
            "-k",
            "numpyro_effects",
        ),
        killers=(
            "*/numpyro_effects.yaml::numpyro-1971-plate-in-scan[numpyro-float32-plate_in_scan]",
            "*/numpyro_effects.yaml::numpyro-1971-plate-in-scan[numpyro-float64-plate_in_scan]",
        ),
        spared=("*-shapes]", "*-plate]"),
        kinds=(Kind.SHAPE,),
    ),
    Mutant(
        name="numpyro-1876",
        seed=4,
        title="xlogy/xlog1py JVP multiplies by the integer value's float0 tangent",
        replicates="numpyro 0.15.3's integer-valued log_prob bodies with jax 0.4.34's JVP rules",
        link="https://github.com/pyro-ppl/numpyro/issues/1876",
        framework="numpyro",
        apply=numpyro_mutants.apply_numpyro_1876,
        # The cases with integer-typed values or counts: the ones a float0 tangent can reach.
        selection=(
            "--framework=numpyro",
            "--family=Bernoulli,Binomial,Multinomial",
            "--check=log_prob,grad,grad_functional",
            "-k",
            "int32 or int64",
        ),
        killers=(
            "*/gradients.yaml::bernoulli-probs-int64-values[numpyro-float32-grad]",
            "*/gradients.yaml::bernoulli-probs-int64-values[numpyro-float64-grad]",
        ),
        # The old bodies also hand int32 values to gammaln uncast, which JAX evaluates in
        # float32: the float64 log_prob of binomial probs-int32-value is off by ~5e-7 relative,
        # as it was on numpyro 0.15.3. float32 log_prob stays right.
        spared=("*-float32-log_prob]",),
        message="Called multiply with a float0 array",
        kinds=(Kind.RAISES, Kind.VALUE),
    ),
    Mutant(
        name="theseus-650",
        seed=5,
        title="in-place arithmetic into an unbatched buffer inside Normal.log_prob",
        replicates="the Theseus pattern (error[:, a:b] = ...) in torch's Normal.log_prob",
        link="https://github.com/facebookresearch/theseus/issues/650",
        framework="torch",
        apply=torch_mutants.apply_inplace_vmap,
        selection=TORCH_NORMAL,
        killers=("*/normal.yaml::batched-params[torch-*-vmap]",),
        spared=("*-shapes]", "*-log_prob]", "*-grad]", "*-grad_functional]"),
        message="vmap: inplace arithmetic(self, *extra_args) is not possible",
        kinds=(Kind.RAISES,),
    ),
    Mutant(
        name="grad-factor",
        title="value right, gradient wrong: d log(scale)/d scale doubled in a custom backward",
        replicates="a hand-written autograd.Function backward off by a factor of 2 (torch Normal)",
        framework="torch",
        apply=torch_mutants.apply_grad_factor,
        selection=TORCH_NORMAL,
        killers=(
            "*/normal.yaml::batched-params[torch-*-grad]",
            "*/normal.yaml::batched-params[torch-*-grad_functional]",
        ),
        spared=("*-shapes]", "*-log_prob]"),
        message="∂/∂scale",
        kinds=(Kind.GRAD, Kind.VMAP),  # vmap items check the vmapped gradient too
    ),
    Mutant(
        name="float32-log-pdf",
        title="precision loss in float32: Normal.log_prob as log(pdf), underflowing in the tail",
        replicates="numpyro's Normal.log_prob leaving log space (exp, then log)",
        framework="numpyro",
        apply=numpyro_mutants.apply_normal_log_of_pdf,
        selection=NUMPYRO_NORMAL,
        killers=(
            "*/normal.yaml::far-tail-underflow[numpyro-float32-log_prob]",
            # float64 holds out to z ≈ 38; the generated edge scale = 1e-6 puts z at 1e6
            "*/normal.yaml::edge-scale-tiny[numpyro-float64-log_prob]",
        ),
        spared=("*/normal.yaml::far-tail-underflow[numpyro-float64-*",),
    ),
    Mutant(
        name="jit-only",
        title="a branch taken only under jax.jit drops the -log(scale) term",
        replicates="a tracer-guarded fast path in numpyro's Normal.log_prob",
        framework="numpyro",
        apply=numpyro_mutants.apply_normal_jit_only,
        selection=NUMPYRO_NORMAL,
        # NumPyro's items evaluate compiled, as its users run it: the log_prob items see it;
        # the eager item, op by op, takes the right branch.
        killers=("*/normal.yaml::batched-params[numpyro-*-log_prob]",),
        spared=("*-eager]",),
        kinds=(Kind.VALUE,),
    ),
    Mutant(
        name="eager-only",
        title="a branch taken only on concrete values drops the -log(scale) term",
        replicates="a concrete-value fast path (a Python branch on the array) in numpyro's Normal",
        framework="numpyro",
        apply=numpyro_mutants.apply_normal_eager_only,
        selection=NUMPYRO_NORMAL,
        killers=("*/normal.yaml::batched-params[numpyro-*-eager]",),
        spared=("*-log_prob]",),
        kinds=(Kind.EAGER_ONLY,),
    ),
    Mutant(
        name="scale-tril-upper",
        title="MultivariateNormal's scale_tril read as the upper factor (Σ = LᵀL)",
        replicates="a transposed parametrisation in torch's MultivariateNormal",
        framework="torch",
        apply=torch_mutants.apply_scale_tril_upper,
        selection=TORCH_MVN,
        killers=("*/gradients.yaml::mvn-tril-batched-nondiagonal[torch-*-log_prob]",),
        spared=("*-shapes]", "*/multivariate_normal.yaml::torchsharp-1334*"),
        kinds=(Kind.VALUE,),
    ),
    Mutant(
        name="batch-shape-from-loc",
        title="shape only: Normal.batch_shape is loc's shape, not the broadcast of loc and scale",
        replicates="batch-shape bookkeeping from one parameter in torch's Normal",
        framework="torch",
        apply=torch_mutants.apply_normal_batch_from_loc,
        selection=TORCH_NORMAL,
        killers=("*/normal.yaml::params-cross-broadcast[torch-*-shapes]",),
        spared=("*-log_prob]",),
        kinds=(Kind.SHAPE,),
    ),
    Mutant(
        name="draws-scale-5pc",
        title="draws only: Normal.sample and rsample with the scale 5 % too large",
        replicates="a sampler whose law is off while log_prob and its gradient are right",
        framework="torch",
        apply=torch_mutants.apply_normal_draws_scale,
        selection=TORCH_NORMAL_DRAWS,
        killers=("*/normal.yaml::scalar[torch-float64-sample_fit]",),
        spared=("*-sample_shapes]",),
        kinds=(Kind.FIT,),
    ),
    Mutant(
        name="draws-drop-sample-shape",
        title="draws only: Normal.sample and rsample ignore sample_shape",
        replicates="sample-shape bookkeeping read from the wrong argument",
        framework="torch",
        apply=torch_mutants.apply_normal_draws_ignore_sample_shape,
        selection=TORCH_NORMAL_DRAWS,
        killers=("*/normal.yaml::scalar[torch-float32-sample_shapes]",),
        kinds=(Kind.SHAPE,),
    ),
    Mutant(
        name="rsample-grad-half",
        title="draws' gradients only: Normal.rsample's pathwise gradient halved",
        replicates="a reparameterised sampler whose draws are right and whose derivatives are not",
        framework="torch",
        apply=torch_mutants.apply_normal_rsample_grad_half,
        selection=TORCH_NORMAL_PATHWISE,
        killers=("*/normal.yaml::scalar[torch-float32-rsample_grad]",),
        spared=("*-sample_fit]",),
        kinds=(Kind.GRAD,),
    ),
    Mutant(
        name="mvn-rsample-grad-coordinates-reversed",
        title="draws' gradients only: MultivariateNormal.rsample's coordinates' gradients reversed",
        replicates="a vector sampler's backward pass that indexes the event wrongly, invisible "
        "in the gradient of the coordinates' plain sum",
        framework="torch",
        apply=torch_mutants.apply_mvn_rsample_grad_coordinates_reversed,
        selection=TORCH_MVN_PATHWISE,
        killers=("*/multivariate_normal.yaml::cov-unbatched[torch-float32-rsample_grad]",),
        spared=("*-sample_fit]",),
        kinds=(Kind.GRAD,),
    ),
    Mutant(
        name="studentt-rsample-grad-df-half",
        title="draws' gradients only: StudentT.rsample with half its chi-square draw's "
        "pathwise gradient",
        replicates="a sampler of several noises whose derivative by a shape parameter is off "
        "where the law has no moments to differentiate (judged by bounded test functions)",
        framework="torch",
        apply=torch_mutants.apply_studentt_rsample_chi2_grad_half,
        selection=TORCH_STUDENTT_PATHWISE,
        killers=("*/student_t.yaml::scalar[torch-float32-rsample_grad]",),
        spared=("*-sample_fit]",),
        kinds=(Kind.GRAD,),
    ),
    Mutant(
        name="gpytorch-mvn-rsample-grad-half",
        title="draws' gradients only: GPyTorch's MultivariateNormal.rsample with half its "
        "pathwise gradient",
        replicates="a root decomposition's backward pass off by a factor, where the draws "
        "follow no declared map and only their moments judge the derivatives",
        framework="gpytorch",
        apply=gpytorch_mutants.apply_mvn_rsample_grad_half,
        selection=(
            "--framework=gpytorch",
            "--family=MultivariateNormal",
            "--check=sample_fit,rsample_grad",
        ),
        killers=("*/multivariate_normal.yaml::cov-unbatched[gpytorch-float32-rsample_grad]",),
        spared=("*-sample_fit]",),
        kinds=(Kind.GRAD,),
    ),
    Mutant(
        name="dirichlet-rsample-grad-without-simplex-term",
        title="draws' gradients only: Dirichlet.rsample's backward pass without the simplex's "
        "−x·Σ term",
        replicates="a simplex sampler's backward pass of the class of pytorch/pytorch#4602 "
        "(Dirichlet.rsample's gradient wrong for more than two categories), judged in "
        "expectation: no draw shows the Gamma draws' sum its derivative depends on",
        link="https://github.com/pytorch/pytorch/pull/4602",
        framework="torch",
        apply=torch_mutants.apply_dirichlet_rsample_grad_without_simplex_term,
        selection=TORCH_DIRICHLET_PATHWISE,
        killers=("*/dirichlet.yaml::scalar-batch[torch-float32-rsample_grad]",),
        spared=("*-sample_fit]",),
        kinds=(Kind.GRAD,),
    ),
    Mutant(
        name="numpyro-rsample-grad-half",
        title="draws' gradients only: NumPyro's Normal.sample with half its pathwise gradient",
        replicates="a compiled reparameterised sampler whose draws are right and whose "
        "derivatives are not",
        framework="numpyro",
        apply=numpyro_mutants.apply_normal_rsample_grad_half,
        selection=NUMPYRO_NORMAL_PATHWISE,
        killers=("*/normal.yaml::scalar[numpyro-float32-rsample_grad]",),
        spared=("*-sample_fit]",),
        kinds=(Kind.GRAD,),
    ),
    Mutant(
        name="numpyro-beta-sample-grad-half",
        title="draws' gradients only: NumPyro's Beta.sample with half its pathwise gradient",
        replicates="a sampler of several noises (a Dirichlet's first coordinate) whose draws are "
        "right and whose derivatives are not, judged in expectation",
        framework="numpyro",
        apply=numpyro_mutants.apply_beta_sample_grad_half,
        selection=NUMPYRO_BETA_PATHWISE,
        killers=("*/beta.yaml::scalar[numpyro-float32-rsample_grad]",),
        spared=("*-sample_fit]",),
        kinds=(Kind.GRAD,),
    ),
    Mutant(
        name="one-hot-draws-probs-as-logits",
        title="draws only: OneHotCategorical.sample reads its probabilities as logits",
        replicates="a discrete vector sampler whose law is off while log_prob is right",
        framework="torch",
        apply=torch_mutants.apply_one_hot_draws_probs_as_logits,
        selection=TORCH_ONE_HOT_DRAWS,
        killers=("*/one_hot_categorical.yaml::probs-every-category[torch-float64-sample_fit]",),
        spared=("*-log_prob]",),
        kinds=(Kind.FIT,),
    ),
    Mutant(
        name="numpyro-draws-scale-5pc",
        title="draws only: NumPyro's Normal.sample with the scale 5 % too large",
        replicates="a compiled sampler whose law is off while log_prob and its gradient are right",
        framework="numpyro",
        apply=numpyro_mutants.apply_normal_draws_scale,
        selection=NUMPYRO_NORMAL_DRAWS,
        killers=("*/normal.yaml::scalar[numpyro-float64-sample_fit]",),
        spared=("*-sample_shapes]",),
        kinds=(Kind.FIT,),
    ),
    Mutant(
        name="normal-variance-unsquared",
        title="summaries only: Normal.variance returns the scale, not its square",
        replicates="a moment's formula off by a power while log_prob and draws are right",
        framework="torch",
        apply=torch_mutants.apply_normal_variance_unsquared,
        selection=TORCH_NORMAL_SUMMARIES,
        killers=("*/normal.yaml::scalar[torch-float32-moments]",),
        spared=("*-log_prob]",),
        kinds=(Kind.VALUE,),
    ),
    Mutant(
        name="normal-cdf-variance-as-scale",
        title="cdf only: Normal.cdf standardises by the variance, not the scale",
        replicates="a cdf's formula off while log_prob is right (torch's own Normal.cdf "
        "already loses its left tail: docs/findings/methods.md)",
        framework="torch",
        apply=torch_mutants.apply_normal_cdf_variance_as_scale,
        selection=TORCH_NORMAL_CDF,
        killers=("*/normal.yaml::scalar[torch-float32-cdf]",),
        spared=("*-log_prob]",),
        kinds=(Kind.VALUE,),
    ),
    Mutant(
        name="normal-icdf-variance-as-scale",
        title="icdf only: Normal.icdf scales the standard quantile by the variance",
        replicates="an icdf's formula off while log_prob and cdf are right (torch's own "
        "Normal.icdf already loses q below 1e-8: docs/findings/methods.md)",
        framework="torch",
        apply=torch_mutants.apply_normal_icdf_variance_as_scale,
        selection=TORCH_NORMAL_ICDF,
        killers=("*/normal.yaml::scalar[torch-float32-icdf]",),
        spared=("*-log_prob]",),
        kinds=(Kind.VALUE,),
    ),
    Mutant(
        name="numpyro-normal-entropy-constant",
        title="summaries only: NumPyro's Normal.entropy without its ½",
        replicates="an entropy with a wrong constant, compiled, while log_prob is right",
        framework="numpyro",
        apply=numpyro_mutants.apply_normal_entropy_constant,
        selection=NUMPYRO_NORMAL_SUMMARIES,
        killers=("*/normal.yaml::scalar[numpyro-float64-entropy]",),
        spared=("*-log_prob]",),
        kinds=(Kind.VALUE,),
    ),
    Mutant(
        name="kl-normal-flattened",
        title="KL only: torch's Normal-Normal rule flattens each side, so batches must agree",
        replicates="a KL rule with a batch reshape that works only when p's and q's batch "
        "shapes agree (the seed bugs' batched reshape, in kl_divergence)",
        framework="torch",
        apply=torch_mutants.apply_kl_normal_flattened,
        selection=TORCH_NORMAL_KL,
        killers=("*/kl/normal.yaml::normal-normal-cross-broadcast[torch-float32-kl]",),
        spared=("*-log_prob]", "*::normal-normal[torch-*", "*::normal-normal-equal[torch-*"),
        kinds=(Kind.RAISES,),
    ),
    Mutant(
        name="numpyro-kl-normal-log-ratio-sign",
        title="KL only: NumPyro's Normal-Normal rule adds the log variance ratio",
        replicates="a KL closed form with one term's sign flipped, compiled, its value right "
        "wherever the two scales agree",
        framework="numpyro",
        apply=numpyro_mutants.apply_kl_normal_log_ratio_sign,
        selection=NUMPYRO_NORMAL_KL,
        # At q = p the value is right (log 1 = 0) and the gradient by the scales is not.
        killers=(
            "*/kl/normal.yaml::normal-normal[numpyro-float64-kl]",
            "*/kl/normal.yaml::normal-normal-equal[numpyro-float64-kl]",
        ),
        spared=("*-log_prob]",),
        kinds=(Kind.VALUE, Kind.GRAD),
    ),
)

BY_NAME: dict[str, Mutant] = {m.name: m for m in CATALOGUE}


class UnknownMutant(KeyError):
    def __str__(self) -> str:
        from conformance.names import unknown_name

        return unknown_name("mutant", self.args[0], BY_NAME, "is no")


def get(name: str) -> Mutant:
    try:
        return BY_NAME[name]
    except KeyError:
        raise UnknownMutant(name) from None


def activate(name: str) -> Patcher:
    """Apply mutant ``name`` to the frameworks imported in this process; returns the undo."""
    patch = Patcher()
    get(name).apply(patch)
    return patch


__all__ = ["BY_NAME", "CATALOGUE", "ENV", "Mutant", "Patcher", "UnknownMutant", "activate", "get"]
