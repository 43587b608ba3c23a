"""Reproducer scripts run standalone (framework + NumPy only) and reproduce the failure."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import make_case, replaced, subject_for

from conformance.checks import CHECKS
from conformance.reproducers import render as reproducer

NUMPYRO_BUG = """
- id: value-batch-larger
  family: MultivariateNormal
  parametrization: covariance_matrix
  params:
    loc: {generator: normal, shape: [3], seed: 61}
    covariance_matrix: {generator: spd, shape: [2, 3, 3], seed: 62}
  value: {generator: normal, shape: [5, 1, 3], seed: 63}
"""
HEALTHY = """
- id: healthy
  family: Bernoulli
  params: {logits: {generator: normal, shape: [4], seed: 1}}
  value: {sample: {seed: 2, sample_shape: [3]}}
"""


def run_script(source: str, tmp_path: Path) -> subprocess.CompletedProcess:
    path = tmp_path / "repro.py"
    path.write_text(source)
    # -I: isolated mode, so nothing from this checkout (or PYTHONPATH) is importable.
    code = "import runpy, sys; runpy.run_path(sys.argv[1], run_name='__main__'); "
    return subprocess.run(
        [sys.executable, "-I", "-c", code + "", str(path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
        timeout=300,
    )


def ruff_check(path: Path) -> subprocess.CompletedProcess:
    """``ruff check`` of ``path`` (a script or a folder of them) with the project's own rules:
    a reproducer goes into upstream bug reports and CI logs."""
    repo = Path(__file__).resolve().parents[2]
    config = str(repo / "pyproject.toml")
    return subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--config", config, str(path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_real_numpyro_failure_reproduces_standalone(tmp_path: Path) -> None:
    subject = subject_for(make_case(NUMPYRO_BUG), "numpyro", "float32")
    source = reproducer.render(subject, CHECKS["log_prob"], "log_prob raised ZeroDivisionError")
    assert "conformance" not in source.split('"""', 2)[2]  # no import of the suite
    proc = run_script(source, tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "MISMATCH: raised ZeroDivisionError" in proc.stdout


def test_value_mismatch_reproduces_and_healthy_does_not(tmp_path: Path) -> None:
    for adapter in ("torch", "numpyro"):
        subject = subject_for(make_case(HEALTHY), adapter, "float64")
        ok = run_script(reproducer.render(subject, CHECKS["log_prob"], "x"), tmp_path)
        assert ok.returncode == 0 and "OK: no mismatch reproduced" in ok.stdout, (
            ok.stdout + ok.stderr
        )
        wrong = dataclasses.replace(subject.expected, log_prob=subject.expected.log_prob + 1e-3)
        bad = run_script(
            reproducer.render(replaced(subject, expected=wrong), CHECKS["log_prob"], "x"),
            tmp_path,
        )
        assert bad.returncode == 1
        assert "MISMATCH: 12 of 12 elements outside tolerance" in bad.stdout
        assert "expected" in bad.stdout and "actual" in bad.stdout


def test_shape_mismatch_reproduces(tmp_path: Path) -> None:
    subject = subject_for(make_case(HEALTHY), "torch", "float32")
    wrong = dataclasses.replace(subject.expected, batch_shape=(1, 4))
    proc = run_script(
        reproducer.render(replaced(subject, expected=wrong), CHECKS["shapes"], "x"), tmp_path
    )
    assert proc.returncode == 1 and "MISMATCH: shape mismatch" in proc.stdout


def test_gpytorch_operator_is_rebuilt(tmp_path: Path) -> None:
    case = make_case(NUMPYRO_BUG)
    source = reproducer.render(
        subject_for(case, "gpytorch.dense", "float32"), CHECKS["log_prob"], "x"
    )
    # The adapter's own construction, written out (one rule for the item and its script).
    assert "def named_operator(x, name: str):" in source
    assert "covariance_matrix=named_operator(covariance_matrix, 'DenseLinearOperator')" in source
    proc = run_script(source, tmp_path)
    assert proc.returncode == 1 and "MISMATCH: raised RuntimeError: LinearOperator" in proc.stdout


# diag(kron(diag(1, 0.5), diag(2, 6))): diagonal, block-diagonal and a Kronecker product at once.
STRUCTURED_MVN = """
- id: structured
  family: MultivariateNormal
  parametrization: covariance_matrix
  params:
    loc: [0.1, -0.2, 0.3, 0.0]
    covariance_matrix: [[2.0, 0, 0, 0], [0, 6.0, 0, 0], [0, 0, 1.0, 0], [0, 0, 0, 3.0]]
  value: {generator: normal, shape: [3, 4], seed: 5}
"""


ROOT_MVN = """
- id: root
  family: MultivariateNormal
  parametrization: scale_tril
  params:
    loc: [0.1, -0.2, 0.3]
    scale_tril: [[1.0, 0, 0], [0.5, 2.0, 0], [-0.3, 0.2, 0.7]]
  value: {generator: normal, shape: [3, 3], seed: 5}
"""


@pytest.mark.parametrize(
    "adapter",
    [
        "gpytorch",
        "gpytorch.dense",
        "gpytorch.root",
        "gpytorch.diag",
        "gpytorch.blockdiag",
        "gpytorch.kronecker",
    ],
)
def test_each_gpytorch_operator_script_builds_what_the_adapter_built(tmp_path, adapter) -> None:
    """Each operator's script takes the adapter's path: its log_prob passes the item's own
    comparison, and it constructs the same operator type the adapter did."""
    case = make_case(ROOT_MVN if adapter == "gpytorch.root" else STRUCTURED_MVN)
    subject = subject_for(case, adapter, "float64")
    built = subject.build()
    source = reproducer.render(subject, CHECKS["log_prob"], "x")
    source = source.replace(
        "print('OK: no mismatch reproduced')",
        "print('OK: no mismatch reproduced', type(dist.covariance_matrix).__name__, "
        "type(dist.lazy_covariance_matrix).__name__)",
    )
    proc = run_script(source, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert type(built.lazy_covariance_matrix).__name__ in proc.stdout.split()

    rng = np.random.default_rng(0)
    for array in (
        rng.standard_normal(7).astype(np.float32),
        rng.standard_normal((60, 60)),
        np.arange(5),
    ):
        expr = reproducer.array_literal(array)
        namespace = {"np": np, "io": __import__("io"), "base64": __import__("base64")}
        back = eval(expr, namespace)  # the script's own expression, evaluated the same way
        assert back.dtype == array.dtype and np.array_equal(back, array)
    assert "b64decode" in reproducer.array_literal(np.zeros(5000))


MVN_TRIL = """
- id: tril
  family: MultivariateNormal
  parametrization: scale_tril
  params:
    loc: {generator: normal, shape: [2, 3], seed: 1}
    scale_tril: {generator: cholesky, shape: [3, 3], seed: 2}
  value: {sample: {seed: 3, sample_shape: [2]}}
"""


def test_gradient_reproducers_for_each_method(tmp_path: Path) -> None:
    from conformance.answers.gradients import GradExpectation

    case = make_case(MVN_TRIL)
    for adapter, method in [
        ("torch", "grad"),
        ("torch", "grad_functional"),
        ("numpyro", "grad"),
        ("numpyro", "grad_functional"),
        ("gpytorch.root", "grad"),
    ]:
        subject = subject_for(case, adapter, "float64")
        ok = run_script(reproducer.render(subject, CHECKS[method], "x"), tmp_path)
        assert ok.returncode == 0 and "OK: no mismatch reproduced" in ok.stdout, (
            adapter,
            method,
            ok.stdout + ok.stderr,
        )
        grad = subject.gradient
        halved = dataclasses.replace(
            grad.raw, grads={k: v * 0.5 for k, v in grad.raw.grads.items()}
        )
        # The script embeds the subject's own expectation: a wrong one must make it fail.
        wrong = subject_for(case, adapter, "float64")
        wrong.expectations.__dict__["gradient"] = GradExpectation(halved, grad.structure)
        source = reproducer.render(wrong, CHECKS[method], "x")
        bad = run_script(source, tmp_path)
        assert bad.returncode == 1 and "MISMATCH: gradient outside tolerance" in bad.stdout, (
            bad.stdout + bad.stderr
        )


def test_numpyro_scripts_take_the_items_compiled_path_and_eager_items_do_not(
    tmp_path: Path,
) -> None:
    case = make_case(MVN_TRIL)
    subject = subject_for(case, "numpyro", "float32")
    for check in ("log_prob", "shapes", "grad", "grad_functional"):
        source = reproducer.render(subject, CHECKS[check], "x")
        assert "jax.jit" in source.split('"""', 2)[2], check
        ok = run_script(source, tmp_path)
        assert ok.returncode == 0 and "OK: no mismatch reproduced" in ok.stdout, (
            check,
            ok.stdout + ok.stderr,
        )
    eager = reproducer.render(subject, CHECKS["eager"], "x")
    assert "jax.jit" not in eager.split('"""', 2)[2]
    assert run_script(eager, tmp_path).returncode == 0
    # A compiled script still judges with the subject's numbers: a wrong expectation fails it.
    shifted = dataclasses.replace(subject.expected, log_prob=subject.expected.log_prob + 1.0)
    bad = run_script(
        reproducer.render(replaced(subject, expected=shifted), CHECKS["log_prob"], "x"), tmp_path
    )
    assert bad.returncode == 1 and "MISMATCH" in bad.stdout, bad.stdout + bad.stderr


def test_a_script_says_ok_once_at_the_end_and_never_before_a_mismatch(tmp_path: Path) -> None:
    subject = subject_for(make_case(HEALTHY), "numpyro", "float64")
    ok = run_script(reproducer.render(subject, CHECKS["log_prob"], "x"), tmp_path)
    assert ok.returncode == 0 and ok.stdout.count("OK: no mismatch reproduced") == 1
    assert ok.stdout.rstrip().endswith("OK: no mismatch reproduced")
    shifted = dataclasses.replace(subject.expected, log_prob=subject.expected.log_prob + 1.0)
    bad = run_script(
        reproducer.render(replaced(subject, expected=shifted), CHECKS["log_prob"], "x"), tmp_path
    )
    assert bad.returncode == 1 and "MISMATCH" in bad.stdout and "OK" not in bad.stdout


def test_boolean_arrays_are_written_for_every_numpy_the_project_allows() -> None:
    literal = reproducer.array_literal(np.array([True, False]))
    assert literal == "np.array([True, False], dtype='bool')"  # np.bool is gone on 1.24-1.26
    assert eval(literal, {"np": np}).dtype == np.bool_


def _numpy_lower_bound() -> str:
    import tomllib

    repo = Path(__file__).resolve().parents[2]
    deps = tomllib.loads((repo / "pyproject.toml").read_text())["project"]["dependencies"]
    return next(d for d in deps if d.startswith("numpy>=")).removeprefix("numpy>=")


def test_torch_scripts_run_on_the_oldest_numpy_the_project_allows(tmp_path: Path) -> None:
    """``numpy>=1.26`` is allowed, so a reproducer must run there too (``np.bool``, missing on
    1.24-1.26, once raised before the script's try block). torch and GPyTorch run on NumPy 1.26;
    JAX 0.10 needs NumPy 2, so NumPyro's scripts meet only NumPy 2 and are run by the tests
    above."""
    oldest = _numpy_lower_bound()
    site = tmp_path / "numpy-oldest"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--target",
            site,
            f"numpy=={oldest}.*",
        ],
        check=True,
        timeout=600,
    )
    case = make_case(MVN_TRIL)
    for adapter in ("torch", "gpytorch.root"):
        subject = subject_for(case, adapter, "float32")
        for method in ("shapes", "log_prob", "grad", "grad_functional"):
            source = reproducer.render(subject, CHECKS[method], "x")
            if source is None:
                continue
            path = tmp_path / "repro.py"
            path.write_text(source)
            code = (
                "import sys, runpy, numpy; print('numpy', numpy.__version__); "
                "runpy.run_path(sys.argv[1], run_name='__main__')"
            )
            proc = subprocess.run(
                [sys.executable, "-c", code, str(path)],
                env={**os.environ, "PYTHONPATH": str(site)},
                cwd=tmp_path,
                capture_output=True,
                text=True,
                check=False,
                timeout=300,
            )
            shown = f"{adapter} {method}: {proc.stdout}{proc.stderr}"
            assert f"numpy {oldest}." in proc.stdout, shown
            assert proc.returncode == 0 and "OK: no mismatch reproduced" in proc.stdout, shown


