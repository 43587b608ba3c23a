"""The oracle's transforms (conformance/reference/transforms) against independent float64
computations:

- log|det J| against the log|det| of the Jacobian by a five-point central difference (error
  O(h⁴)), in the coordinates each transform names: the simplex's first K−1 entries, the strict
  lower triangle of a correlation factor, (strict lower triangle, diagonal) of a Cholesky
  factor, a symmetric matrix's lower triangle, the real and imaginary parts of a half
  spectrum; for the zero-sum isometry the volume ½ log det JᵀJ; in the tails, where a float64
  difference would cancel, against mpmath's own derivatives at 60 digits;
- inverse(forward(x)) = x and forward(inverse(y)) = y at rtol 1e-12, y drawn in the codomain
  independently of forward;
- outputs in the codomain (by tests written here, not the oracle's), shapes against
  forward_shape/inverse_shape, a batch against its elements one by one, batched parameters;
- the biject_to tables: their sizes per framework, every entry built and its outputs in the
  constraint's set.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import mpmath as mp
import numpy as np
import pytest
from scipy import special, stats

from conformance.reference import OracleError, make_transform, transform_names
from conformance.reference.transforms import Transform, contains, make, names_in
from conformance.registry.constraint_registries import (
    constraint_registries,
    registered_transform,
    registration,
)
from conformance.registry.transform_classes import transform_class, transform_classes

RTOL = 1e-12
rng = np.random.default_rng(20261129)


# ----- coordinates (written here, apart from the oracle's packing) ----------------------------


def _lower(m: np.ndarray, k: int = 0) -> np.ndarray:
    """Entries on and below diagonal k, row by row."""
    n = m.shape[-1]
    return np.array([m[..., i, j] for i in range(n) for j in range(n) if j <= i + k]).T


def _symmetric(u: np.ndarray, n: int) -> np.ndarray:
    m = np.zeros((n, n))
    m[np.tril_indices(n)] = u
    return m + np.tril(m, -1).T


def _correlation(u: np.ndarray, n: int) -> np.ndarray:
    m = np.eye(n)
    m[np.tril_indices(n, -1)] = u
    return m + np.tril(m, -1).T


def _cholesky_coords(y: np.ndarray) -> np.ndarray:
    """(strict lower triangle row by row, diagonal)."""
    return np.concatenate([_lower(y, -1), np.diagonal(y)])


def _spectrum_coords(n: int) -> Callable[[np.ndarray], np.ndarray]:
    """The real parts of the n//2 + 1 coefficients, then the imaginary parts of those that
    are not self-conjugate (coefficient 0 and, for even n, n/2)."""

    def coords(y: np.ndarray) -> np.ndarray:
        last = n // 2 if n % 2 == 0 else n // 2 + 1
        return np.concatenate([y.real, y.imag[1:last]])

    return coords


def _simplex_point(u: np.ndarray) -> np.ndarray:
    return np.concatenate([u, [1.0 - u.sum()]])


def _identity(v: np.ndarray) -> np.ndarray:
    return np.asarray(v)


def _flat(v: np.ndarray) -> np.ndarray:
    return np.asarray(v).reshape(-1)


def _jacobian(f: Callable[[np.ndarray], np.ndarray], u: np.ndarray) -> np.ndarray:
    """∂f/∂u by the five-point central difference, column by column."""
    cols = []
    for i in range(u.size):
        h = 1e-3 * max(1.0, abs(u[i]))
        e = np.zeros_like(u)
        e[i] = h
        cols.append((-f(u + 2 * e) + 8 * f(u + e) - 8 * f(u - e) + f(u - 2 * e)) / (12 * h))
    return np.stack(cols, axis=-1)


# ----- the cases: a transform, a point of its domain by coordinates, its codomain's -----------


@dataclass
class Case:
    id: str
    build: Callable[[], Transform]
    u: np.ndarray
    to_x: Callable[[np.ndarray], np.ndarray] = _identity
    coords: Callable[[np.ndarray], np.ndarray] = _flat
    volume: bool = False  # zero sum: ½ log det JᵀJ
    elementwise: bool = False  # log|det J| per entry: compare to the diagonal too
    extra: dict[str, object] = field(default_factory=dict)


def _t(name: str, **params: object) -> Callable[[], Transform]:
    return lambda: make(name, **params)


LINE = np.array([-1.3, -0.2, 0.4, 2.1])
HALF_LINE = np.array([0.3, 0.9, 1.7, 3.2])
PD = np.array([[2.0, 0.6, -0.3], [0.6, 1.5, 0.4], [-0.3, 0.4, 1.2]])
CORR = np.array([[1.0, 0.3, -0.4], [0.3, 1.0, 0.2], [-0.4, 0.2, 1.0]])
SCALE_TRIL = np.array([[1.5, 0.0, 0.0], [0.3, -0.8, 0.0], [-0.6, 0.2, 2.0]])
TRANSITION = np.array([[0.5, -0.3], [0.2, 0.9]])

CASES = [
    Case("identity", _t("identity"), LINE, elementwise=True),
    Case("exp", _t("exp"), LINE, elementwise=True),
    Case("power", _t("power", exponent=2.5), HALF_LINE, elementwise=True),
    Case("power_negative", _t("power", exponent=-0.7), HALF_LINE, elementwise=True),
    Case("sigmoid", _t("sigmoid"), LINE, elementwise=True),
    Case("softplus", _t("softplus"), LINE, elementwise=True),
    Case("tanh", _t("tanh"), LINE, elementwise=True),
    Case("affine", _t("affine", loc=0.5, scale=-2.5), LINE, elementwise=True),
    Case(
        "affine_event",
        _t(
            "affine", loc=np.array([1.0, 0, 0, 2]), scale=np.array([2.0, -0.5, 3, 1.5]), event_dim=1
        ),
        LINE,
    ),
    Case(
        "cdf_normal",
        _t("cumulative_distribution", family="Normal", params={"loc": 0.3, "scale": 1.7}),
        LINE,
        elementwise=True,
    ),
    Case(
        "cdf_exponential",
        _t("cumulative_distribution", family="Exponential", params={"rate": 2.0}),
        HALF_LINE,
        elementwise=True,
    ),
    Case("stick_breaking", _t("stick_breaking"), LINE[:3], coords=lambda y: y[:-1]),
    Case("ordered", _t("ordered"), LINE),
    Case("l1_ball", _t("l1_ball"), LINE),
    Case(
        "simplex_to_ordered",
        _t("simplex_to_ordered", anchor_point=0.7),
        np.array([0.2, 0.3, 0.1]),
        to_x=_simplex_point,
    ),
    Case("permute", _t("permute", permutation=[2, 0, 3, 1]), LINE),
    Case("zero_sum", _t("zero_sum"), LINE, volume=True),
    Case(
        "zero_sum_2d",
        _t("zero_sum", transform_ndims=2),
        np.arange(6.0) / 3 - 1,
        to_x=lambda u: u.reshape(2, 3),
        volume=True,
    ),
    Case(
        "lower_cholesky_affine",
        _t("lower_cholesky_affine", loc=np.array([0.5, -1.0, 2.0]), scale_tril=SCALE_TRIL),
        LINE[:3],
    ),
    Case(
        "complex", _t("complex"), np.array([0.7, -1.2]), coords=lambda y: np.array([y.real, y.imag])
    ),
    Case(
        "rfft_odd",
        _t("rfft", transform_shape=(5,)),
        np.array([0.3, -1.0, 2.0, 0.5, 1.1]),
        coords=_spectrum_coords(5),
    ),
    Case("rfft_even", _t("rfft"), np.r_[LINE, 0.8, -0.4], coords=_spectrum_coords(6)),
    Case(
        "pack_rfft",
        _t("pack_rfft", transform_shape=(6,)),
        np.r_[LINE, 0.8, -0.4],
        coords=_spectrum_coords(6),
    ),
    Case("haar", _t("haar"), np.r_[LINE, 0.8]),
    Case("haar_flip", _t("haar", flip=True), np.r_[LINE, 0.8, -0.4]),
    Case("dct", _t("dct", smooth=0.8), np.r_[LINE, 0.8]),
    Case(
        "recursive_linear",
        _t("recursive_linear", transition_matrix=TRANSITION, initial_value=np.array([0.3, -0.2])),
        np.r_[LINE, 0.8, -0.4],
        to_x=lambda u: u.reshape(3, 2),
    ),
    Case(
        "reshape",
        _t("reshape", in_shape=(2, 3), out_shape=(3, 2)),
        np.r_[LINE, 0.8, -0.4],
        to_x=lambda u: u.reshape(2, 3),
    ),
    Case(
        "corr_cholesky", _t("corr_cholesky"), np.r_[LINE, 0.8, -0.4], coords=lambda y: _lower(y, -1)
    ),
    Case("lower_cholesky", _t("lower_cholesky"), np.r_[LINE, 0.8, -0.4], coords=_cholesky_coords),
    Case(
        "softplus_lower_cholesky",
        _t("softplus_lower_cholesky"),
        np.r_[LINE, 0.8, -0.4],
        coords=_cholesky_coords,
    ),
    Case(
        "scaled_unit_lower_cholesky",
        _t("scaled_unit_lower_cholesky"),
        np.r_[LINE, 0.8, -0.4],
        coords=_cholesky_coords,
    ),
    Case(
        "cholesky",
        _t("cholesky"),
        _lower(PD),
        to_x=lambda u: _symmetric(u, 3),
        coords=_lower,
    ),
    Case(
        "corr_matrix_cholesky",
        _t("corr_matrix_cholesky"),
        _lower(CORR, -1),
        to_x=lambda u: _correlation(u, 3),
        coords=lambda y: _lower(y, -1),
    ),
    Case(
        "cholesky_inverse",
        lambda: make("cholesky").inv,
        _lower(np.linalg.cholesky(PD)),
        to_x=lambda u: np.tril(_symmetric(u, 3)),
        coords=_lower,
    ),
    Case(
        "stick_breaking_inverse",
        lambda: make("stick_breaking").inv,
        np.array([0.2, 0.3, 0.1]),
        to_x=_simplex_point,
    ),
    Case(
        "compose_interval",
        lambda: make("compose", parts=[make("sigmoid"), make("affine", loc=-1.0, scale=2.0)]),
        LINE,
        elementwise=True,
    ),
    Case(
        "compose_exp_stick_breaking",
        lambda: make("compose", parts=[make("exp"), make("stick_breaking")]),
        LINE[:3],
        coords=lambda y: y[:-1],
    ),
    Case(
        "numpyro_positive_definite",
        lambda: registered_transform("positive_definite", "numpyro"),
        np.r_[LINE, 0.8, -0.4],
        coords=_lower,
    ),
    Case(
        "numpyro_corr_matrix",
        lambda: registered_transform("corr_matrix", "numpyro"),
        LINE[:3],
        coords=lambda y: _lower(y, -1),
    ),
    Case(
        "independent",
        lambda: make("independent", base=make("exp"), reinterpreted_batch_ndims=1),
        LINE,
    ),
    Case(
        "stack",
        lambda: make("stack", transforms=[make("exp"), make("tanh")], dim=-1),
        LINE[:2],
    ),
    Case(
        "cat",
        lambda: make("cat", transforms=[make("exp"), make("sigmoid")], dim=-1, lengths=[2, 3]),
        np.r_[LINE, 0.8],
        elementwise=True,
    ),
    Case(
        "cat_vectors",
        lambda: make(
            "cat",
            transforms=[
                make("ordered"),
                make("independent", base=make("exp"), reinterpreted_batch_ndims=1),
            ],
            dim=-1,
            lengths=[3, 2],
        ),
        np.r_[LINE, 0.8],
    ),
]
IDS = [c.id for c in CASES]


def _point(case: Case) -> tuple[Transform, np.ndarray, np.ndarray]:
    t = case.build()
    x = case.to_x(case.u)
    return t, x, t.forward(x)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_log_abs_det_jacobian_matches_finite_differences(case: Case) -> None:
    t, x, y = _point(case)
    jac = _jacobian(lambda u: case.coords(t.forward(case.to_x(u))), case.u)
    if case.volume:
        expected = 0.5 * np.linalg.slogdet(jac.T @ jac)[1]
    else:
        assert jac.shape[0] == jac.shape[1], "coordinates of the codomain must match the domain's"
        expected = np.linalg.slogdet(jac)[1]
    actual = np.sum(t.log_abs_det_jacobian(x, y))
    assert actual == pytest.approx(expected, rel=1e-8, abs=1e-8)
    if case.elementwise:
        lad = t.log_abs_det_jacobian(x, y)
        np.testing.assert_allclose(lad, np.log(np.abs(np.diagonal(jac))), rtol=1e-8, atol=1e-8)
        np.testing.assert_allclose(jac - np.diag(np.diagonal(jac)), 0.0, atol=1e-9)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_inverse_undoes_forward(case: Case) -> None:
    t, x, y = _point(case)
    np.testing.assert_allclose(t.inverse(y), x, rtol=RTOL, atol=RTOL)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_outputs_in_codomain_and_shapes(case: Case) -> None:
    t = case.build()
    xs = np.stack([case.to_x(case.u), case.to_x(0.9 * case.u)])
    ys = t.forward(xs)
    assert ys.shape == t.forward_shape(xs.shape)
    assert t.inverse_shape(ys.shape) == xs.shape
    assert np.all(contains(t.domain, xs))
    assert np.all(contains(t.codomain, ys))
    lad = t.log_abs_det_jacobian(xs, ys)
    batch = xs.shape[: xs.ndim - t.domain.event_dim]
    assert lad.shape == batch
    for i in range(2):  # a batch is its elements one by one
        np.testing.assert_allclose(ys[i], t.forward(xs[i]), rtol=RTOL, atol=RTOL)
        np.testing.assert_allclose(lad[i], t.log_abs_det_jacobian(xs[i], ys[i]), rtol=RTOL)


# ----- forward(inverse(y)) from points of the codomain drawn here ------------------------------


def _draw_pd(n: int) -> np.ndarray:
    a = rng.normal(size=(n, n))
    return a @ a.T + n * np.eye(n)


def _draw_corr(n: int) -> np.ndarray:
    m = _draw_pd(n)
    d = np.sqrt(np.diag(m))
    return m / np.outer(d, d)


ROUND_TRIPS: list[tuple[str, Callable[[], Transform], Callable[[], np.ndarray]]] = [
    ("exp", _t("exp"), lambda: rng.gamma(2.0, size=5)),
    ("power", _t("power", exponent=1.7), lambda: rng.gamma(2.0, size=5)),
    ("sigmoid", _t("sigmoid"), lambda: rng.uniform(0.01, 0.99, size=5)),
    ("softplus", _t("softplus"), lambda: rng.gamma(2.0, size=5)),
    ("tanh", _t("tanh"), lambda: rng.uniform(-0.99, 0.99, size=5)),
    ("stick_breaking", _t("stick_breaking"), lambda: rng.dirichlet(np.ones(5))),
    ("ordered", _t("ordered"), lambda: np.sort(rng.normal(size=5))),
    (
        "simplex_to_ordered",
        _t("simplex_to_ordered", anchor_point=-0.4),
        lambda: np.sort(rng.normal(size=4)),
    ),
    ("l1_ball", _t("l1_ball"), lambda: (lambda v: 0.9 * v / np.abs(v).sum())(rng.normal(size=5))),
    ("zero_sum", _t("zero_sum"), lambda: (lambda v: v - v.mean())(rng.normal(size=5))),
    ("corr_cholesky", _t("corr_cholesky"), lambda: np.linalg.cholesky(_draw_corr(4))),
    ("lower_cholesky", _t("lower_cholesky"), lambda: np.linalg.cholesky(_draw_pd(3))),
    (
        "scaled_unit_lower_cholesky",
        _t("scaled_unit_lower_cholesky"),
        lambda: np.linalg.cholesky(_draw_pd(3)),
    ),
    (
        "softplus_lower_cholesky",
        _t("softplus_lower_cholesky"),
        lambda: np.linalg.cholesky(_draw_pd(3)),
    ),
    ("cholesky", _t("cholesky"), lambda: np.linalg.cholesky(_draw_pd(3))),
    ("corr_matrix_cholesky", _t("corr_matrix_cholesky"), lambda: np.linalg.cholesky(_draw_corr(3))),
    ("rfft", _t("rfft", transform_shape=(5,)), lambda: np.fft.rfft(rng.normal(size=5))),
    ("pack_rfft", _t("pack_rfft", transform_shape=(6,)), lambda: np.fft.rfft(rng.normal(size=6))),
    ("complex", _t("complex"), lambda: rng.normal(size=3) + 1j * rng.normal(size=3)),
    ("haar", _t("haar"), lambda: rng.normal(size=7)),
    ("dct", _t("dct", smooth=1.3), lambda: rng.normal(size=6)),
    # not bijective: forward(inverse(y)) = y all the same
    ("softmax", _t("softmax"), lambda: rng.dirichlet(np.ones(4))),
    ("abs", _t("abs"), lambda: rng.gamma(2.0, size=4)),
    ("lower_cholesky_square", _t("lower_cholesky_square"), lambda: np.linalg.cholesky(_draw_pd(3))),
    ("positive_definite_square", _t("positive_definite_square"), lambda: _draw_pd(3)),
    (
        "numpyro_positive_definite",
        lambda: registered_transform("positive_definite", "numpyro"),
        lambda: _draw_pd(3),
    ),
    (
        "numpyro_corr_matrix",
        lambda: registered_transform("corr_matrix", "numpyro"),
        lambda: _draw_corr(4),
    ),
]


@pytest.mark.parametrize(
    ("build", "draw"), [r[1:] for r in ROUND_TRIPS], ids=[r[0] for r in ROUND_TRIPS]
)
def test_forward_undoes_inverse(
    build: Callable[[], Transform], draw: Callable[[], np.ndarray]
) -> None:
    t, y = build(), draw()
    assert np.all(contains(t.codomain, y))
    x = t.inverse(y)
    assert np.all(contains(t.domain, x))
    np.testing.assert_allclose(t.forward(x), y, rtol=RTOL, atol=RTOL)


# ----- membership: the codomain tests reject what lies outside ---------------------------------


@pytest.mark.parametrize(
    ("name", "outside"),
    [
        ("exp", np.array([-2.0, -0.1])),
        ("sigmoid", np.array([-0.1, 1.2])),
        ("tanh", np.array([1.5, -1.01])),
        ("stick_breaking", np.array([0.5, 0.6, -0.1])),
        ("stick_breaking", np.array([0.5, 0.6, 0.1])),
        ("ordered", np.array([0.0, 1.0, 0.5])),
        ("l1_ball", np.array([0.5, -0.6])),
        ("zero_sum", np.array([0.5, -0.4])),
        ("corr_cholesky", np.array([[1.0, 0.0], [0.6, 0.7]])),
        ("lower_cholesky", np.array([[1.0, 0.1], [0.6, 0.7]])),
        ("cholesky", np.array([[1.0, 0.0], [0.6, -0.7]])),
    ],
)
def test_codomain_rejects_outside(name: str, outside: np.ndarray) -> None:
    assert not np.any(contains(make(name).codomain, outside))


# ----- batched parameters ----------------------------------------------------------------------


def test_affine_parameters_broadcast() -> None:
    loc, scale, x = np.array([[0.5], [-1.0]]), np.array([2.0, -0.5, 3.0]), LINE[:3]
    t = make("affine", loc=loc, scale=scale)
    y = t.forward(x)
    assert y.shape == t.forward_shape(x.shape) == (2, 3)
    np.testing.assert_allclose(y, loc + scale * x, rtol=RTOL)
    lad = t.log_abs_det_jacobian(x, y)
    np.testing.assert_allclose(lad, np.broadcast_to(np.log(np.abs(scale)), (2, 3)), rtol=RTOL)
    np.testing.assert_allclose(t.inverse(y), np.broadcast_to(x, (2, 3)), rtol=RTOL)


def test_affine_event_dim_counts_a_shared_scale_once_per_entry() -> None:
    """torch's AffineTransform gives log 2 here for a 0-dim tensor scale: the oracle says 3 log 2."""
    t = make("affine", loc=0.0, scale=np.array(2.0), event_dim=1)
    x = np.zeros((4, 3))
    np.testing.assert_allclose(t.log_abs_det_jacobian(x, t.forward(x)), np.full(4, 3 * np.log(2.0)))


