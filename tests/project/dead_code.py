"""Dead code in the package: vulture over conformance/ and reference/ with pyproject.toml's
``[tool.vulture]`` settings and the reviewed allowlist (dead_code_allowlist.py), less the one
kind of finding vulture cannot judge: an oracle family's module-level instance, which
reference/families/__init__.py registers by scanning each module (adding a family is adding a
module; no list names them, so no allowlist should either).

``python tests/project/dead_code.py`` prints each finding and exits 1 if there is one; run by
``nox -s lint`` and tests/project/test_static.py.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

from vulture import config, core

ROOT = Path(__file__).resolve().parents[2]
FAMILIES = ROOT / "conformance" / "reference" / "families"


def _is_family_instance(item: core.Item) -> bool:
    """Whether ``item`` is a module-level binding of a Family in reference/families/."""
    path = Path(item.filename).resolve()
    if item.typ != "variable" or path.parent != FAMILIES:
        return False
    from conformance.reference import Family

    module = importlib.import_module(f"conformance.reference.families.{path.stem}")
    return isinstance(getattr(module, item.name, None), Family)


def findings() -> list[str]:
    """vulture's report lines, family instances left out."""
    cwd = os.getcwd()
    os.chdir(ROOT)  # the configuration's paths are the repository's
    try:
        with open(ROOT / "pyproject.toml", "rb") as toml:
            settings = config.make_config([], tomlfile=toml)
        scan = core.Vulture(
            ignore_names=settings["ignore_names"], ignore_decorators=settings["ignore_decorators"]
        )
        scan.scavenge(settings["paths"], exclude=settings["exclude"])
        unused = scan.get_unused_code(min_confidence=settings["min_confidence"])
        return [item.get_report() for item in unused if not _is_family_instance(item)]
    finally:
        os.chdir(cwd)


def main() -> int:
    found = findings()
    print("\n".join(found) or "dead code: none found")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
