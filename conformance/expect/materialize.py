"""Turn a case into concrete inputs for one dtype, and into the oracle's expectations for them.

Inputs are generated in float64, rounded to the run's dtype, and exactly those rounded numbers go
to the oracle, so a diff measures the framework's arithmetic rather than input rounding. Both
steps are cached per (case, dtype) in the process: every framework and check shares them.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from conformance import reference, timing
from conformance.answers.values import Expected, Inputs
from conformance.cases.case_model import SampleSpec
from conformance.cases.generators import GENERATORS
from conformance.cases.loader import Case
from conformance.dtypes import round_to, value_numpy_dtype


class CaseInputError(ValueError):
    """A case whose arrays cannot be built (e.g. a literal matrix that is not positive-definite)."""


def _build(spec) -> np.ndarray:
    if hasattr(spec, "generator"):
        options = spec.model_dump(exclude={"generator", "shape", "seed"})
        return np.asarray(GENERATORS[spec.generator](tuple(spec.shape), spec.seed, **options))
    return np.asarray(spec, dtype=np.float64)


@lru_cache(maxsize=4096)
def float64_inputs(case: Case) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The case's arrays before rounding (float64), sampling the value from the oracle if asked."""
    if case.context is not None and case.base is not None:
        return float64_inputs(case.base)  # a calling context calls with the case's own inputs
    family = reference.get_family(case.family)
    if case.derive is not None and case.base is not None:
        params, value = _derived(case, draw=True)
        # The plan took the variant's shapes from a stand-in of its fresh value's shape.
        got = tuple(family.log_prob_shape(params, value, case.parametrization))
        if got != tuple(case.log_prob_shape):
            raise CaseInputError(
                f"variant {case.variant}: its drawn value gives log_prob shape {got}, "
                f"the plan expected {tuple(case.log_prob_shape)}"
            )
        for array in (*params.values(), value):
            array.setflags(write=False)
        return params, value
    try:
        params = {name: _build(spec) for name, spec in case.spec.params.items()}
        value_spec = case.spec.value
        if isinstance(value_spec, SampleSpec):
            value = _sample(family, params, value_spec, case.parametrization)
        else:
            value = _build(value_spec)
    except (ValueError, ArithmeticError, np.linalg.LinAlgError, reference.OracleError) as exc:
        # ArithmeticError: NumPy's samplers raise OverflowError for ranges such as [-1e308, 1e308].
        raise CaseInputError(f"cannot build the case's arrays: {exc}") from exc
    if case.spec.value_dtype != "float":
        value = np.round(value)
    for array in (*params.values(), value):
        array.setflags(write=False)
    return params, value


def _derived(case: Case, draw: bool) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """A derived case's float64 arrays (new copies), from its base's: see ``Case.derive``."""
    assert case.derive is not None and case.base is not None
    base_params, base_value = float64_inputs(case.base)
    params, value = case.derive(dict(base_params), base_value, draw)
    params = {k: np.array(v, dtype=np.float64) for k, v in params.items()}
    return params, np.array(value, dtype=np.float64)


def variant_params(case: Case) -> dict[str, np.ndarray]:
    """A broadcast variant's float64 parameters, without drawing its fresh value (what
    planning needs: the parameters decide which frameworks can run it)."""
    return _derived(case, draw=False)[0]


def _sample(family: reference.Family, params, value_spec: SampleSpec, parametrization: str):
    opts = value_spec.sample
    rng = np.random.default_rng(opts.seed)
    if opts.shape is None:
        return family.sample(params, tuple(opts.sample_shape or ()), rng, parametrization)
    return sample_with_batch(family, params, tuple(opts.shape), rng, parametrization)


def sample_with_batch(
    family: reference.Family,
    params,
    wanted: tuple[int, ...],
    rng: np.random.Generator,
    parametrization: str,
) -> np.ndarray:
    """A value whose batch part is ``wanted`` (which must broadcast with the batch shape).

    Draws at the broadcast of ``wanted`` and the batch shape, then keeps index 0 where
    ``wanted`` has size 1 or lacks the dim.
    """
    batch = family.batch_shape(params, parametrization)
    full = tuple(np.broadcast_shapes(wanted, batch))
    stretched = family.params_broadcast_to(params, full, parametrization)
    # The parameters carry the batch; a family without parameters (TruncatedPolyaGamma) has
    # none, so its draw takes the whole shape as its sample shape ((), as before, for others).
    own = family.batch_shape(stretched, parametrization)
    extra = full[: len(full) - len(own)]
    draw = np.asarray(family.sample(stretched, extra, rng, parametrization))
    lead = len(full) - len(wanted)
    index = tuple(
        0 if i < lead else (slice(0, 1) if wanted[i - lead] == 1 else slice(None))
        for i in range(len(full))
    )
    return np.asarray(draw[index])