def test_power_exponent_broadcasts() -> None:
    exponent, x = np.array([[0.5], [3.0]]), HALF_LINE[:3]
    t = make("power", exponent=exponent)
    y = t.forward(x)
    assert y.shape == t.forward_shape(x.shape) == (2, 3)
    lad = t.log_abs_det_jacobian(x, y)
    for i, p in enumerate(exponent[:, 0]):
        single = make("power", exponent=p)
        np.testing.assert_allclose(y[i], single.forward(x), rtol=RTOL)
        np.testing.assert_allclose(lad[i], single.log_abs_det_jacobian(x, x**p), rtol=RTOL)
    np.testing.assert_allclose(lad, np.log(np.abs(exponent * y / x)), rtol=1e-12)


def test_simplex_to_ordered_anchor_broadcasts() -> None:
    anchor, x = np.array([-0.5, 1.5]), np.array([0.1, 0.2, 0.3, 0.4])
    t = make("simplex_to_ordered", anchor_point=anchor)
    y = t.forward(x)
    assert y.shape == t.forward_shape(x.shape) == (2, 3)
    lad = t.log_abs_det_jacobian(x, y)
    assert lad.shape == (2,)
    for i, a in enumerate(anchor):
        single = make("simplex_to_ordered", anchor_point=a)
        np.testing.assert_allclose(y[i], single.forward(x), rtol=RTOL)
        np.testing.assert_allclose(lad[i], single.log_abs_det_jacobian(x, y[i]), rtol=RTOL)
    # the anchor shifts y, not log|det J| (NumPyro's closed form has it move with y)
    np.testing.assert_allclose(lad[0], lad[1], rtol=RTOL)


