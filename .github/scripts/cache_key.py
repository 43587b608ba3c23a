"""The reusable workflow's JAX cache key: what the cached executables depend on, without the
run id (a new cache entry per run would be saved and never read). Standard library only.

    python cache_key.py SUITE_DIR "CASE_DIRS" SHARD SHARDS

prints ``key=`` (exact: the suite's code, the frameworks, the case files, the shard) and
``prefix=`` (the same without the code and case hash, for restore-keys: a change of code
starts from the last entry of the same frameworks and shard, and pruning after the run drops
what it no longer reads).
"""

from __future__ import annotations

import hashlib
import importlib.metadata as metadata
import platform
import sys
from pathlib import Path


def _versions() -> str:
    out = []
    for name in ("jax", "jaxlib", "numpyro", "torch"):
        try:
            out.append(f"{name}{metadata.version(name)}")
        except metadata.PackageNotFoundError:
            continue
    return "-".join(out) or "noframework"


def _tree_hash(roots: list[Path]) -> str:
    digest = hashlib.sha256()
    for root in roots:
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for path in files:
            if path.suffix in (".py", ".yaml", ".yml") and "__pycache__" not in path.parts:
                digest.update(str(path).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def main(argv: list[str]) -> int:
    suite, cases, shard, shards = Path(argv[0]), argv[1].split(), argv[2], argv[3]
    python = ".".join(platform.python_version_tuple()[:2])
    prefix = f"conformance-jax-{platform.system()}-py{python}-{_versions()}-{shard}of{shards}-"
    code = [suite / "conformance", suite / "reference", suite / "cases", *map(Path, cases)]
    print(f"key={prefix}{_tree_hash(code)}")
    print(f"prefix={prefix}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
