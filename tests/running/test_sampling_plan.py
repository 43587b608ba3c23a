"""Which sampling items the plan makes (conformance/plan/planner.py): written cases with valid
parameters only, once per file for the same parameters (sample_shapes: the same parameter
shapes), sample_shapes in the case's first dtype and sample_fit in its last, families with no
law of their draws held to shapes alone."""

from __future__ import annotations

from collections import Counter
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from conformance import reference
from conformance.check_names import CheckName
from conformance.expect.materialize import float64_inputs
from conformance.plan.derived.edges import EDGE_TAG
from conformance.plan.planner import plan
from conformance.plan.specs import CheckSpec
from conformance.run.config.settings import Settings, parse_options

REPO = Path(__file__).resolve().parents[2]
FILES = ("normal.yaml", "lkj_cholesky.yaml", "horseshoe_prior.yaml", "geometric.yaml")


@cache
def _specs() -> tuple[CheckSpec, ...]:
    argv = [
        *(f"--cases={REPO / 'cases' / f}" for f in FILES),
        "--framework=torch,gpytorch",
        "--check=sample_shapes,sample_fit",
    ]
    found = plan(Settings.from_sources(parse_options(argv)[0], {}).selection, root=REPO)
    return tuple(s for s in found if isinstance(s, CheckSpec))


def _parameters(spec: CheckSpec, values: bool) -> tuple:
    params = float64_inputs(spec.case)[0]
    return tuple(
        (k, params[k].shape, params[k].tobytes() if values else b"") for k in sorted(params)
    )


def test_each_check_runs_in_one_dtype_on_written_valid_cases() -> None:
    specs = _specs()
    assert {s.check.name for s in specs} == {CheckName.SAMPLE_SHAPES, CheckName.SAMPLE_FIT}
    for spec in specs:
        want = spec.case.spec.dtypes[0 if spec.check.name == CheckName.SAMPLE_SHAPES else -1]
        assert spec.dtype == want, spec.name
        assert EDGE_TAG not in spec.case.spec.tags, spec.name
        family = reference.get_family(spec.case.family)
        params, value = float64_inputs(spec.case)
        assert np.all(family.evaluate(params, value, spec.case.parametrization).params_valid)


def test_cases_with_the_same_parameters_share_an_item() -> None:
    keys = Counter(
        (
            s.case.file,
            s.adapter.name,
            s.check.name,
            _parameters(s, values=s.check.name == CheckName.SAMPLE_FIT),
        )
        for s in _specs()
    )
    assert max(keys.values()) == 1, keys.most_common(1)


def test_a_family_without_a_law_gets_shapes_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """A family that declares no law (``no_law``, with why) gets sample_shapes and no
    sample_fit; Geometric's (a scalar pmf) is fitted, and a discrete vector law (Multinomial)
    on its counts' projections."""
    monkeypatch.setattr(reference.get_family("HorseshoePrior"), "no_law", "for this test")
    by_family = {(s.case.family, s.check.name) for s in _specs.__wrapped__()}  # planned afresh
    assert ("HorseshoePrior", CheckName.SAMPLE_SHAPES) in by_family
    assert ("HorseshoePrior", CheckName.SAMPLE_FIT) not in by_family
    assert ("Geometric", CheckName.SAMPLE_FIT) in by_family
    assert ("LKJCholesky", CheckName.SAMPLE_FIT) in by_family
    argv = [f"--cases={REPO / 'cases' / 'multinomial.yaml'}", "--framework=torch",
            "--check=sample_shapes,sample_fit"]  # fmt: skip
    found = plan(Settings.from_sources(parse_options(argv)[0], {}).selection, root=REPO)
    checks = {s.check.name for s in found if isinstance(s, CheckSpec)}
    assert checks == {CheckName.SAMPLE_SHAPES, CheckName.SAMPLE_FIT}


def test_every_family_that_draws_has_a_law() -> None:
    """No family's draws are held to their shapes alone: each declares a CDF, a pmf or
    projections with known laws (HorseshoePrior the horseshoe's, though its log_prob is
    GPyTorch's approximation)."""
    lawless = [n for n, f in reference.FAMILIES.items() if not f.no_draws and not f.law()]
    assert lawless == []
    assert ("HorseshoePrior", CheckName.SAMPLE_FIT) in {
        (s.case.family, s.check.name) for s in _specs()
    }