def test_lower_cholesky_affine_and_recursive_linear_batch_parameters() -> None:
    tril = np.stack([SCALE_TRIL, 2 * SCALE_TRIL])
    t = make("lower_cholesky_affine", loc=np.zeros(3), scale_tril=tril)
    x = LINE[:3]
    y = t.forward(x)
    assert y.shape == t.forward_shape(x.shape) == (2, 3)
    lad = t.log_abs_det_jacobian(x, y)
    expected = [np.linalg.slogdet(m)[1] for m in tril]
    np.testing.assert_allclose(lad, expected, rtol=RTOL)
    np.testing.assert_allclose(t.inverse(y), np.broadcast_to(x, (2, 3)), rtol=RTOL)
    a = np.stack([TRANSITION, -TRANSITION])
    r = make("recursive_linear", transition_matrix=a)
    xs = rng.normal(size=(4, 2))
    ys = r.forward(xs)
    assert ys.shape == r.forward_shape(xs.shape) == (2, 4, 2)
    for i in range(2):
        np.testing.assert_allclose(
            ys[i], make("recursive_linear", transition_matrix=a[i]).forward(xs), rtol=RTOL
        )
    assert r.log_abs_det_jacobian(xs, ys).shape == (2,)


def test_cumulative_distribution_parameters_broadcast() -> None:
    loc = np.array([[0.0], [1.0]])
    t = make("cumulative_distribution", family="Normal", params={"loc": loc, "scale": 2.0})
    x = LINE[:3]
    y = t.forward(x)
    assert y.shape == t.forward_shape(x.shape) == (2, 3)
    np.testing.assert_allclose(y, stats.norm.cdf(x, loc, 2.0), rtol=1e-13)
    np.testing.assert_allclose(
        t.log_abs_det_jacobian(x, y), stats.norm.logpdf(x, loc, 2.0), rtol=1e-13
    )
    np.testing.assert_allclose(t.inverse(y), np.broadcast_to(x, (2, 3)), rtol=RTOL)