def test_scripts_are_ruff_clean(tmp_path: Path) -> None:
    """A reproducer goes into upstream bug reports and CI logs: it passes the project's own
    lint rules (ruff check: imports sorted and all used, zip strict, ...). A sample over every
    body and dialect: shapes, log_prob (literal and base64 arrays), both gradient methods, the
    compiled NumPyro path, GPyTorch operators, draws (traced and drawn), their fit and their
    pathwise derivatives."""
    big = """
- id: big
  family: Normal
  params: {loc: {generator: normal, shape: [60, 40], seed: 3}, scale: 1.0}
  value: {generator: normal, shape: [60, 40], seed: 4}
"""
    scripts = []
    for text, adapters in ((MVN_TRIL, ("torch", "numpyro", "gpytorch.root")), (big, ("torch",))):
        case = make_case(text)
        for adapter in adapters:
            subject = subject_for(case, adapter, "float32")
            for method in (
                "shapes",
                "log_prob",
                "grad",
                "grad_functional",
                "sample_shapes",
                "sample_fit",
                "rsample_grad",
            ):
                source = reproducer.render(subject, CHECKS[method], "x")
                if source is not None:
                    scripts.append(source)
    assert len(scripts) >= 12 and any("base64.b64decode" in s for s in scripts)
    assert any("def univariate(" in s for s in scripts)  # the fit's statistics
    assert any("jax.eval_shape" in s for s in scripts)  # NumPyro's traced shapes
    assert any("EXPECTED_AT" in s for s in scripts)  # pathwise derivatives
    for i, source in enumerate(scripts):
        (tmp_path / f"repro_{i}.py").write_text(source)
    proc = ruff_check(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_import_block_is_isort_s_order_whatever_the_hash_seed(tmp_path: Path) -> None:
    """A module imported plainly and with an alias (``jax.numpy``, ``jax.numpy as jnp``) once
    came out in the set's hash-seeded order: two runs of the same code wrote different scripts
    (3 of a full run's 2,792). Each hash seed must give isort's order."""
    code = (
        "from conformance.reproducers.render import import_block\n"
        "print(import_block('', ['import jax.numpy as jnp', 'import numpy as np',"
        " 'import jax.numpy', 'import jax']))"
    )
    blocks = set()
    for seed in range(8):
        env = {**os.environ, "PYTHONHASHSEED": str(seed)}
        proc = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
        )
        blocks.add(proc.stdout)
    assert blocks == {
        "import sys\n\nimport jax\nimport jax.numpy\nimport jax.numpy as jnp\nimport numpy as np\n"
    }
    script = tmp_path / "imports.py"
    script.write_text(blocks.pop() + "\nprint(jax, jax.numpy, jnp, np, sys)\n", encoding="utf-8")
    ruff = [sys.executable, "-m", "ruff", "check", "--isolated", "--select=I", str(script)]
    proc = subprocess.run(ruff, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout
