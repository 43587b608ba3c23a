"""One module per family; :data:`FAMILIES` maps a family's name to its oracle.

Every module in this package is imported and every module-level :class:`Family` instance is
registered, so adding a family is adding a module.
"""

from __future__ import annotations

import importlib
import pkgutil

from ..core import Family


def _discover() -> dict[str, Family]:
    found: dict[str, Family] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        for obj in vars(module).values():
            if isinstance(obj, Family):
                if obj.name in found and found[obj.name] is not obj:
                    raise RuntimeError(f"family {obj.name} is defined twice ({info.name})")
                found[obj.name] = obj
    return dict(sorted(found.items()))


FAMILIES: dict[str, Family] = _discover()
