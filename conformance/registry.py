"""Family registry: how each framework spells each family, as data.

The oracle (``reference/``) owns the mathematics — parameter names, event ranks, domains. This
module owns the frameworks' side: which constructor builds a family in a given
parametrisation, what each parameter is called there, and what a framework does not offer.
Adapters read it; nothing else should hard-code a framework's naming.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import reference


@dataclass(frozen=True)
class Binding:
    """How one framework builds one family for some of its parametrisations."""

    constructor: str
    rename: Mapping[str, str] = field(default_factory=dict)
    parametrizations: tuple[str, ...] | None = None  # None: every parametrisation of the family
    options: Mapping[str, str] = field(default_factory=dict)
    note: str = ""

    def covers(self, parametrization: str) -> bool:
        return self.parametrizations is None or parametrization in self.parametrizations

    def keyword(self, param: str) -> str:
        return self.rename.get(param, param)


Bindings = Mapping[str, tuple[Binding, ...]]

_TORCH_MVN = Binding("torch.distributions.MultivariateNormal")
_GPYTORCH_MVN = "gpytorch.distributions.MultivariateNormal"

#: framework (adapter name) → family → bindings.
BINDINGS: dict[str, Bindings] = {
    "torch": {
        "Normal": (Binding("torch.distributions.Normal"),),
        "MultivariateNormal": (_TORCH_MVN,),
        "Bernoulli": (Binding("torch.distributions.Bernoulli"),),
    },
    "numpyro": {
        "Normal": (Binding("numpyro.distributions.Normal"),),
        "MultivariateNormal": (Binding("numpyro.distributions.MultivariateNormal"),),
        "Bernoulli": (
            Binding("numpyro.distributions.BernoulliProbs", parametrizations=("probs",)),
            Binding("numpyro.distributions.BernoulliLogits", parametrizations=("logits",)),
        ),
    },
    # GPyTorch's MultivariateNormal takes (mean, covariance); each covariance representation is
    # its own adapter so that every case runs through the dense tensor and each LinearOperator.
    "gpytorch": {
        "MultivariateNormal": (
            Binding(
                _GPYTORCH_MVN,
                rename={"loc": "mean"},
                parametrizations=("covariance_matrix",),
                options={"operator": "tensor"},
            ),
        ),
    },
    "gpytorch.dense": {
        "MultivariateNormal": (
            Binding(
                _GPYTORCH_MVN,
                rename={"loc": "mean"},
                parametrizations=("covariance_matrix",),
                options={"operator": "DenseLinearOperator"},
            ),
        ),
    },
    "gpytorch.root": {
        "MultivariateNormal": (
            Binding(
                _GPYTORCH_MVN,
                rename={"loc": "mean", "scale_tril": "covariance_matrix"},
                parametrizations=("scale_tril",),
                options={"operator": "RootLinearOperator"},
                note="covariance = RootLinearOperator(scale_tril), i.e. L Lᵀ",
            ),
        ),
    },
    "gpytorch.diag": {
        "MultivariateNormal": (
            Binding(
                _GPYTORCH_MVN,
                rename={"loc": "mean"},
                parametrizations=("covariance_matrix",),
                options={"operator": "DiagLinearOperator", "requires": "diagonal"},
                note="covariance = DiagLinearOperator(diagonal); diagonal covariances only",
            ),
        ),
    },
}


def find_binding(bindings: Bindings, family: str, parametrization: str) -> Binding | str:
    """The binding for ``family`` in ``parametrization``, or the reason there is none."""
    options = bindings.get(family)
    if not options:
        return f"has no {family}"
    for binding in options:
        if binding.covers(parametrization):
            return binding
    offered = sorted({p for b in options for p in (b.parametrizations or ())})
    return f"offers {family} by {', '.join(offered)} only, not by {parametrization}"


def known_families() -> list[str]:
    return reference.family_names()