# ----- closed forms at points where the answer is known -------------------------------------------


def test_stick_breaking_centre_and_exact_values() -> None:
    t = make("stick_breaking")
    np.testing.assert_allclose(t.forward(np.zeros(4)), np.full(5, 0.2), rtol=RTOL)
    x = np.array([0.4, -1.1])
    z0, z1 = special.expit(x[0] - np.log(2)), special.expit(x[1])
    np.testing.assert_allclose(t.forward(x), [z0, (1 - z0) * z1, (1 - z0) * (1 - z1)], rtol=RTOL)


def test_corr_cholesky_builds_unit_rows_from_tanh() -> None:
    x = np.array([0.3, -0.7, 1.2])
    y = make("corr_cholesky").forward(x)
    t = np.tanh(x)
    np.testing.assert_allclose(y[1], [t[0], math.sqrt(1 - t[0] ** 2), 0.0], rtol=RTOL)
    y20 = t[1]
    y21 = t[2] * math.sqrt(1 - t[1] ** 2)
    np.testing.assert_allclose(y[2], [y20, y21, math.sqrt(1 - y20**2 - y21**2)], rtol=RTOL)


def test_rfft_log_det_formula() -> None:
    for n in (4, 5, 6, 7):
        x = rng.normal(size=n)
        t = make("rfft")
        q = 1 if n % 2 else 2
        assert t.log_abs_det_jacobian(x, t.forward(x)) == pytest.approx(
            0.5 * (n * math.log(n) - (n - q) * math.log(2))
        )


