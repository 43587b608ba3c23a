"""The calling-context axis: how a user calls a distribution, beyond which numbers go in.

Every other item calls a framework one way (its own arrays, its settings switched to suit the
item, ``dist.log_prob`` called directly). A calling context names another way, in three parts:

* the *kind* of each input (:class:`InputKind`): the framework's own array, a NumPy array, or a
  Python number (a nested list for an input with dimensions);
* a *global mode* the process runs under (:class:`Mode`): JAX's x64 switched on with float32
  inputs, torch's default dtype float64 with float32 inputs, validation switched on or off, torch's
  ``no_grad`` and ``inference_mode`` (``default`` leaves every setting at the framework's own);
* the *call* (:class:`Call`): ``log_prob`` itself, under a transform that traces the parameters
  (``grad``, ``func-grad``, ``jit``, ``vmap``), or through a model API (NumPyro's
  ``log_density`` of a one-site model, the site observed or latent under ``substitute``).

A :class:`CallingContext` is one such way, named in the item's id (``scalar:x64.jit.value-numpy``).
What each framework offers, how it converts each kind and which dtype its promotion rules give
are its adapter's to say; which contexts run is :mod:`conformance.cases.context_design`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum


class InputKind(StrEnum):
    """What an input is handed to the framework as."""

    NATIVE = "native"  # the framework's own array (a torch tensor, a jax.Array)
    NUMPY = "numpy"  # a NumPy array; a 0-d input as a NumPy scalar (what a reduction returns)
    PYTHON = "python"  # a Python float or int; an input with dimensions as a nested list


class Mode(StrEnum):
    """A global setting the call runs under (restored when the item ends)."""

    DEFAULT = "default"  # every setting at the framework's own default (validation included)
    X64 = "x64"  # jax_enable_x64 on, float32 inputs
    DEFAULT_FLOAT64 = "default-float64"  # torch.set_default_dtype(torch.float64), float32 inputs
    VALIDATE_ON = "validate-on"  # the framework's global validation switch, on
    VALIDATE_OFF = "validate-off"  # … off
    NO_GRAD = "no_grad"  # torch.no_grad()
    INFERENCE_MODE = "inference_mode"  # torch.inference_mode()


#: Modes whose point is float32 inputs in a process set up for float64: float32 items only.
FLOAT32_MODES = frozenset({Mode.X64, Mode.DEFAULT_FLOAT64})


class Call(StrEnum):
    """How log_prob is reached."""

    LOG_PROB = "log_prob"  # dist.log_prob(value), as the framework evaluates by default
    GRAD = "grad"  # the framework's gradient (autograd; jax.grad under jax.jit) of Σ c·log_prob
    FUNC_GRAD = "func-grad"  # torch.func.grad of the same
    JIT = "jit"  # construction and log_prob under jax.jit, the parameters its arguments
    VMAP = "vmap"  # vmap over a new leading axis of one parameter (the value not mapped)
    LOG_DENSITY = "log_density"  # numpyro.infer.util.log_density, the site observed (obs=)
    LOG_DENSITY_JIT = "log_density-jit"  # … under jax.jit
    LOG_DENSITY_GRAD = "log_density-grad"  # its gradient in the parameters, under jax.jit
    LATENT = "latent"  # log_density with the site latent, its value given by substitute
    LATENT_GRAD = "latent-grad"  # its gradient in the latent value, under jax.jit


#: Calls that differentiate: they need an input to trace (a float parameter or the value).
GRADIENT_CALLS = frozenset({Call.GRAD, Call.FUNC_GRAD, Call.LOG_DENSITY_GRAD, Call.LATENT_GRAD})
#: Calls whose result is the model's log density, log_prob summed (a scalar).
DENSITY_CALLS = frozenset(
    {Call.LOG_DENSITY, Call.LOG_DENSITY_JIT, Call.LOG_DENSITY_GRAD, Call.LATENT, Call.LATENT_GRAD}
)
#: Calls whose gradient is of the summed log density (cotangent 1), not of Σ c·log_prob.
SUMMED_GRADIENT_CALLS = frozenset({Call.LOG_DENSITY_GRAD, Call.LATENT_GRAD})
#: Size of the leading axis a ``vmap`` call maps.
VMAP_SIZE = 2


@dataclass(frozen=True)
class CallingContext:
    """One way of calling: the mode, the call, and the kind of every input that is not the
    framework's own array (``kinds``: sorted (input, kind) pairs; ``value`` is an input)."""

    mode: Mode
    call: Call
    kinds: tuple[tuple[str, InputKind], ...] = ()

    @classmethod
    def of(
        cls, mode: str, call: str, kinds: Mapping[str, str] | None = None, order: tuple = ()
    ) -> CallingContext:
        """A context from plain names; ``order`` (the family's inputs) orders the kinds in
        the name, native ones left out."""
        given = {k: InputKind(v) for k, v in (kinds or {}).items()}
        rank = {name: i for i, name in enumerate(order)}
        pairs = sorted(
            ((k, v) for k, v in given.items() if v is not InputKind.NATIVE),
            key=lambda kv: (rank.get(kv[0], len(rank)), kv[0]),
        )
        return cls(Mode(mode), Call(call), tuple(pairs))

    def kind(self, name: str) -> InputKind:
        """The kind input ``name`` is given as (the framework's own array unless listed)."""
        return dict(self.kinds).get(name, InputKind.NATIVE)

    @property
    def name(self) -> str:
        """``<mode>.<call>[.<input>-<kind>]…``: what the item id shows after the case's id."""
        parts = [self.mode.value, self.call.value]
        parts += [f"{name}-{kind.value}" for name, kind in self.kinds]
        return ".".join(parts)

    def as_yaml(self) -> dict:
        """The case file's ``context:`` mapping that pins this context."""
        out: dict = {"mode": self.mode.value, "call": self.call.value}
        if self.kinds:
            out["kinds"] = {name: kind.value for name, kind in self.kinds}
        return out


