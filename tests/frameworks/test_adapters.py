"""Each adapter, for real: builds its framework's distribution, reports shapes, evaluates
log_prob in the requested dtype, and agrees with the oracle."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import make_case, run_check, subject_for

from conformance.adapters import AdapterLoadError, all_adapters, load_adapter_class

NORMAL = """
- id: n
  family: Normal
  params:
    loc: {generator: normal, shape: [3, 1], seed: 1}
    scale: {generator: positive, shape: [4], seed: 2}
  value: {sample: {seed: 3, sample_shape: [2]}}
"""
BERN_PROBS = """
- id: b
  family: Bernoulli
  params: {probs: {generator: probability, shape: [5], seed: 1}}
  value: {sample: {seed: 2, sample_shape: [3]}}
"""
BERN_LOGITS = """
- id: b
  family: Bernoulli
  params: {logits: {generator: normal, shape: [5], seed: 1}}
  value: {sample: {seed: 2, sample_shape: [3]}}
"""
MVN = {
    "covariance_matrix": """
- id: m
  family: MultivariateNormal
  params:
    loc: {generator: normal, shape: [2, 3], seed: 1}
    covariance_matrix: {generator: spd, shape: [3, 3], seed: 2}
  value: {sample: {seed: 3, sample_shape: [4]}}
""",
    "scale_tril": """
- id: m
  family: MultivariateNormal
  params:
    loc: {generator: normal, shape: [2, 3], seed: 1}
    scale_tril: {generator: cholesky, shape: [3, 3], seed: 2}
  value: {sample: {seed: 3, sample_shape: [4]}}
""",
    "precision_matrix": """
- id: m
  family: MultivariateNormal
  params:
    loc: {generator: normal, shape: [2, 3], seed: 1}
    precision_matrix: {generator: spd, shape: [3, 3], seed: 2}
  value: {sample: {seed: 3, sample_shape: [4]}}
""",
}
MVN_DIAG = """
- id: d
  family: MultivariateNormal
  parametrization: covariance_matrix
  params:
    loc: {generator: normal, shape: [2, 3], seed: 1}
    covariance_matrix: {generator: spd, shape: [2, 3, 3], seed: 2, diagonal: true}
  value: {sample: {seed: 3, sample_shape: [4]}}