def test_zero_sum_is_an_isometry() -> None:
    t = make("zero_sum")
    jac = _jacobian(t.forward, LINE)
    np.testing.assert_allclose(jac.T @ jac, np.eye(4), atol=1e-10)
    assert t.log_abs_det_jacobian(LINE, t.forward(LINE)) == 0.0


# ----- non-bijective transforms -------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["softmax", "abs", "lower_cholesky_square", "positive_definite_square"]
)
def test_not_bijective_has_no_log_det(name: str) -> None:
    t = make(name)
    assert not t.bijective
    x = rng.normal(size=(3, 3)) if name.endswith("square") else LINE
    y = t.forward(x)
    assert np.all(contains(t.codomain, y))
    with pytest.raises(OracleError, match="not bijective"):
        t.log_abs_det_jacobian(x, y)
    assert not make("compose", parts=[make("exp"), t]).bijective


# ----- domains, codomains, event dims -------------------------------------------------------------

SPACES = {
    "identity": ("real", 0, "real", 0),
    "exp": ("real", 0, "positive", 0),
    "power": ("positive", 0, "positive", 0),
    "sigmoid": ("real", 0, "unit_interval", 0),
    "softplus": ("real", 0, "positive", 0),
    "tanh": ("real", 0, "interval", 0),
    "abs": ("real", 0, "positive", 0),
    "affine": ("real", 0, "real", 0),
    "softmax": ("real", 1, "simplex", 1),
    "stick_breaking": ("real", 1, "simplex", 1),
    "ordered": ("real", 1, "ordered_vector", 1),
    "simplex_to_ordered": ("simplex", 1, "ordered_vector", 1),
    "l1_ball": ("real", 1, "l1_ball", 1),
    "zero_sum": ("real", 1, "zero_sum", 1),
    "permute": ("real", 1, "real", 1),
    "corr_cholesky": ("real", 1, "corr_cholesky", 2),
    "lower_cholesky": ("real", 1, "lower_cholesky", 2),
    "softplus_lower_cholesky": ("real", 1, "lower_cholesky", 2),
    "scaled_unit_lower_cholesky": ("real", 1, "scaled_unit_lower_cholesky", 2),
    "lower_cholesky_square": ("real", 2, "lower_cholesky", 2),
    "positive_definite_square": ("real", 2, "positive_definite", 2),
    "cholesky": ("positive_definite", 2, "lower_cholesky", 2),
    "corr_matrix_cholesky": ("corr_matrix", 2, "corr_cholesky", 2),
    "lower_cholesky_affine": ("real", 1, "real", 1),
    "recursive_linear": ("real", 2, "real", 2),
    "complex": ("real", 1, "complex", 0),
    "rfft": ("real", 1, "complex", 1),
    "pack_rfft": ("real", 1, "complex", 1),
    "haar": ("real", 1, "real", 1),
    "dct": ("real", 1, "real", 1),
    "reshape": ("real", 2, "real", 1),
    "unpack": ("real", 1, "dependent", 0),
}

