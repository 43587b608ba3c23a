"""conformance/registry/kl_pairs.yaml lists exactly the KL rules each installed framework
registers: a rule added or dropped upstream fails here until the file (and the oracle) follow."""

from __future__ import annotations

import pytest

from conformance.registry.kl_pairs import kl_rules


def _listed(framework: str) -> set[tuple[str, str]]:
    return {(rule.p, rule.q) for rule in kl_rules()[framework]}


def test_torch_rules_are_the_registry_keys() -> None:
    kl = pytest.importorskip("torch.distributions.kl")
    # Importing GPyTorch registers rules for its own classes in torch's registry: torch's are
    # the rules between torch's classes.
    registered = {
        (p.__name__, q.__name__)
        for p, q in kl._KL_REGISTRY
        if p.__module__.startswith("torch.") and q.__module__.startswith("torch.")
    }
    assert _listed("torch") == registered


def test_numpyro_rules_are_the_dispatch_signatures() -> None:
    kl = pytest.importorskip("numpyro.distributions.kl")
    registered = {(p.__name__, q.__name__) for p, q in kl.kl_divergence.funcs}
    assert _listed("numpyro") == registered


def test_gpytorch_rules_are_its_classes_in_torchs_registry() -> None:
    kl = pytest.importorskip("torch.distributions.kl")
    pytest.importorskip("gpytorch")
    registered = {
        (p.__name__, q.__name__)
        for p, q in kl._KL_REGISTRY
        if p.__module__.startswith("gpytorch.") or q.__module__.startswith("gpytorch.")
    }
    assert _listed("gpytorch") == registered
