"""The frameworks' transforms in closed form, float64: forward, inverse, log|det J|, domain and
codomain, shapes — and what each framework's ``biject_to`` returns for each constraint.

:func:`make` builds a transform by its neutral name (``"exp"``, ``"stick_breaking"``,
``"corr_cholesky"``…, :func:`transform_names`) and parameters; :func:`forward`,
:func:`inverse` and :func:`log_abs_det_jacobian` do the same in one call. The maths live by
kind: ``elementwise``, ``vectors`` (simplex, ordered, L1 ball, zero sum), ``matrices``
(Cholesky factors), ``linear`` (Fourier, cosine, Haar, triangular maps), ``structural``
(compose, independent, inverse, cat, stack, reshape, unpack) and ``distribution`` (a family's
CDF). ``recipes`` builds a transform written as data (what a constraint registry returns);
``spaces.contains`` tests membership of a domain or codomain. Which framework class each name
stands for, and each framework's constraint registries, are the registry's data
(``conformance/registry/transform_classes.yaml``, ``constraint_registries.yaml``).
"""

from __future__ import annotations

from . import distribution, elementwise, linear, matrices, structural, vectors
from .base import Inverse, ParamSpec, Space, Transform
from .recipes import build, names_in
from .registry import (
    forward,
    inverse,
    log_abs_det_jacobian,
    make,
    transform_kind,
    transform_names,
)
from .spaces import contains

#: The modules whose import registers the transforms.
MODULES = (elementwise, vectors, matrices, linear, structural, distribution)

__all__ = [
    "MODULES",
    "Inverse",
    "ParamSpec",
    "Space",
    "Transform",
    "build",
    "contains",
    "forward",
    "inverse",
    "log_abs_det_jacobian",
    "make",
    "names_in",
    "transform_kind",
    "transform_names",
]
