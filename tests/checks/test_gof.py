"""sample_fit's statistics (conformance/checks/gof.py) at the draws an item takes: a sampler
from the law passes under every seed tried, and a sampler shifted by 0.1 standard deviations,
scaled by 5 % fails, under every seed tried.
This is the claim the items' sample size rests on (sample_fit.DRAWS)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from conformance.checks import gof
from conformance.checks.sample_fit import DRAWS
from conformance.expect.laws import cell_ends

N = DRAWS["cdf"]
SEEDS = range(5)


def _verdicts(x: np.ndarray, law, seed: int) -> gof.Verdict:
    lo, hi = cell_ends(x)
    values = x.reshape(len(x), 1).astype(np.float64)
    found = gof.univariate(
        values, law.cdf(lo).reshape(-1, 1), law.cdf(hi).reshape(-1, 1), seed, gof.UNIVARIATE_TESTS
    )
    return gof.worst(found)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_draws_from_the_law_pass(seed: int, dtype) -> None:
    law = stats.gamma(0.8, scale=2.0)
    x = law.rvs(N, random_state=np.random.default_rng(seed)).astype(dtype)
    verdict = _verdicts(x, law, seed)
    assert verdict.passed, verdict.describe()


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(
    ("what", "transform"),
    [("shift 0.1 sd", lambda z: z + 0.1), ("scale 1.05", lambda z: 1.05 * z)],
)
def test_wrong_samplers_fail(seed: int, what: str, transform) -> None:
    law = stats.norm(0.0, 1.0)
    x = transform(np.random.default_rng(seed).standard_normal(N))
    verdict = _verdicts(x, law, seed)
    assert not verdict.passed, f"{what}: {verdict.describe()}"


def test_an_atom_is_no_false_alarm() -> None:
    """A continuous law rounded to float32 puts many draws on one number: the cell ends keep
    the KS distance exact (a draw of 0 from a Gamma(0.01) in float32)."""
    law = stats.gamma(0.01)
    x = law.rvs(N, random_state=np.random.default_rng(3)).astype(np.float32)
    assert np.mean(x == 0) > 0.3
    assert _verdicts(x, law, 3).passed