DEFAULTS: dict[str, dict[str, object]] = {
    "power": {"exponent": 2.0},
    "affine": {"loc": 0.0, "scale": 1.0},
    "permute": {"permutation": [1, 0]},
    "lower_cholesky_affine": {"loc": np.zeros(2), "scale_tril": np.eye(2)},
    "recursive_linear": {"transition_matrix": np.eye(2)},
    "reshape": {"in_shape": (2, 3), "out_shape": (6,)},
    "unpack": {"layout": {"a": (2,), "b": (2, 2)}},
}


@pytest.mark.parametrize("name", sorted(SPACES))
def test_domain_and_codomain(name: str) -> None:
    t = make(name, **DEFAULTS.get(name, {}))  # type: ignore[arg-type]
    got = (t.domain.name, t.domain.event_dim, t.codomain.name, t.codomain.event_dim)
    assert got == SPACES[name]


def test_composition_event_dims() -> None:
    up = make("compose", parts=[make("exp"), make("stick_breaking")])
    assert (up.domain.name, up.domain.event_dim) == ("real", 1)
    assert (up.codomain.name, up.codomain.event_dim) == ("simplex", 1)
    down = make("compose", parts=[make("stick_breaking"), make("exp")])
    assert (down.codomain.name, down.codomain.event_dim) == ("positive", 1)
    inv = make("corr_cholesky").inv
    assert (inv.domain.name, inv.domain.event_dim, inv.codomain.event_dim) == (
        "corr_cholesky",
        2,
        1,
    )
    assert inv.forward_shape((5, 4, 4)) == (5, 6) and inv.inverse_shape((5, 6)) == (5, 4, 4)
    stacked = make("stack", transforms=[make("exp"), make("exp")], dim=-1)
    assert stacked.domain.event_dim == 1
    x = np.zeros((3, 2))
    assert stacked.log_abs_det_jacobian(x, stacked.forward(x)).shape == (3,)
    batch_axis = make("stack", transforms=[make("exp"), make("exp")], dim=0)
    assert batch_axis.log_abs_det_jacobian(x.T, batch_axis.forward(x.T)).shape == (2, 3)
    empty = make("compose", parts=[])
    assert empty.log_abs_det_jacobian(x, x).shape == (3, 2)


def test_unpack_round_trip() -> None:
    t = make("unpack", layout={"a": (2,), "b": (2, 2)})
    x = rng.normal(size=(4, 6))
    parts = t.forward(x)
    assert parts["a"].shape == (4, 2) and parts["b"].shape == (4, 2, 2)
    np.testing.assert_array_equal(parts["b"][1], x[1, 2:].reshape(2, 2))
    np.testing.assert_array_equal(t.inverse(parts), x)
    assert t.log_abs_det_jacobian(x, parts).shape == (4,)
    with pytest.raises(OracleError):
        t.forward_shape((6,))


# ----- the framework table and the biject_to tables --------------------------------------------------


def test_every_transform_has_a_transform_class() -> None:
    assert set(transform_classes()) == set(transform_names())
    for name, classes in transform_classes().items():
        assert classes and set(classes) <= {"torch", "numpyro"}, name
    assert transform_class("tanh", "numpyro") is None
    assert transform_class("reshape", "numpyro").args["out_shape"] == "forward_shape"  # type: ignore[union-attr]
    for name in ("softmax", "lower_cholesky_square", "positive_definite_square", "abs"):
        assert transform_class(name, "torch").no_log_abs_det_jacobian  # type: ignore[union-attr]
    assert make_transform("exp").name == "exp"


REGISTRY_KEYS = [(f, r) for f, regs in constraint_registries().items() for r in regs]


def test_registry_sizes() -> None:
    def size(framework: str, registry: str) -> tuple[int, int]:
        table = constraint_registries()[framework][registry]
        return len(table), len({r.key for r in table.values()})

    # (constraints by name, the classes registered) in torch 2.13.0 and NumPyro 0.22.0
    assert size("torch", "biject_to") == (15, 11)
    assert size("torch", "transform_to") == (18, 14)
    assert size("numpyro", "biject_to") == (29, 29)


@pytest.mark.parametrize("key", REGISTRY_KEYS, ids="-".join)
def test_registry_transforms_exist_in_their_framework(key: tuple[str, str]) -> None:
    framework, registry = key
    for constraint, entry in constraint_registries()[framework][registry].items():
        for name in names_in(entry.transform):
            assert transform_class(name, framework) is not None, (constraint, name)


def test_registry_answers() -> None:
    assert registered_transform("positive", "numpyro").name == "exp"
    torch_positive = registered_transform("positive", "torch")
    assert [p.name for p in torch_positive.parts] == ["exp", "affine"]  # type: ignore[attr-defined]
    assert registered_transform("simplex", "torch").name == "stick_breaking"
    assert registered_transform("simplex", "torch", "transform_to").name == "softmax"
    with pytest.raises(OracleError, match="nothing for 'lower_cholesky'"):
        registration("lower_cholesky", "torch")


