"""Binomial(total_count, probs | logits); support {0, …, total_count}.

Also home of the log-gamma *differences* every count family needs (log C(n, k), rising
factorials, digamma differences). lgamma(n+1) - lgamma(k+1) - lgamma(n-k+1) loses
eps·lgamma(n) absolutely — 1e-12 at n = 1000, ten times the float64 tolerance of the result
(scipy's betaln falls back to exactly that for moderate arguments). Here every difference is
taken in Stirling form, where the large terms cancel analytically and only O(k·log n) is left.

The pmf itself is Loader's saddle-point form (R's dbinom) inside the support, so it does not
cancel k·log p against log C(n, k) near the mode; at k = 0, k = n, p = 0 and p = 1 the direct
form gives exact 0 and -inf. From logits, log p = -softplus(-l) and log(1-p) = -softplus(l),
exact for any |l|.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import special

from ..constants import HALF_LOG_2PI
from ..core import Arrays, Family, Options, OracleError, ParamInfo, Support, ValueInfo


def success_failure(params: Arrays) -> tuple[np.ndarray, np.ndarray]:
    """(p, 1 − p) from ``probs`` or ``logits`` (σ(l), σ(−l): 1 − σ(l) loses σ(−l)'s digits)."""
    if "probs" in params:
        return params["probs"], 1.0 - params["probs"]
    logits = params["logits"]
    return special.expit(logits), special.expit(-logits)


def softplus(x: np.ndarray) -> np.ndarray:
    """log(1 + e^x) without overflow: log(1-p) = -softplus(l), log p = -softplus(-l)."""
    return np.logaddexp(0.0, x)


#: Below this, Stirling corrections and digamma are taken from scipy directly; above, from their
#: asymptotic series (truncation error < 1e-17 at 10).
_ASYMPTOTIC_FROM = 10.0
#: B_2j / (2j(2j-1)): log Γ(x) = (x-½)log x - x + ½log 2π + Σ_j c_j x^(1-2j).
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156)
#: B_2j / 2j: ψ(x) = log x - 1/(2x) - Σ_j d_j x^(-2j).
_DIGAMMA = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12)


