"""One module per family; :data:`FAMILIES` maps a family's name to its oracle."""

from __future__ import annotations

from reference.core import Family
from reference.families.bernoulli import BERNOULLI
from reference.families.multivariate_normal import MULTIVARIATE_NORMAL
from reference.families.normal import NORMAL

FAMILIES: dict[str, Family] = {f.name: f for f in (NORMAL, MULTIVARIATE_NORMAL, BERNOULLI)}