def _upper_zero(y: np.ndarray) -> bool:
    return bool(np.all(np.triu(y, 1) == 0))


def _pd(y: np.ndarray) -> bool:
    return bool(np.allclose(y, np.swapaxes(y, -1, -2)) and np.all(np.linalg.eigvalsh(y) > 0))


# constraint → (attributes, input shape, input shape for torch where it differs, membership)
CONSTRAINTS: dict[
    str,
    tuple[dict[str, object], tuple[int, ...], tuple[int, ...] | None, Callable[[np.ndarray], bool]],
] = {
    "real": ({}, (3,), None, lambda y: bool(np.all(np.isfinite(y)))),
    "real_vector": ({}, (3,), None, lambda y: bool(np.all(np.isfinite(y)))),
    "real_matrix": ({}, (2, 3), None, lambda y: y.shape == (2, 3)),
    "independent": (
        {"base_constraint": ("positive", {}), "reinterpreted_batch_ndims": 1},
        (3,),
        None,
        lambda y: bool(np.all(y > 0)),
    ),
    "positive": ({}, (3,), None, lambda y: bool(np.all(y > 0))),
    "nonnegative": ({}, (3,), None, lambda y: bool(np.all(y >= 0))),
    "softplus_positive": ({}, (3,), None, lambda y: bool(np.all(y > 0))),
    "greater_than": ({"lower_bound": 1.5}, (3,), None, lambda y: bool(np.all(y > 1.5))),
    "greater_than_eq": ({"lower_bound": 1.5}, (3,), None, lambda y: bool(np.all(y >= 1.5))),
    "less_than": ({"upper_bound": -0.5}, (3,), None, lambda y: bool(np.all(y < -0.5))),
    "less_than_eq": ({"upper_bound": -0.5}, (3,), None, lambda y: bool(np.all(y <= -0.5))),
    "unit_interval": ({}, (3,), None, lambda y: bool(np.all((y > 0) & (y < 1)))),
    "interval": (
        {"lower_bound": 1.0, "upper_bound": 3.0},
        (3,),
        None,
        lambda y: bool(np.all((y > 1) & (y < 3))),
    ),
    "half_open_interval": (
        {"lower_bound": 1.0, "upper_bound": 3.0},
        (3,),
        None,
        lambda y: bool(np.all((y >= 1) & (y < 3))),
    ),
    "open_interval": (
        {"lower_bound": 1.0, "upper_bound": 3.0},
        (3,),
        None,
        lambda y: bool(np.all((y > 1) & (y < 3))),
    ),
    "circular": ({}, (3,), None, lambda y: bool(np.all((y >= -np.pi) & (y < np.pi)))),
    "simplex": ({}, (3,), None, lambda y: bool(np.all(y > 0)) and abs(y.sum() - 1) < 1e-14),
    "corr_cholesky": (
        {},
        (3,),
        None,
        lambda y: (
            _upper_zero(y) and np.allclose((y * y).sum(-1), 1) and bool(np.all(np.diag(y) > 0))
        ),
    ),
    "corr_matrix": ({}, (3,), None, lambda y: _pd(y) and np.allclose(np.diag(y), 1)),
    "lower_cholesky": ({}, (6,), (3, 3), lambda y: _upper_zero(y) and bool(np.all(np.diag(y) > 0))),
    "scaled_unit_lower_cholesky": (
        {},
        (6,),
        None,
        lambda y: _upper_zero(y) and bool(np.all(np.diag(y) > 0)),
    ),
    "softplus_lower_cholesky": (
        {},
        (6,),
        None,
        lambda y: _upper_zero(y) and bool(np.all(np.diag(y) > 0)),
    ),
    "positive_definite": ({}, (6,), (3, 3), _pd),
    "positive_semidefinite": ({}, (6,), (3, 3), _pd),
    "ordered_vector": ({}, (4,), None, lambda y: bool(np.all(np.diff(y) > 0))),
    "positive_ordered_vector": (
        {},
        (4,),
        None,
        lambda y: bool(np.all(np.diff(y) > 0) and np.all(y > 0)),
    ),
    "l1_ball": ({}, (4,), None, lambda y: bool(np.abs(y).sum() < 1)),
    "complex": ({}, (3, 2), None, lambda y: bool(np.iscomplexobj(y) and y.shape == (3,))),
    "zero_sum": ({"event_dim": 1}, (3,), None, lambda y: y.shape == (4,) and abs(y.sum()) < 1e-14),
    "cat": (
        {
            "cseq": [("positive", {}), ("interval", {"lower_bound": 1.0, "upper_bound": 3.0})],
            "dim": -1,
            "lengths": [2, 1],
        },
        (3,),
        None,
        lambda y: bool(np.all(y[:2] > 0) and 1 < y[2] < 3),
    ),
    "stack": (
        {"cseq": [("positive", {}), ("less_than", {"upper_bound": 0.0})], "dim": -1},
        (4, 2),
        None,
        lambda y: bool(np.all(y[:, 0] > 0) and np.all(y[:, 1] < 0)),
    ),
}

ENTRIES = [
    (f, r, c)
    for f, regs in constraint_registries().items()
    for r, table in regs.items()
    for c in table
]


def test_every_registered_constraint_has_a_case() -> None:
    assert {c for _, _, c in ENTRIES} == set(CONSTRAINTS)