@lru_cache(maxsize=4096)
@timing.timed("inputs")
def inputs_for(case: Case, dtype: str) -> Inputs:
    params64, value64 = float64_inputs(case)
    pdtypes: dict[str, str] = dict(case.spec.param_dtypes)
    params = {
        k: round_to(v, dtype) if pdtypes.get(k, "float") == "float" else np.round(v)
        for k, v in params64.items()
    }
    vdtype = value_numpy_dtype(case.spec.value_dtype, dtype)
    value = round_to(value64, dtype) if vdtype.kind == "f" else value64.astype(np.float64)
    info = reference.get_family(case.family).params(case.parametrization)
    static = frozenset(k for k, p in info.items() if p.static)
    return Inputs(params, value, dtype, vdtype, case.parametrization, pdtypes, static)


@lru_cache(maxsize=4096)
def evaluation_for(case: Case, dtype: str, options: tuple = ()) -> reference.Evaluation:
    """The oracle's one evaluation of ``case``'s inputs in ``dtype`` with a binding's declared
    conventions (sorted (key, value) pairs): log_prob, support, validity and gradients,
    shared by every expectation of those inputs (:func:`expected_for`, the gradient's)."""
    inputs = inputs_for(case, dtype)
    family = reference.get_family(case.family)
    try:
        return family.evaluate(inputs.params, inputs.value, inputs.parametrization, dict(options))
    except (ValueError, np.linalg.LinAlgError) as exc:
        raise CaseInputError(f"the oracle cannot evaluate this case: {exc}") from exc


@lru_cache(maxsize=4096)
@timing.timed("oracle")
def expected_for(case: Case, dtype: str, options: tuple = ()) -> Expected:
    """The oracle's answer for ``case`` in ``dtype``; ``options`` are a binding's declared
    conventions as sorted (key, value) pairs."""
    return expected_from(evaluation_for(case, dtype, options), options)


def sensitivity(evaluation: reference.Evaluation) -> np.ndarray:
    """Σ over inputs and elements of |x|·|∂log_prob/∂x| (normwise for matrices), elementwise.

    How far log_prob moves when every input moves by one relative unit: the condition number
    the tolerance scales with (see :mod:`conformance.compare`).
    """
    out = np.zeros(evaluation.inputs.lp_shape)
    for name, grad in evaluation.gradients.items():
        rank = evaluation.ranks[name]
        x = evaluation.input(name)
        axes = tuple(range(grad.ndim - rank, grad.ndim))
        with np.errstate(invalid="ignore", over="ignore"):
            term = np.abs(x * grad).sum(axis=axes) if axes else np.abs(x * grad)
            if rank == 2:  # a backward-stable factorisation perturbs by ‖X‖, not |X_ij|
                norm = np.sqrt((x * x).sum(axis=axes)) * np.sqrt((grad * grad).sum(axis=axes))
                term = np.maximum(term, norm * np.sqrt(x.shape[-1]))
        out = out + np.nan_to_num(term, nan=0.0, posinf=0.0)
    return out


def expected_from(evaluation: reference.Evaluation, options: tuple = ()) -> Expected:
    """The expectations of one evaluation (computing its log_prob, support, validity and the
    gradients the sensitivity needs, once)."""
    try:
        log_prob = evaluation.log_prob
        in_support = np.asarray(evaluation.in_support)
        params_valid = np.asarray(evaluation.params_valid)
        spread = sensitivity(evaluation)
    except (ValueError, np.linalg.LinAlgError) as exc:
        raise CaseInputError(f"the oracle cannot evaluate this case: {exc}") from exc
    b = evaluation.inputs
    event_size = int(np.prod(b.event_shape)) if b.event_shape else 1
    return Expected(
        batch_shape=b.batch_shape,
        event_shape=b.event_shape,
        log_prob_shape=b.lp_shape,
        log_prob=log_prob,
        sensitivity=np.where(in_support & params_valid, spread, 0.0),
        event_size=event_size,
        in_support=in_support,
        params_valid=params_valid,
        options=options,
    )
