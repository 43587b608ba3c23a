"""reference/ imports NumPy and SciPy only: no framework can leak into the expected values."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

REFERENCE = Path(__file__).resolve().parents[2] / "reference"
ALLOWED_ROOTS = {"numpy", "scipy", "__future__"} | set(sys.stdlib_module_names)
FRAMEWORKS = (
    "torch",
    "jax",
    "jaxlib",
    "numpyro",
    "gpytorch",
    "linear_operator",
    "tensorflow",
)


def _imports_own_submodule(call: ast.Call) -> bool:
    """``import_module(f"{__name__}.…")``: family discovery inside the package itself."""
    arg = call.args[0] if call.args else None
    return (
        isinstance(arg, ast.JoinedStr)
        and isinstance(arg.values[0], ast.FormattedValue)
        and getattr(arg.values[0].value, "id", "") == "__name__"
    )


def test_reference_sources_import_only_numpy_scipy_and_stdlib() -> None:
    offenders = []
    for path in sorted(REFERENCE.rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            elif isinstance(node, ast.ImportFrom) and node.level > len(
                path.relative_to(REFERENCE).parts
            ):
                offenders.append(f"{path.name}:{node.lineno}: relative import leaves reference/")
            elif (
                isinstance(node, ast.Call)
                and getattr(node.func, "attr", "") == "import_module"
                and not _imports_own_submodule(node)
            ):
                offenders.append(f"{path.name}:{node.lineno}: dynamic import")
            for name in names:
                if name.split(".")[0] not in ALLOWED_ROOTS:
                    offenders.append(f"{path.name}:{node.lineno}: imports {name}")
    assert not offenders, offenders
    assert len(list(REFERENCE.rglob("*.py"))) >= 5


def test_using_the_oracle_loads_no_framework() -> None:
    code = (
        "import sys, numpy as np\nfrom conformance import reference\n"
        "for name in reference.family_names():\n"
        "    fam = reference.get_family(name)\n"
        "rng = np.random.default_rng(0)\n"
        "mvn = reference.get_family('MultivariateNormal')\n"
        "p = {'loc': np.zeros(2), 'covariance_matrix': np.eye(2)}\n"
        "mvn.log_prob(p, mvn.sample(p, (3,), rng, 'covariance_matrix'), 'covariance_matrix')\n"
        "mvn.elementwise_grad(p, np.ones(2), 'covariance_matrix')\n"
        f"bad = [m for m in sys.modules if m.split('.')[0] in {FRAMEWORKS!r}]\n"
        "bad += [m for m in sys.modules if m.startswith('conformance.')"
        " and not m.startswith('conformance.reference')]\n"
        "print(bad); sys.exit(1 if bad else 0)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
