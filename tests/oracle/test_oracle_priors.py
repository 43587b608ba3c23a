"""GPyTorch's priors with a log density of their own (SmoothedBoxPrior) against mpmath: the
oracle's log_prob and closed-form gradients, the reference's normalisation, the sampler."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from conformance import reference

mp = mpmath.mp
SMOOTHED_BOX = reference.get_family("SmoothedBoxPrior")


def mp_smoothed_box(a, b, sigma, x) -> mpmath.mpf:
    """One component, from the definition: flat on [a, b], Normal(0, σ) shoulders, normalised."""
    d = x - b if x > b else (a - x if x < a else 0)
    tail = -((d / sigma) ** 2) / 2 - mp.log(sigma) - mp.log(2 * mp.pi) / 2
    return tail - mp.log(1 + (b - a) / (mp.sqrt(2 * mp.pi) * sigma))


def _draw(rng: np.random.Generator, n: int) -> tuple[dict[str, np.ndarray], np.ndarray]:
    a = rng.normal(0, 3, (n, 2))
    b = a + np.exp(rng.uniform(np.log(1e-3), np.log(10.0), (n, 2)))
    sigma = np.exp(rng.uniform(np.log(1e-3), np.log(5.0), (n, 2)))
    x = rng.uniform(a - 5 * sigma - 1, b + 5 * sigma + 1)
    return {"a": a, "b": b, "sigma": sigma}, x


def test_log_prob_and_gradients_match_mpmath() -> None:
    params, x = _draw(np.random.default_rng(5), 60)
    got = SMOOTHED_BOX.log_prob(params, x)
    grads = SMOOTHED_BOX.elementwise_grad(params, x)
    with mp.workdps(40):
        for i in range(len(x)):
            parts = [
                [mpmath.mpf(float(params[k][i, j])) for k in ("a", "b", "sigma")] + [x[i, j]]
                for j in range(2)
            ]
            expected = sum(mp_smoothed_box(*(mpmath.mpf(float(v)) for v in p)) for p in parts)
            assert got[i] == pytest.approx(float(expected), rel=1e-13, abs=1e-13)
            for j, p in enumerate(parts):
                values = [mpmath.mpf(float(v)) for v in p]
                for k, name in enumerate(("a", "b", "sigma", "value")):

                    def along(t, k=k, values=values):
                        moved = list(values)
                        moved[k] = t
                        return mp_smoothed_box(*moved)

                    exact = float(mp.diff(along, values[k]))
                    assert grads[name][i, j] == pytest.approx(exact, rel=1e-9, abs=1e-9), (
                        name,
                        i,
                        j,
                    )


def test_the_reference_is_normalised_and_the_oracle_rejects_an_empty_box() -> None:
    with mp.workdps(25):
        a, b, s = mpmath.mpf(-1), mpmath.mpf(2), mpmath.mpf("0.3")
        total = mp.quad(lambda t: mp.exp(mp_smoothed_box(a, b, s, t)), [-mp.inf, a, b, mp.inf])
    assert abs(total - 1) < 1e-12
    lp = SMOOTHED_BOX.log_prob({"a": [1.0, 0.0], "b": [0.0, 1.0], "sigma": [0.1, 0.1]}, [0.5, 0.5])
    assert np.isnan(lp)


def test_sampler_puts_the_box_share_of_its_draws_in_the_box() -> None:
    params = {"a": np.array([-1.0]), "b": np.array([1.0]), "sigma": np.array([0.3])}
    draws = SMOOTHED_BOX.sample(params, (40000,), np.random.default_rng(2))
    assert draws.shape == (40000, 1)
    inside = np.mean((draws >= -1.0) & (draws <= 1.0))
    assert inside == pytest.approx(2.0 / (2.0 + np.sqrt(2 * np.pi) * 0.3), abs=0.01)