@pytest.mark.parametrize(
    ("framework", "registry", "constraint"), ENTRIES, ids=["-".join(e) for e in ENTRIES]
)
def test_registry_transform_lands_in_its_constraint(
    framework: str, registry: str, constraint: str
) -> None:
    attrs, shape, torch_shape, inside = CONSTRAINTS[constraint]
    t = registered_transform(constraint, framework, registry, **attrs)
    x = rng.normal(size=torch_shape if framework == "torch" and torch_shape else shape)
    y = t.forward(x)
    assert inside(y), y
    assert np.all(contains(t.codomain, y))
    if t.bijective:
        np.testing.assert_allclose(t.inverse(y), x, rtol=1e-11, atol=1e-11)
        assert np.ndim(t.log_abs_det_jacobian(x, y)) == x.ndim - t.domain.event_dim


# ----- the tails: log|det J| where float64 differences would cancel, against mpmath -------------


def _mp_log_det(f: Callable[[list], list], x: np.ndarray) -> float:
    """log|det ∂f/∂x| at 60 digits (enough for σ(55) to differ from 1), the partial
    derivatives by mpmath's own differentiation."""
    with mp.workdps(60):
        point = [mp.mpf(float(v)) for v in x]

        def partial(i: int, j: int) -> object:
            def along(t: object) -> object:
                moved = list(point)
                moved[j] = t
                return f(moved)[i]

            return mp.diff(along, point[j])

        jac = mp.matrix([[partial(i, j) for j in range(len(point))] for i in range(len(point))])
        return float(mp.log(abs(mp.det(jac))))


def _mp_stick_breaking(x: list) -> list:
    n, rest, out = len(x), mp.mpf(1), []
    for i, v in enumerate(x):
        z = 1 / (1 + mp.exp(-(v - mp.log(n - i))))
        out.append(z * rest)
        rest *= 1 - z
    return out  # the first K − 1 entries: the simplex's coordinates


def _mp_l1_ball(x: list) -> list:
    rest, out = mp.mpf(1), []
    for v in x:
        t = mp.tanh(v)
        out.append(t * rest)
        rest *= 1 - abs(t)
    return out


def _mp_corr_cholesky(x: list) -> list:
    """D = 3: the strict lower triangle (y10, y20, y21) from t = tanh x, row by row."""
    t = [mp.tanh(v) for v in x]
    y10 = t[0]
    y20 = t[1]
    y21 = t[2] * mp.sqrt(1 - y20**2)
    return [y10, y20, y21]


@pytest.mark.parametrize(
    ("name", "f", "points"),
    [
        ("sigmoid", lambda v: [1 / (1 + mp.exp(-v[0]))], [-40.0, -3.0, 0.3, 35.0, 55.0]),
        ("softplus", lambda v: [mp.log(1 + mp.exp(v[0]))], [-60.0, -2.0, 0.5, 45.0]),
        ("tanh", lambda v: [mp.tanh(v[0])], [-19.0, -0.7, 1e-3, 15.0]),
        ("exp", lambda v: [mp.exp(v[0])], [-300.0, 2.5]),
    ],
)
def test_elementwise_tails_against_mpmath(
    name: str, f: Callable[[list], list], points: list[float]
) -> None:
    t = make(name)
    x = np.array(points)
    lad = t.log_abs_det_jacobian(x, t.forward(x))
    expected = [_mp_log_det(f, np.array([p])) for p in points]
    np.testing.assert_allclose(lad, expected, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize(
    ("name", "f", "x"),
    [
        ("stick_breaking", _mp_stick_breaking, np.array([18.0, -22.0, 4.0])),
        ("l1_ball", _mp_l1_ball, np.array([9.0, -11.0, 0.5])),
        ("corr_cholesky", _mp_corr_cholesky, np.array([7.5, -8.0, 6.0])),
    ],
)
def test_vector_tails_against_mpmath(name: str, f: Callable[[list], list], x: np.ndarray) -> None:
    t = make(name)
    lad = t.log_abs_det_jacobian(x, t.forward(x))
    assert float(lad) == pytest.approx(_mp_log_det(f, x), rel=1e-12, abs=1e-12)


# ----- the entry points and the declared parameters ----------------------------------------------


def test_entry_points_by_name() -> None:
    from conformance.reference import transforms

    x = LINE
    y = transforms.forward("affine", x, params={"loc": 1.0, "scale": 2.0})
    np.testing.assert_allclose(y, 1 + 2 * x, rtol=RTOL)
    np.testing.assert_allclose(
        transforms.inverse("affine", y, params={"loc": 1.0, "scale": 2.0}), x
    )
    lad = transforms.log_abs_det_jacobian("stick_breaking", x, make("stick_breaking").forward(x))
    assert lad.shape == ()
    with pytest.raises(OracleError, match="unknown transform 'expo'; known: abs, affine"):
        make("expo")


@pytest.mark.parametrize("name", transform_names())
def test_declared_parameters_are_the_constructors(name: str) -> None:
    import inspect

    from conformance.reference.transforms import transform_kind

    kind = transform_kind(name)
    signature = inspect.signature(kind.__init__)
    variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    taken = [n for n, p in signature.parameters.items() if n != "self" and p.kind not in variadic]
    assert [p.name for p in kind.params] == taken
    for spec in kind.params:
        default = signature.parameters[spec.name].default
        if default is not inspect.Parameter.empty:
            assert spec.default == default, spec.name


def test_spaces_compare_by_value() -> None:
    from conformance.reference.transforms import Space

    assert make("exp").codomain == Space("positive", 0)
    assert make("stick_breaking").codomain != Space("simplex", 2)
    a = make("affine", loc=np.array([1.0, 2.0]), scale=1.0, domain="positive").codomain
    assert a == Space("greater_than", 0, low=np.array([1.0, 2.0]))
    assert a != Space("greater_than", 0, low=np.array([1.0, 3.0]))