#: Separates a case's id from its context's name in an item id (case ids never hold it).
SEPARATOR = ":"


@dataclass(frozen=True)
class ContextAxis:
    """What one framework offers on the axis: its modes and calls, the kinds it is given its
    parameters and its value as, and the (mode, call) pairs that cannot go together (a
    gradient under ``no_grad``)."""

    modes: tuple[Mode, ...]
    calls: tuple[Call, ...]
    param_kinds: tuple[InputKind, ...] = (InputKind.NATIVE,)
    value_kinds: tuple[InputKind, ...] = (InputKind.NATIVE,)
    incompatible: frozenset[tuple[Mode, Call]] = frozenset()
    #: Whether a traced input (the one a gradient or vmap call takes) must be the framework's
    #: own array (torch's autograd and torch.func take tensors; jax.grad takes numbers too).
    traced_native: bool = False
    #: Rows per family × parametrisation × framework of a file, where fewer than every mode
    #: (0: every mode once); the modes then rotate from family to family.
    rows: int = 0

    def offers(self, context: CallingContext) -> str | None:
        """Why this framework cannot call ``context`` (then no item), or None."""
        if context.mode not in self.modes:
            return f"offers no mode {context.mode.value!r}"
        if context.call not in self.calls:
            return f"offers no call {context.call.value!r}"
        if (context.mode, context.call) in self.incompatible:
            return f"cannot call {context.call.value!r} under {context.mode.value!r}"
        return None


@dataclass(frozen=True)
class ContextInput:
    """One input as a context gives it: its kind, the NumPy dtype of its numbers (the item's
    float dtype, or an integer dtype), its dims, and whether it is the value."""

    name: str
    kind: InputKind
    dtype: str
    ndim: int
    is_value: bool = False

    @property
    def floating(self) -> bool:
        return self.dtype.startswith("float")


@dataclass(frozen=True)
class ContextDtypes:
    """What a framework's promotion rules make of a context's inputs: the dtype each input
    takes inside the framework, and the dtype of the result."""

    inputs: dict[str, str]
    result: str


#: Float dtypes in order of width: an input the framework takes narrower than the item's
#: dtype has lost digits before anything ran, by the rules (the design calls no such row).
FLOAT_WIDTH = {"float32": 1, "float64": 2}


def widest(dtypes: list[str], default: str) -> str:
    """The float dtype of a result from its float inputs' dtypes (``default`` when none)."""
    floats = [d for d in dtypes if d in FLOAT_WIDTH]
    return max(floats, key=FLOAT_WIDTH.__getitem__) if floats else default


@dataclass(frozen=True)
class ContextOutcome:
    """What a call returned, in the framework's own arrays: log_prob (the summed log density
    for a model call; stacked over the mapped axis for vmap), and the gradient of each traced
    input (empty where the call takes none)."""

    log_prob: object
    grads: Mapping[str, object]
