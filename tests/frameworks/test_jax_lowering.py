"""One shared MLIR context changes how fast JAX lowers, never what it lowers or computes.

Each test runs in a fresh process, so neither JAX's in-memory caches nor an earlier test's
sharing decides what is compared.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("numpyro")

PROGRAMS = """
import json, sys
import numpy as np
import jax, jax.numpy as jnp
import numpyro.distributions as dist
from jax._src.interpreters import mlir
from conformance.adapters.numpyro.store import lowering as jax_lowering

jax.config.update("jax_enable_x64", True)
rng = np.random.default_rng(0)
A = rng.normal(size=(3, 3))
COV = A @ A.T + 3 * np.eye(3)
X = rng.normal(size=(4, 3))

def mvn(loc, x):
    return dist.MultivariateNormal(loc, covariance_matrix=COV).log_prob(x)

def student(df, x):
    return dist.StudentT(df, 0.5, 2.0).log_prob(x)

def gamma(c, x):
    return jnp.sum(dist.Gamma(c, 1.5, validate_args=True).log_prob(x))

CASES = [
    (mvn, (np.zeros(3), X)),
    (student, (np.array([1.5, 4.0, 30.0]), np.array([-3.0, 0.1, 7.0]))),
    (gamma, (np.array([0.3, 2.0]), np.array([0.01, 5.0]))),
]

def evaluate():
    out = {}
    for fn, args in CASES:
        jax.clear_caches()  # every primitive and function is lowered afresh
        name = fn.__name__
        out[name + ".text"] = jax.jit(fn).lower(*args).as_text()
        out[name + ".compiled"] = np.asarray(jax.jit(fn)(*args)).tolist()
        out[name + ".eager"] = np.asarray(fn(*args)).tolist()
        out[name + ".grad"] = np.asarray(jax.jit(jax.grad(lambda a, b: jnp.sum(fn(a, b))))(*args)).tolist()
    return out

mode = sys.argv[1]
if mode == "shared":
    assert jax_lowering.share_context()
    assert jax_lowering.share_context()  # idempotent
    evaluate()  # lower everything once before: the context now holds all of it
result = evaluate()
before = mlir.make_ir_context()
result["same_context"] = mlir.make_ir_context() is before
jax_lowering.drop_context()
result["new_after_drop"] = mlir.make_ir_context() is not before
json.dump(result, sys.stdout)
"""


def _run(mode: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", PROGRAMS, mode],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "JAX_PLATFORMS": "cpu", "JAX_ENABLE_X64": "0"},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def test_shared_context_lowers_the_same_programs_and_computes_the_same_values() -> None:
    own, shared = _run("own"), _run("shared")
    assert shared.pop("same_context") is True
    assert own.pop("same_context") is False  # JAX's default: a new context per lowering
    assert shared.pop("new_after_drop") is True
    assert own.pop("new_after_drop") is True
    assert set(own) == set(shared) and len(own) == 12
    for key in own:
        assert own[key] == shared[key], key  # bit for bit: text, compiled, eager, gradient
    assert "stablehlo" in own["mvn.text"]


def test_the_numpyro_adapter_shares_and_a_memory_release_drops_the_context() -> None:
    code = """
from jax._src.interpreters import mlir
from conformance.adapters.numpyro.adapter import NumpyroAdapter
from conformance.adapters.numpyro.store import lowering as jax_lowering
adapter = NumpyroAdapter()
with adapter.precision("float32"):
    pass
first = mlir.make_ir_context()
assert mlir.make_ir_context() is first
adapter.release_caches()
assert mlir.make_ir_context() is not first
jax_lowering.unshare_context()
assert mlir.make_ir_context() is not mlir.make_ir_context()
print("ok")
"""
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-3000:]