"""

DTYPES = ["float32", "float64"]


def assert_passes(case_text: str, adapter: str, dtype: str) -> None:
    case = make_case(case_text)
    for check in ("shapes", "log_prob"):
        result = run_check(case, adapter, dtype, check)
        assert result.passed, result.message
    metrics = run_check(case, adapter, dtype, "log_prob").metrics
    assert metrics["compared"] == int(
        np.prod(subject_for(case, adapter, dtype).expected.log_prob_shape)
    )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("adapter", ["torch", "numpyro"])
@pytest.mark.parametrize(
    "case_text",
    [NORMAL, BERN_PROBS, BERN_LOGITS, *MVN.values()],
    ids=["normal", "probs", "logits", "cov", "tril", "prec"],
)
def test_torch_and_numpyro_match_oracle(case_text: str, adapter: str, dtype: str) -> None:
    assert_passes(case_text, adapter, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    ("adapter", "case_text", "operator"),
    [
        ("gpytorch", MVN["covariance_matrix"], "DenseLinearOperator"),
        ("gpytorch.dense", MVN["covariance_matrix"], "DenseLinearOperator"),
        ("gpytorch.root", MVN["scale_tril"], "RootLinearOperator"),
        ("gpytorch.diag", MVN_DIAG, "DiagLinearOperator"),
    ],
)
def test_gpytorch_covariance_forms(adapter: str, case_text: str, operator: str, dtype: str) -> None:
    assert_passes(case_text, adapter, dtype)
    subject = subject_for(make_case(case_text), adapter, dtype)
    dist = subject.build()
    assert type(dist.lazy_covariance_matrix).__name__ == operator
    assert dist.loc.dtype == getattr(__import__("torch"), dtype)


def test_gpytorch_plain_adapter_passes_a_tensor() -> None:
    import torch

    subject = subject_for(make_case(MVN["covariance_matrix"]), "gpytorch", "float64")
    args = subject.params()
    dist = subject.adapter.construct(subject.binding, args)
    assert isinstance(args["covariance_matrix"], torch.Tensor)
    assert dist.batch_shape == torch.Size([2])


def test_gpytorch_diag_refuses_a_non_diagonal_covariance() -> None:
    adapter = all_adapters()["gpytorch.diag"]
    case = make_case(MVN["covariance_matrix"])
    binding = adapter.binding(case.family, case.parametrization)
    from conformance.expect.materialize import float64_inputs

    reason = adapter.unsupported_inputs(binding, float64_inputs(case)[0])
    assert reason and "not diagonal" in reason


@pytest.mark.parametrize(
    ("adapter", "family", "parametrization", "fragment"),
    [
        ("gpytorch", "Normal", "loc_scale", "gpytorch has no Normal"),
        ("gpytorch", "MultivariateNormal", "precision_matrix", "by covariance_matrix only"),
        ("gpytorch.root", "MultivariateNormal", "covariance_matrix", "by scale_tril only"),
    ],
)
def test_unsupported_bindings_say_why(adapter, family, parametrization, fragment) -> None:
    reason = all_adapters()[adapter].binding(family, parametrization)
    assert isinstance(reason, str) and fragment in reason


def test_a_class_the_installed_release_lacks_is_not_offered() -> None:
    """On an older release a binding can name a class added later (NumPyro's Levy): the
    family is then not offered there, with the release and the class named, not a failure."""
    from conformance.registry import Binding

    adapter = all_adapters()["torch"]
    present = Binding(constructor="torch.distributions.Normal")
    absent = Binding(constructor="torch.distributions.NormalAddedInTorch99")
    missing_module = Binding(constructor="no_such_package_here.Normal")
    adapter = type(adapter)()
    adapter.bindings = {"Normal": (present,), "Later": (absent,), "Elsewhere": (missing_module,)}
    assert adapter.binding("Normal", "loc_scale") == present
    reason = adapter.binding("Later", "loc_scale")
    assert isinstance(reason, str)
    assert f"torch {adapter.version()} has no torch.distributions.NormalAddedInTorch99" in reason
    # A module that does not import is the adapter's to report (unavailable), not a lack.
    assert adapter.binding("Elsewhere", "loc_scale") == missing_module


def test_numpyro_x64_does_not_leak_into_float32() -> None:
    import jax.numpy as jnp

    case = make_case(MVN["covariance_matrix"])
    f64 = subject_for(case, "numpyro", "float64")
    with f64.adapter.precision("float64"):
        lp64 = f64.numpy(f64.log_prob(f64.build()))
    assert lp64.dtype == np.float64
    assert jnp.zeros(()).dtype == jnp.float32  # x64 is off again outside the item
    f32 = subject_for(case, "numpyro", "float32")
    with f32.adapter.precision("float32"):
        lp32 = f32.numpy(f32.log_prob(f32.build()))
    assert lp32.dtype == np.float32


def test_numpyro_float32_stays_float32_under_global_x64(monkeypatch) -> None:
    import jax

    jax.config.update("jax_enable_x64", True)
    try:
        result = run_check(make_case(NORMAL), "numpyro", "float32", "shapes")
        assert result.passed, result.message
    finally:
        jax.config.update("jax_enable_x64", False)


def test_torch_keeps_dtype_and_integer_values() -> None:
    import torch

    subject = subject_for(make_case(NORMAL), "torch", "float32")
    assert subject.params()["loc"].dtype == torch.float32
    lp = subject.log_prob(subject.build())
    assert lp.dtype == torch.float32


def test_missing_framework_is_unavailable_with_reason() -> None:
    from fake_adapters import MissingAdapter

    reason = MissingAdapter().unavailable()
    assert reason and "no-such-framework is not importable" in reason
    assert MissingAdapter().version() == "not installed"


def test_cuda_absent_gives_a_reason() -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    assert "CUDA" in all_adapters()["torch"].device_unavailable("cuda")
    assert "GPU" in all_adapters()["numpyro"].device_unavailable("cuda")


def test_adapter_specs_are_checked() -> None:
    with pytest.raises(AdapterLoadError, match="cannot load adapter"):
        load_adapter_class("no_such_module:Thing")
    with pytest.raises(AdapterLoadError, match="not a subclass"):
        load_adapter_class("pathlib:Path")
    assert load_adapter_class("fake_adapters:NanAdapter").name == "fake.nan"