def stirling_correction(x: np.ndarray) -> np.ndarray:
    """δ(x) = log Γ(x) - [(x-½)log x - x + ½log 2π], small and smooth for x > 0."""
    x = np.asarray(x, dtype=np.float64)
    big = np.maximum(x, _ASYMPTOTIC_FROM)
    inv, inv2 = 1.0 / big, 1.0 / (big * big)
    series = np.zeros_like(big)
    for c in reversed(_STIRLING):
        series = series * inv2 + c
    small = np.where(x > 0, np.minimum(x, _ASYMPTOTIC_FROM), 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        direct = special.gammaln(small) - ((small - 0.5) * np.log(small) - small + HALF_LOG_2PI)
    return np.where(x >= _ASYMPTOTIC_FROM, series * inv, direct)


def log_rising(x: np.ndarray, m: np.ndarray) -> np.ndarray:
    """log Γ(x + m) - log Γ(x) for x > 0, x + m > 0 (m real), with no large cancellation:

    (x-½)·log1p(m/x) + m·log(x+m) - m + δ(x+m) - δ(x)
    """
    x, m = np.broadcast_arrays(np.asarray(x, np.float64), np.asarray(m, np.float64))
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (
            (x - 0.5) * np.log1p(m / x)
            + special.xlogy(m, x + m)
            - m
            + stirling_correction(x + m)
            - stirling_correction(x)
        )
        # Where an argument is 0 the Stirling form is undefined: Γ(0) = inf.
        edge = (x <= 0) | (x + m <= 0)
        direct = special.gammaln(x + m) - special.gammaln(x)
    return np.where(m == 0, 0.0, np.where(edge, direct, out))


def digamma_diff(x: np.ndarray, m: np.ndarray) -> np.ndarray:
    """ψ(x + m) - ψ(x) for x > 0, x + m > 0, without the cancellation of two nearly equal ψ.

    Both arguments are first shifted above 10 by the recurrence ψ(t) = ψ(t+1) - 1/t (the
    shifted terms 1/(x+j) - 1/(x+m+j) = m/((x+j)(x+m+j)) do not cancel); then the asymptotic
    series is differenced term by term.
    """
    return _shifted_digamma_diff(x, m, log_gap=False)


def digamma_log_gap(x: np.ndarray, m: np.ndarray) -> np.ndarray:
    """ψ(x + m) − ψ(x) − log1p(m/x) for x > 0, x + m > 0: what a ψ difference leaves beside its
    logarithm, O(m/x²) at a large x.

    For a gradient whose log1p(m/x) cancels against logs of other inputs (NegativeBinomial's
    concentration at a huge mean, FisherSnedecor's degrees of freedom): digamma_diff − log1p
    would keep eps·log1p(m/x) absolutely of a result 1e6 times smaller. At x ≥ 10 this is the
    series' terms alone; below, the shifts' log1p(m/(x + s)) − log1p(m/x) join them, which
    cancel little (x + s ≥ 10 > x).
    """
    return _shifted_digamma_diff(x, m, log_gap=True)


def _shifted_digamma_diff(x: np.ndarray, m: np.ndarray, log_gap: bool) -> np.ndarray:
    x, m = np.broadcast_arrays(np.asarray(x, np.float64), np.asarray(m, np.float64))
    low = np.minimum(x, x + m)
    # Invalid inputs (non-finite, far below 0) get no shifts: their results are discarded.
    usable = np.isfinite(low) & (low > -_ASYMPTOTIC_FROM)
    shifts = np.where(usable & (low < _ASYMPTOTIC_FROM), np.ceil(_ASYMPTOTIC_FROM - low), 0.0)
    acc = np.zeros_like(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        for j in range(int(np.max(shifts, initial=0.0))):
            use = j < shifts
            acc = acc + np.where(use, m / ((x + j) * (x + m + j)), 0.0)
        a, b = x + shifts, x + m + shifts
        # Differences of powers of 1/a and 1/b in factored form: 1/b - 1/a = -m/(ab) and
        # U^j - V^j = (U - V)·Σ_i U^(j-1-i) V^i with U = 1/b², V = 1/a², never as a subtraction.
        d1 = -m / (a * b)
        big_u, big_v = 1.0 / (b * b), 1.0 / (a * a)
        d2 = d1 * (1.0 / a + 1.0 / b)
        lead = np.log1p(m / a)
        if log_gap:
            # log1p(m/(x + s)) − log1p(m/x) = log1p(s/(x + m)) − log1p(s/x): the first form's
            # terms are small where m < x, the second's cancel least where m > x.
            by_m = lead - np.log1p(m / x)
            by_s = np.log1p(shifts / (x + m)) - np.log1p(shifts / x)
            lead = np.where(shifts > 0, np.where(np.abs(m) < x, by_m, by_s), 0.0)
        out = lead - 0.5 * d1
        partial, v_pow = np.ones_like(a), np.ones_like(a)
        for d in _DIGAMMA:
            out = out - d * d2 * partial
            v_pow = v_pow * big_v
            partial = big_u * partial + v_pow
    return np.where(m == 0, 0.0, out + acc)


def log_minus_digamma(x: np.ndarray) -> np.ndarray:
    """log x − ψ(x) for x > 0, 1/(2x) + … from the asymptotic series at x ≥ 10 (the difference
    of two logs of size log x would keep only eps·log x of it)."""
    x = np.asarray(x, np.float64)
    big = np.maximum(x, _ASYMPTOTIC_FROM)
    inv2 = 1.0 / (big * big)
    series = np.zeros_like(big)
    for d in reversed(_DIGAMMA):
        series = series * inv2 + d
    small = np.where(x > 0, np.minimum(x, _ASYMPTOTIC_FROM), 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        direct = np.log(small) - special.digamma(small)
    return np.where(x >= _ASYMPTOTIC_FROM, 0.5 / big + series * inv2, direct)


def digamma_diff_of_diffs(x: np.ndarray, m: np.ndarray, s: np.ndarray, t: np.ndarray) -> np.ndarray:
    """[ψ(x + m) − ψ(x)] − [ψ(x + s + m + t) − ψ(x + s)], the gradients of the Beta mixtures.

    The four ψ pair two ways, ``digamma_diff(x, m) − digamma_diff(x + s, m + t)`` or
    ``digamma_diff(x, s) − digamma_diff(x + m, s + t)``, and each way is off by about eps times
    its two terms, which the result can be far below: at x = 1e6, s = 1e-6, m = 1e15 the first
    way's terms are ~21 each and cancel to 1e-12 (also losing s to x + s), the second way's are
    1e-12 and 4e-15. The way with the smaller terms is taken.
    """
    x, m, s, t = np.broadcast_arrays(*(np.asarray(a, np.float64) for a in (x, m, s, t)))
    with np.errstate(invalid="ignore"):
        by_m = (digamma_diff(x, m), digamma_diff(x + s, m + t))
        by_s = (digamma_diff(x, s), digamma_diff(x + m, s + t))
        smaller = np.abs(by_s[0]) + np.abs(by_s[1]) < np.abs(by_m[0]) + np.abs(by_m[1])
        return np.where(smaller, by_s[0] - by_s[1], by_m[0] - by_m[1])


#: Veltkamp's splitting constant 2^27 + 1: a float64 splits into two halves of 26 bits.
_SPLIT = 134217729.0


def two_product(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(p, e) with p = fl(a·b) and a·b = p + e exactly (Dekker's product), for |a|, |b| below
    1e300 and a·b far from underflow: a difference of two products that nearly cancel is then
    exact to the last bit of each (e is 0 where the product is not finite)."""
    a, b = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(b, np.float64))
    with np.errstate(invalid="ignore", over="ignore"):
        p = a * b
        a_hi, a_lo = _split(a)
        b_hi, b_lo = _split(b)
        e = ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo
    return p, np.where(np.isfinite(e), e, 0.0)


def _split(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    t = _SPLIT * a
    hi = t - (t - a)
    return hi, a - hi


def bd0(x: np.ndarray, mean: np.ndarray) -> np.ndarray:
    """x·log(x/mean) + mean - x ≥ 0, the deviance term of Loader (2000), R's ``bd0``.

    Near x = mean its three terms cancel; there it is summed as 2x·Σ_j v^(2j+1)/(2j+1) - (x-mean)v
    with v = (x-mean)/(x+mean), |v| < 1/19, so 12 terms reach 1e-20 relative.
    """
    x, mean = np.broadcast_arrays(np.asarray(x, np.float64), np.asarray(mean, np.float64))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        direct = special.xlogy(x, x / mean) + mean - x
        v = (x - mean) / (x + mean)
        series = (x - mean) * v
        term, v2 = 2.0 * x * v, v * v
        for j in range(1, 13):
            term = term * v2
            series = series + term / (2 * j + 1)
    return np.where(np.abs(x - mean) < 0.1 * (x + mean), series, direct)


def log_binomial_pmf(
    n: np.ndarray, k: np.ndarray, p: np.ndarray, q: np.ndarray, log_p: np.ndarray, log_q: np.ndarray
) -> np.ndarray:
    """log C(n,k) p^k q^(n-k), given p, q = 1 - p and their logs each computed accurately by
    the caller (log1p(-p) for probs, -softplus(±l) for logits: 1 - p itself loses p's digits).

    Loader's saddle-point form for 0 < k < n (R's ``dbinom_raw``):
    δ(n) - δ(k) - δ(n-k) - bd0(k, np) - bd0(n-k, nq) - ½·log(2π k (n-k)/n). The usual sum
    log C + k log p + (n-k) log q cancels terms of size n·log n near the mode (eps·6000 at
    n = 10⁴); this form has no large terms. Where k is 0 or n, or p or q is 0, the direct
    form k·log p + (n-k)·log q is exact.
    """
    n, k, p, q, log_p, log_q = np.broadcast_arrays(
        *(np.asarray(a, np.float64) for a in (n, k, p, q, log_p, log_q))
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        direct = (
            log_binomial_coefficient(n, k)
            + np.where(k == 0, 0.0, k * log_p)
            + np.where(n - k == 0, 0.0, (n - k) * log_q)
        )
        saddle = (
            stirling_correction(n)
            - stirling_correction(k)
            - stirling_correction(n - k)
            - bd0(k, n * p)
            - bd0(n - k, n * q)
            - 0.5 * (np.log(2.0 * np.pi) + np.log(k) + np.log(n - k) - np.log(n))
        )
    interior = (k > 0) & (k < n) & (p > 0) & (q > 0)
    return np.where(interior, saddle, direct)


def log_binomial_coefficient(n: np.ndarray, k: np.ndarray) -> np.ndarray:
    """log C(n, k) = log Γ(n+1)/Γ(n-k+1) - log k!, taken from the smaller of k and n - k."""
    n, k = np.broadcast_arrays(np.asarray(n, np.float64), np.asarray(k, np.float64))
    j = np.minimum(k, n - k)
    with np.errstate(divide="ignore", invalid="ignore"):
        return log_rising(n - j + 1.0, j) - special.gammaln(j + 1.0)


#: A count window reaches this many standard deviations and this many counts beyond the mean
#: (:func:`count_window`): the mass left outside is far below 1e-17 of the whole.
_WINDOW_SDS, _WINDOW_COUNTS = 40.0, 60.0
#: The most terms :func:`sum_over_counts` evaluates at once.
_MAX_TERMS = 50_000_000


def count_window(
    mean: np.ndarray, sd: np.ndarray, upper: np.ndarray | float = np.inf
) -> tuple[np.ndarray, np.ndarray]:
    """The counts [lo, hi] ⊂ [0, upper] a sum over a count law's support needs: mean ± 40 sd
    and 60 more counts each side (a Poisson-like law of a tiny mean still has k = 1, 2, …)."""
    reach = _WINDOW_SDS * sd + _WINDOW_COUNTS
    lo = np.maximum(0.0, np.floor(mean - reach))
    hi = np.minimum(upper, np.ceil(mean + reach))
    return lo, np.maximum(lo, hi)


def sum_over_counts(
    log_pmf: Callable[[np.ndarray], np.ndarray],
    lo: np.ndarray,
    hi: np.ndarray,
    term: Callable[[np.ndarray, np.ndarray], np.ndarray],
) -> np.ndarray:
    """Σ_{k=lo}^{hi} term(k, log p(k)) elementwise over the batch (lo, hi batch-shaped);
    ``log_pmf`` takes counts shaped ``batch + (width,)``. Terms at −inf log-mass are 0."""
    lo, hi = np.broadcast_arrays(np.asarray(lo, np.float64), np.asarray(hi, np.float64))
    usable = np.isfinite(lo) & np.isfinite(hi)  # invalid parameters: their sums are discarded
    lo, hi = np.where(usable, lo, 0.0), np.where(usable, hi, 0.0)
    width = int(np.max(hi - lo, initial=0.0)) + 1
    if width * max(lo.size, 1) > _MAX_TERMS:
        raise OracleError(f"a sum over {width} counts per element is more than the oracle sums")
    k = lo[..., None] + np.arange(width, dtype=np.float64)
    inside = k <= hi[..., None]
    k = np.where(inside, k, lo[..., None])
    with np.errstate(all="ignore"):
        lp = np.asarray(log_pmf(k), dtype=np.float64)
        found = term(k, lp)
    return np.where(inside & (lp > -np.inf), found, 0.0).sum(-1)


def entropy_over_counts(
    log_pmf: Callable[[np.ndarray], np.ndarray], lo: np.ndarray, hi: np.ndarray
) -> np.ndarray:
    """−Σ_k p(k)·log p(k) over the counts [lo, hi]."""
    return sum_over_counts(log_pmf, lo, hi, lambda k, lp: -np.exp(lp) * lp)


class CountsUpToTotal(Family):
    """A count family whose support ends at ``total_count`` (Binomial, BetaBinomial)."""

    def support(self, params: Arrays, parametrization: str | None = None) -> Support:
        return Support(self.value.support, upper=params["total_count"])


class Binomial(CountsUpToTotal):
    def _log_prob(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> np.ndarray:
        n, k = params["total_count"], value
        if parametrization == "probs":
            p = params["probs"]
            with np.errstate(divide="ignore"):
                return log_binomial_pmf(n, k, p, 1.0 - p, np.log(p), np.log1p(-p))
        logits = params["logits"]
        p, q = special.expit(logits), special.expit(-logits)
        return log_binomial_pmf(n, k, p, q, -softplus(-logits), -softplus(logits))

    def _grad(
        self, params: Arrays, value: np.ndarray, parametrization: str, options: Options
    ) -> dict[str, np.ndarray]:
        n, k = params["total_count"], value
        if parametrization == "probs":
            p = params["probs"]
            with np.errstate(divide="ignore", invalid="ignore"):
                g = np.where(k == 0, 0.0, k / p) - np.where(n - k == 0, 0.0, (n - k) / (1.0 - p))
            return {"probs": g}
        return {"logits": k - n * special.expit(params["logits"])}

    def _sample(self, params, shape, rng, parametrization):
        p = params["probs"] if parametrization == "probs" else special.expit(params["logits"])
        return np.asarray(rng.binomial(params["total_count"].astype(np.int64), p), np.float64)

    def _mean(self, params, parametrization, options):
        return params["total_count"] * success_failure(params)[0]

    def _variance(self, params, parametrization, options):
        p, q = success_failure(params)
        return params["total_count"] * p * q

    def _mode(self, params, parametrization, options):
        # ⌊(n + 1)p⌋, at most n. Where (n + 1)p is a whole number in [1, n] the two counts
        # (n + 1)p − 1 and (n + 1)p are equally likely: the larger is torch's (the only mode).
        n = params["total_count"]
        return np.minimum(np.floor((n + 1.0) * success_failure(params)[0]), n)

    def _entropy(self, params, parametrization, options):
        n = params["total_count"]
        p, q = success_failure(params)
        lo, hi = count_window(n * p, np.sqrt(n * p * q), n)
        expanded = {k: v[..., None] for k, v in params.items()}
        return entropy_over_counts(
            lambda k: self._log_prob(expanded, k, parametrization, options), lo, hi
        )


_COUNT = ParamInfo(0, "nonnegative_integer", integer=True)
BINOMIAL = Binomial(
    name="Binomial",
    parametrizations={
        "probs": {"total_count": _COUNT, "probs": ParamInfo(0, "unit_interval")},
        "logits": {"total_count": _COUNT, "logits": ParamInfo(0, "real")},
    },
    value=ValueInfo(0, "nonnegative_integer", discrete=True),
)