def test_families_with_nothing_to_draw_get_no_sampling_items() -> None:
    """ImproperUniform (improper) and IntervalCensoredDistribution (its values are intervals,
    its draws latent values) declare ``no_draws``: NumPyro, which has both, gets no sampling
    item for them, and a family beside them in the same run still does."""
    argv = [
        *(
            f"--cases={REPO / 'cases' / f}"
            for f in ("improper_uniform.yaml", "interval_censored_distribution.yaml", "normal.yaml")
        ),
        "--framework=numpyro",
        "--check=sample_shapes,sample_fit",
    ]
    found = plan(Settings.from_sources(parse_options(argv)[0], {}).selection, root=REPO)
    families = {s.case.family for s in found if isinstance(s, CheckSpec)}
    assert families == {"Normal"}
    for name in ("ImproperUniform", "IntervalCensoredDistribution"):
        assert reference.get_family(name).no_draws


def _rsample_grad_items(files: tuple[str, ...], frameworks: str) -> list[CheckSpec]:
    """The rsample_grad items the plan makes of the shipped case ``files``."""
    argv = [
        *(f"--cases={REPO / 'cases' / f}" for f in files),
        f"--framework={frameworks}",
        "--check=rsample_grad",
    ]
    found = plan(Settings.from_sources(parse_options(argv)[0], {}).selection, root=REPO)
    return [s for s in found if isinstance(s, CheckSpec)]


def test_rsample_grad_items_are_float32_continuous_and_where_an_adapter_offers_them() -> None:
    """rsample_grad: float32 only (a case without it gets none), a continuous univariate law only
    (Delta's point mass and Geometric's pmf get none), and only on adapters with pathwise
    draws (torch and NumPyro; GPyTorch offers none)."""
    found = _rsample_grad_items(
        ("normal.yaml", "delta.yaml", "geometric.yaml", "kumaraswamy.yaml"),
        "torch,gpytorch,numpyro",
    )
    assert {s.case.family for s in found} == {"Normal", "Kumaraswamy"}
    assert {s.adapter.name for s in found} == {"torch", "numpyro"}
    assert {s.dtype for s in found} == {"float32"}
    # Kumaraswamy's float64-only case (next-to-one-float64) has no float32: no item.
    assert not [s for s in found if s.case.id == "next-to-one-float64"]
    assert any(s.case.id == "scalar" and s.case.family == "Kumaraswamy" for s in found)


def test_rsample_grad_items_for_multivariate_draws_with_a_known_map_of_noise() -> None:
    """MultivariateNormal's draws are loc + chol(Σ)·ε in every framework that offers pathwise
    draws, so rsample_grad has items for it (float32, one per case); Dirichlet's draws have
    no map the oracle knows (normalised Gamma draws), but the oracle knows their moments, so
    it has items judged in expectation, as do ProjectedNormal, LKJ and LKJCholesky; Wishart
    has its map (judged draw by draw) and moments too (its df, which reaches the draw through
    a χ² draw, judged in expectation); so has WishartCholesky (its factor's moments), though
    no pinned framework reparameterises its draws."""
    found = _rsample_grad_items(
        ("multivariate_normal.yaml", "dirichlet.yaml", "projected_normal.yaml"), "torch,numpyro"
    )
    assert {s.case.family for s in found} == {"MultivariateNormal", "Dirichlet", "ProjectedNormal"}
    assert {s.adapter.name for s in found} == {"torch", "numpyro"}
    assert {s.dtype for s in found} == {"float32"}
    assert reference.get_family("MultivariateNormal").has_pathwise()
    for name in ("Dirichlet", "ProjectedNormal", "LKJ", "LKJCholesky"):
        family = reference.get_family(name)
        assert not family.has_pathwise() and family.has_pathwise_moments(), name
    wishart, factor = reference.get_family("Wishart"), reference.get_family("WishartCholesky")
    assert wishart.has_pathwise() and wishart.has_pathwise_moments()
    assert factor.has_pathwise() and factor.has_pathwise_moments()
