"""One case in one framework, dtype and device: what a check evaluates.

Every call into the framework goes through :meth:`Subject.framework_call`, which turns any
exception into a :class:`FrameworkError` naming the stage — so a framework that raises becomes a
failing item with its own message, never a harness crash.
"""

from __future__ import annotations

import contextlib
import dataclasses
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from conformance import timing
from conformance.adapters.base import Adapter
from conformance.adapters.capabilities import Cdfs, DividesKL, Icdfs, Summarizes
from conformance.contexts import SEPARATOR, CallingContext, InputKind
from conformance.kinds import Kind
from conformance.registry import Binding

if TYPE_CHECKING:
    from conformance.answers.case import CheckedCase, InputLayout
    from conformance.answers.draws import DrawLaw
    from conformance.answers.expectations import Expectations
    from conformance.answers.gradients import GradExpectation
    from conformance.answers.values import Expected, Inputs, SiteExpectation


class FrameworkError(Exception):
    """The framework raised during ``stage`` (build, log_prob, grad, …)."""

    def __init__(self, stage: str, exc: BaseException) -> None:
        super().__init__(stage, exc)
        self.stage = stage
        self.exc = exc
        # An adapter that replays a kept failure instead of raising it afresh (NumPyro's
        # executable store) says where it was first raised.
        frames = traceback.extract_tb(exc.__traceback__)
        here = f"{frames[-1].filename}:{frames[-1].lineno}" if frames else ""
        self.where = getattr(exc, "__conformance_where__", None) or here

    @property
    def kind(self) -> Kind:
        """``memory`` for an allocation that failed (a leak under the worker's memory limit),
        else ``raises``."""
        return Kind.MEMORY if isinstance(self.exc, MemoryError) else Kind.RAISES

    def __str__(self) -> str:
        name = type(self.exc).__qualname__
        module = type(self.exc).__module__
        qual = name if module in ("builtins", None) else f"{module}.{name}"
        text = str(self.exc).strip()
        return f"{self.stage} raised {qual}: {text}" + (
            f"\n  at {self.where}" if self.where else ""
        )


@dataclass(frozen=True, eq=False)
class Subject:
    """Built by :class:`~conformance.run.subject_factory.SubjectFactory`; a check reads the oracle's
    answers only through it (``expected``, ``gradient``, ``site``, ``derived``)."""

    adapter: Adapter
    binding: Binding
    dtype: str
    device: str
    expectations: Expectations
    #: Property mode's hypothesis examples per item (0: off), from the run's settings.
    property_examples: int = 0
    #: Added to every sampling item's seed (``--sample-seed``; calibration runs vary it).
    sample_seed: int = 0
    #: How the framework is called, for a calling-context item (None: the suite's own way).
    context: CallingContext | None = None

    @property
    def case(self) -> CheckedCase:
        return self.expectations.case

    @property
    def inputs(self) -> Inputs:
        return self.expectations.inputs

    @property
    def expected(self) -> Expected:
        return self.expectations.expected

    @property
    def gradient(self) -> GradExpectation:
        """The oracle's gradient, cotangent and tolerances, in this binding's structures."""
        return self.expectations.gradient

    def structure(self, name: str) -> str:
        """The structure a derivative by parameter ``name`` is compared in for this binding."""
        return self.expectations.structure(name)

    @property
    def law(self) -> DrawLaw:
        """The oracle's law of this case's draws."""
        return self.expectations.law

    def draw_seed(self, salt: str) -> int:
        """The seed of one sampling item: fixed by case, check and dtype (and ``sample_seed``)."""
        import zlib

        key = f"{self.case.file}::{self.case.id}::{self.dtype}::{salt}::{self.sample_seed}"
        return zlib.crc32(key.encode())

    @property
    def summed_gradient(self) -> GradExpectation:
        """The oracle's gradient of log_prob's plain sum (a model's log density)."""
        return self.expectations.summed_gradient

    @property
    def case_shape(self) -> InputLayout:
        """The case's inputs as a calling context reads them: names, dims, dtypes, traced."""
        return self.expectations.case_shape

    @property
    def case_id(self) -> str:
        """The item's case id: the case's, and its calling context's name after it."""
        own = self.case.id  # a case that pins its context has it in its id already
        if self.context is None or self.case.context is not None:
            return own
        return f"{own}{SEPARATOR}{self.context.name}"

    @property
    def event_ranks(self) -> dict[str, int]:
        return self.expectations.event_ranks

    def site(self, salt: str, prefix: tuple[int, ...]) -> SiteExpectation:
        """A sample site's value (sample-shape ``prefix``) and the oracle's answer there."""
        return self.expectations.site(salt, prefix)

    def derived(self, shapes: tuple) -> Subject:
        """This subject on the case with the drawn batch shapes (property mode)."""
        return dataclasses.replace(self, expectations=self.expectations.with_batch_shapes(shapes))

    def eagerly(self) -> Subject:
        """This subject evaluated op by op (itself where that is how its framework runs)."""
        eager = self.adapter.eager()
        return self if eager is self.adapter else dataclasses.replace(self, adapter=eager)

    @property
    def expects_type_error(self) -> bool:
        """Whether the binding declares it rejects this case's value dtype with a TypeError."""
        return not self.binding.accepts_value_dtype(self.case.spec.value_dtype)

    @property
    def expects_validation_error(self) -> bool:
        """Whether, by its declared validation, the framework must raise ValueError here."""
        exp = self.expected
        declared = self.adapter.binding_validation(self.binding)
        bad_params = not bool(np.all(exp.params_valid))
        bad_values = not bool(np.all(exp.in_support[exp.params_valid]))
        return (declared in ("all", "params") and bad_params) or (declared == "all" and bad_values)

    def declared_tolerance(
        self, tol: np.ndarray, expected: np.ndarray, normwise: bool = False
    ) -> np.ndarray:
        """``tol`` widened to a tolerance the registry declares for this binding (if any).

        Declared for paths that are approximate by design (GPyTorch's iterative solver): a
        relative tolerance, elementwise on (1 + |log_prob|), normwise on a gradient.
        """
        rtol = self.binding.tolerance.get("rtol")
        if rtol is None:
            return tol
        with np.errstate(invalid="ignore"):
            magnitude = np.abs(np.where(np.isfinite(expected), expected, 0.0))
            scale = (
                np.full_like(magnitude, magnitude.max() if magnitude.size else 0.0)
                if normwise
                else 1.0 + magnitude
            )
        return np.maximum(tol, rtol * scale)

    @property
    def label(self) -> str:
        label = f"{self.adapter.name} {self.adapter.version()}, {self.dtype}, {self.device}"
        return f"{label}, context {self.context.name}" if self.context else label

    def shapes_line(self) -> str:
        parts = [f"{k} {tuple(v)}" for k, v in self.inputs.shapes().items()]
        return ", ".join(parts) + f" → log_prob {self.expected.log_prob_shape}"

    @contextlib.contextmanager
    def framework_call(self, stage: str) -> Iterator[None]:
        try:
            with timing.phase("framework"):
                yield
        except Exception as exc:
            raise FrameworkError(stage, exc) from exc

    def array(self, array: np.ndarray) -> Any:
        with self.framework_call("convert inputs"):
            return self.adapter.asarray(array, self.device)

    def param(self, name: str, array: np.ndarray) -> Any:
        """A parameter as the framework takes it: a static one (a count, a dimension) as a
        Python scalar, any other as the framework's array."""
        return array.item() if name in self.inputs.static else self.array(array)

    def of_kind(self, name: str, array: np.ndarray, kind: InputKind) -> Any:
        """An input as a calling context gives it: the framework's array, a NumPy array (a
        NumPy scalar when 0-d, as a reduction returns it), or Python numbers (a float or int
        when 0-d, else a nested list). A static parameter is always a Python number."""
        if name in self.inputs.static:
            return array.item()
        if kind is InputKind.NATIVE:
            return self.array(array)
        if kind is InputKind.NUMPY:
            return array[()] if array.ndim == 0 else np.array(array)
        return array.tolist()

    def params(self) -> dict[str, Any]:
        return {k: self.param(k, v) for k, v in self.inputs.framework_params().items()}

    def value(self) -> Any:
        return self.array(self.inputs.framework_value())

    def build(self, params: dict[str, Any] | None = None) -> Any:
        params = self.params() if params is None else params
        with self.framework_call("build"):
            return self.adapter.construct(self.binding, params)

    def log_prob(self, dist: Any, value: Any | None = None) -> Any:
        value = self.value() if value is None else value
        with self.framework_call("log_prob"):
            return self.adapter.log_prob(dist, value)

    def implements(self, summary: str) -> bool:
        """Whether the framework's class defines ``summary`` (read as its users read it)."""
        return isinstance(self.adapter, Summarizes) and self.adapter.implements(
            self.binding, summary
        )

    def summaries(self, names: tuple[str, ...]) -> dict[str, np.ndarray | FrameworkError]:
        """Each summary of the built distribution as a NumPy array, or the error reading it
        raised (named by the summary: one that raises leaves the others their values)."""
        adapter = self.adapter
        assert isinstance(adapter, Summarizes)  # the check's operation is offered
        params = self.params()
        with self.framework_call("build"):
            found = adapter.summaries(self.binding, params, names)
        out: dict[str, np.ndarray | FrameworkError] = {}
        for name in names:
            value = found[name]
            if isinstance(value, Exception):
                out[name] = FrameworkError(name, value)
                continue
            try:
                out[name] = self.numpy(value, f"read {name}")
            except FrameworkError as exc:
                out[name] = exc
        return out

    def cdf(self) -> np.ndarray:
        """``dist.cdf(value)`` as a NumPy array."""
        adapter = self.adapter
        assert isinstance(adapter, Cdfs)  # the check's operation is offered
        params, value = self.params(), self.value()
        with self.framework_call("cdf"):
            found = adapter.cdf(self.binding, params, value)
        return self.numpy(found, "read cdf")

    def icdf(self, q: np.ndarray) -> np.ndarray:
        """``dist.icdf(q)`` as a NumPy array, ``q`` given in the run's dtype."""
        adapter = self.adapter
        assert isinstance(adapter, Icdfs)  # the check's operation is offered
        params, probs = self.params(), self.array(np.asarray(q).astype(self.dtype))
        with self.framework_call("icdf"):
            found = adapter.icdf(self.binding, params, probs)
        return self.numpy(found, "read icdf")

    @property
    def q_binding(self) -> Binding:
        """How the framework builds q of a KL case (the plan made the item only where it can)."""
        q = self.case.kl_q
        assert q is not None, "a KL case's q"
        found = self.adapter.binding(q.family, q.parametrization)
        assert not isinstance(found, str), found
        return found

    def kl_other(self) -> tuple[str, Binding, Inputs] | None:
        """q of a KL case as a reproducer writes it: the function that divides, q's binding
        and inputs (None for any other case)."""
        if self.case.kl_q is None or not isinstance(self.adapter, DividesKL):
            return None
        return self.adapter.kl_function, self.q_binding, self.expectations.q_inputs

    def kl(self) -> np.ndarray:
        """``kl_divergence(p, q)`` of a KL case as a NumPy array."""
        adapter = self.adapter
        assert isinstance(adapter, DividesKL)  # the check's operation is offered
        q = self.expectations.q_inputs
        q_params = {
            k: v.item() if k in q.static else self.array(v) for k, v in q.framework_params().items()
        }
        p_params = self.params()
        with self.framework_call("kl_divergence"):
            found = adapter.kl_divergence(self.binding, p_params, self.q_binding, q_params)
        return self.numpy(found, "read kl_divergence")

    def kl_gradient(self, wrt: list[str], cotangent: np.ndarray) -> dict[str, np.ndarray | None]:
        """∂(Σ cotangent · KL)/∂x of a KL case for each x of ``wrt``, as NumPy arrays (None:
        the framework gives no gradient)."""
        adapter = self.adapter
        assert isinstance(adapter, DividesKL)
        q = self.expectations.q_inputs
        q_params = {
            k: v.item() if k in q.static else self.array(v) for k, v in q.framework_params().items()
        }
        p_params = self.params()
        ct = self.array(cotangent.astype(self.dtype))
        with self.framework_call("kl gradient"):
            found = adapter.kl_vjp(self.binding, p_params, self.q_binding, q_params, ct, wrt)
        return {
            k: None if g is None else self.numpy(g, f"read the gradient by {k}")
            for k, g in found.items()
        }

    def numpy(self, array: Any, stage: str = "read result") -> np.ndarray:
        with self.framework_call(stage):
            return np.asarray(self.adapter.to_numpy(array))
