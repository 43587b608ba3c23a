"""How the oracle tests judge a partial derivative at a generated edge against mpmath.

Relative to the partial itself: the suite holds a framework's float64 gradient to about 6e-14 of
it (``conformance.expect.gradients``), so an absolute bound such as 1e-8 would let a partial of
1e-12 be wrong in every digit. Beside that, as the suite allows the frameworks, a partial may be
off by a few ulps of log_prob over its input's scale (``F_i``) and by what rounding the inputs
by a few ulps moves it (``S_i``), measured here by mpmath's second differences.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import mpmath
import numpy as np

from conformance.reference.numdiff import step_scale

#: A partial's relative error allowed beyond its conditioning (the log density's RTOL).
PARTIAL_RTOL = 1e-12
#: How many units of its inputs' last digits the oracle may be off by, beyond the relative
#: bound: a point where rounding an input by one ulp moves log_prob (or a partial) by more than
#: that is ill-conditioned, and no float64 evaluation has those digits.
CONDITION_ULPS = 4.0
EPS = float(np.finfo(np.float64).eps)

MpDensity = Callable[[dict[str, Any], Any], Any]


#: Relative step of the second differences: an input's own ulp, what its rounding moves it by
#: (a secant of that width is what matters, and it stays clear of a pole or a support's end a
#: few ulps away, where a tangent's wider step would cross it).
STEP = mpmath.mpf(2) ** -52
#: Digits beyond the caller's for the differences: their rounding is amplified by 1/STEP².
EXTRA_DIGITS = 35


def sensitivity_terms(
    density: MpDensity, params: dict[str, Any], value: Any, name: str, rounded: Iterable[str]
) -> Iterator[float]:
    """|x_i·∂(∂log p/∂name)/∂x_i| for each input i in ``rounded`` (names of scalar parameters,
    or "value"), by mpmath, one at a time: how far the inputs' own rounding moves the partial
    (near a steep support end, or where the partial is a small difference, as far as it
    cancels). ``name`` itself first, then the value (whose moves keep a normaliser: cheap where
    the density caches it), then the rest: :func:`assert_partial_close` stops at the first
    prefix that is allowance enough, the same verdict as the whole sum at a fraction of the cost
    where each density is a quadrature.

    Central second differences of relative step STEP (mpmath.diff's nested mixed partials
    would raise the working precision fourfold: minutes for an incomplete gamma); an input at 0
    adds nothing (x_i·… = 0) and is not stepped, so a domain's end is never crossed. A point
    with no second derivative there (a domain error) yields nothing more: judged strictly."""
    point = {**params, "value": value}
    if point[name] == 0:
        return
    order = sorted(rounded, key=lambda i: (i != name, i != "value"))
    for i in order:
        if point[i] == 0:
            continue
        with mpmath.workdps(mpmath.mp.dps + EXTRA_DIGITS):
            try:
                term = _second_difference(density, point, name, i)
            except (ValueError, ZeroDivisionError):
                return
        if not math.isfinite(term):
            return
        yield term


def _second_difference(density: MpDensity, point: dict[str, Any], name: str, i: str) -> float:
    """|x_i·∂²log p/∂name∂x_i| at ``point`` (its inputs by name, the value as "value")."""

    params = {k: v for k, v in point.items() if k != "value"}

    def at(**moves: Any) -> Any:
        moved = {k: point[k] + d for k, d in moves.items()}
        x = moved.pop("value", point["value"])
        return density({**params, **moved}, x)

    h = abs(point[name]) * STEP
    if i == name:
        second = (at(**{name: h}) - 2 * at() + at(**{name: -h})) / (h * h)
    else:
        k = abs(point[i]) * STEP
        second = (
            at(**{name: h, i: k})
            - at(**{name: h, i: -k})
            - at(**{name: -h, i: k})
            + at(**{name: -h, i: -k})
        ) / (4 * h * k)
    return abs(float(point[i]) * float(mpmath.re(second)))


def assert_partial_close(
    got: float,
    want: float,
    scale: float,
    sensitivity: Callable[[], Iterable[float]],
    what: str,
    rtol: float = PARTIAL_RTOL,
) -> None:
    """|got − want| ≤ rtol·|want| + CONDITION_ULPS·eps·(1/scale + Σ sensitivity()).

    ``1/scale``: a few ulps of log_prob are no error (the log_prob comparison's floor of 1 nat),
    and over the input's scale (:func:`input_scale`) they are this much of the partial, as the
    suite's tolerance carries them (``F_i`` in conformance.expect.gradients). The sensitivity's
    terms (second differences: slow) are taken only while the rest is missed (each is ≥ 0, so
    the first prefix that suffices gives the whole sum's verdict). It counts scalar inputs
    only: a caller whose matrix is ill-conditioned passes the rtol it allows log_prob."""
    err = abs(got - want)
    allowed = rtol * abs(want) + CONDITION_ULPS * EPS / scale
    if not err <= allowed:
        for term in sensitivity():
            allowed += CONDITION_ULPS * EPS * term
            if err <= allowed:
                break
    assert err <= allowed, (
        f"∂/∂{what}: {got!r} vs mpmath {want!r} (error {err:.3g}, allowed {allowed:.3g})"
    )


def input_scale(family: Any, parametrization: str | None, name: str, x: float) -> float:
    """The scale over which an input moves log_prob: the suite's (the oracle's finite-difference
    step unit: max(|x|, 1) on the real line, x in a positive domain, the distance to an end of a
    bounded one)."""
    domain = (
        family.value.support if name == "value" else family.params(parametrization)[name].domain
    )
    return float(step_scale(domain, np.float64(x)))


def rounded_inputs(family: Any, parametrization: str, params: dict, value: Any) -> list[str]:
    """The scalar inputs whose float64 rounding moves a partial: real-valued parameters, and
    the value of a continuous family (an integer count, or a static input, is exact)."""
    info = family.params(parametrization)
    names = [
        k
        for k, v in params.items()
        if np.ndim(v) == 0 and not info[k].integer and not info[k].static
    ]
    return names + (["value"] if np.ndim(value) == 0 and not family.value.discrete else [])
