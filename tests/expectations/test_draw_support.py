"""What a draw stands for when it is held to the support (conformance/expect/laws.py): a matrix
draw rounded onto, or an ulp beyond, the boundary of the positive definite cone is inside (the
law's own draws are singular to float64's precision at a Wishart's df near d − 1); a matrix off
by more, or not a number, is not. A vector draw rounded onto an end (float32's −π on the
circle) is inside; one a few ulps beyond is not."""

from __future__ import annotations

import numpy as np
from helpers import make_case, subject_for

WISHART = """
- id: w
  family: Wishart
  parametrization: covariance_matrix
  params: {df: 1.01, covariance_matrix: [[2.0, 0.3], [0.3, 1.0]]}
  value: [[1.5, -0.2], [-0.2, 0.7]]
"""


def test_matrix_draws_within_rounding_of_the_cone_are_inside() -> None:
    law = subject_for(make_case(WISHART), "torch", "float64").law
    u = np.array([0.6, -0.8])
    singular = 3.0 * np.outer(u, u)  # rank one: on the boundary
    just_beyond = singular - 4e-16 * np.eye(2)  # an eigenvalue of -4e-16
    far_beyond = singular - 1e-6 * np.eye(2)
    nan = np.full((2, 2), np.nan)
    draws = np.stack([np.eye(2), singular, just_beyond, far_beyond, nan])
    assert law.in_support(draws).tolist() == [True, True, True, False, False]


SINE_SKEWED = """
- id: s
  family: SineSkewed
  params: {loc: [0.0, 2.0], concentration: [1.0, 10.0], skewness: [0.5, -0.5]}
  value: [0.5, 1.0]
"""


def test_vector_draws_rounded_onto_an_end_are_inside() -> None:
    # NumPyro's SineSkewed wraps its draws onto [-π, π) in float32: float32(-π) is below -π.
    law = subject_for(make_case(SINE_SKEWED), "numpyro", "float32").law
    end = np.float32(-np.pi)
    assert float(end) < -np.pi
    beyond = np.nextafter(np.nextafter(end, np.float32(-4)), np.float32(-4))
    draws = np.array([[0.5, 1.0], [end, 1.0], [0.5, -end], [beyond, 1.0]], dtype=np.float32)
    assert law.in_support(draws).tolist() == [True, True, True, False]
