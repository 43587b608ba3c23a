"""Case format v1: the pydantic schema of one YAML case, and of a whole case file.

The schema checks structure only (types, names, option sets). What needs family knowledge —
parameter sets, event ranks, broadcasting — is checked by :mod:`conformance.cases.validate`.
``conformance schema`` exports this model as JSON Schema into ``cases/case.schema.json``.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any, Final, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    NonNegativeInt,
    StringConstraints,
    Tag,
    field_validator,
    model_validator,
)
from typing_extensions import TypeAliasType

from conformance.contexts import Call, InputKind, Mode
from conformance.dtypes import FloatName, ValueDType

FORMAT_VERSION: Final = 1
#: The id prefix of every generated edge case (``edge-<input>-<point>``): the plan's edge
#: generator gives it, known-failure files match on it.
EDGE_ID_PREFIX: Final = "edge-"

CaseId = Annotated[
    str,
    StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", min_length=1, max_length=120),
]
#: The most dims an array of a case may have (NumPy allows 32 at most, frameworks fewer).
MAX_RANK = 16
Shape = Annotated[list[NonNegativeInt], Field(max_length=MAX_RANK)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


# ----- generators ------------------------------------------------------------------------------
class _GeneratorBase(_Strict):
    shape: Shape = Field(description="Full array shape, batch dims first.")
    seed: NonNegativeInt = Field(description="PCG64 seed; the same seed gives the same array.")


class NormalGen(_GeneratorBase):
    generator: Literal["normal"]
    loc: float = 0.0
    scale: Annotated[float, Field(gt=0)] = 1.0


class UniformGen(_GeneratorBase):
    generator: Literal["uniform"]
    low: float = 0.0
    high: float = 1.0


class PositiveGen(_GeneratorBase):
    generator: Literal["positive"]
    low: Annotated[float, Field(gt=0)] = 0.5
    high: Annotated[float, Field(gt=0)] = 2.0


class ProbabilityGen(_GeneratorBase):
    generator: Literal["probability"]
    low: Annotated[float, Field(ge=0, le=1)] = 0.05
    high: Annotated[float, Field(ge=0, le=1)] = 0.95


class SimplexGen(_GeneratorBase):
    generator: Literal["simplex"]
    concentration: Annotated[float, Field(gt=0)] = 1.0


class SpdGen(_GeneratorBase):
    generator: Literal["spd"]
    min_eigenvalue: Annotated[float, Field(gt=0)] = 0.5
    max_eigenvalue: Annotated[float, Field(gt=0)] = 2.0
    diagonal: bool = False
    blocks: Annotated[int, Field(ge=1)] | None = Field(
        default=None, description="Block-diagonal with this many equal dense blocks."
    )
    kronecker: (
        Annotated[list[Annotated[int, Field(ge=1)]], Field(min_length=2, max_length=2)] | None
    ) = Field(
        default=None, description="kron(A, B) of SPD factors of these sizes (their product is n)."
    )


class CholeskyGen(_GeneratorBase):
    generator: Literal["cholesky"]
    diag_low: Annotated[float, Field(gt=0)] = 0.5
    diag_high: Annotated[float, Field(gt=0)] = 1.5
    off_scale: Annotated[float, Field(ge=0)] = 0.5


class IntegersGen(_GeneratorBase):
    generator: Literal["integers"]
    low: int = 0
    high: int = 1


GeneratorSpec = Annotated[
    NormalGen
    | UniformGen
    | PositiveGen
    | ProbabilityGen
    | SimplexGen
    | SpdGen
    | CholeskyGen
    | IntegersGen,
    Field(discriminator="generator"),
]


# ----- values sampled from the oracle ----------------------------------------------------------
class SampleOptions(_Strict):
    seed: NonNegativeInt
    sample_shape: Shape | None = Field(
        default=None, description="Leading dims prepended to the batch shape."
    )
    shape: Shape | None = Field(
        default=None,
        description="The value's whole batch part; must broadcast with the batch shape. Where it "
        "has size 1 (or lacks a dim) the draw from batch index 0 is kept.",
    )

    @model_validator(mode="after")
    def _one_shape(self) -> SampleOptions:
        if self.sample_shape is not None and self.shape is not None:
            raise ValueError("give either sample_shape or shape, not both")
        return self


class SampleSpec(_Strict):
    sample: SampleOptions


# ----- literal arrays --------------------------------------------------------------------------
LiteralArray = TypeAliasType(
    "LiteralArray",
    "float | int | list[LiteralArray]",
)


def _literal_shape(value: Any, where: str = "", depth: int = 0) -> tuple[int, ...]:
    """Shape of a nested list of numbers; raises for ragged or non-numeric content.

    Also refuses what NumPy cannot hold: more than :data:`MAX_RANK` dims, or an integer beyond
    float64's range (YAML ints are unbounded), so no later conversion can overflow.
    """
    if isinstance(value, bool) or not isinstance(value, int | float | list):
        raise ValueError(f"literal array{where} holds {type(value).__name__}, not a number")
    if not isinstance(value, list):
        if isinstance(value, int) and abs(value) > sys.float_info.max:
            raise ValueError(f"literal array{where} holds an integer beyond float64's range")
        return ()
    if depth >= MAX_RANK:
        raise ValueError(f"literal array{where} has more than {MAX_RANK} dims")
    if not value:
        return (0,)
    shapes = {_literal_shape(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value)}
    if len(shapes) != 1:
        raise ValueError(f"literal array{where} is ragged (rows of shapes {sorted(shapes)})")
    return (len(value), *shapes.pop())


def _array_kind(value: Any) -> str:
    if isinstance(value, dict):
        return "sample" if "sample" in value else "generator"
    if isinstance(value, SampleSpec):
        return "sample"
    if isinstance(value, BaseModel):
        return "generator"
    return "literal"


ArraySpec = Annotated[
    Annotated[GeneratorSpec, Tag("generator")] | Annotated[LiteralArray, Tag("literal")],
    Discriminator(_array_kind),
]
ValueSpec = Annotated[
    Annotated[GeneratorSpec, Tag("generator")]
    | Annotated[SampleSpec, Tag("sample")]
    | Annotated[LiteralArray, Tag("literal")],
    Discriminator(_array_kind),
]


class ExpectSpec(_Strict):
    """Shapes the case author states; the oracle must agree, and so must every framework."""

    batch_shape: Shape | None = None
    event_shape: Shape | None = None
    log_prob_shape: Shape | None = None


class ContextSpec(_Strict):
    """A calling context the case pins (see :mod:`conformance.contexts`): the exact way a user
    called the framework, run as the case's one ``context`` item per framework and dtype."""

    mode: str = Field(
        default="default",
        description="The global mode: " + ", ".join(m.value for m in Mode) + ".",
        json_schema_extra={"enum": [m.value for m in Mode]},
    )
    call: str = Field(
        default="log_prob",
        description="How log_prob is reached: " + ", ".join(c.value for c in Call) + ".",
        json_schema_extra={"enum": [c.value for c in Call]},
    )
    kinds: dict[str, str] = Field(
        default_factory=dict,
        description="Input (a parameter, or value) → what it is given as: "
        + ", ".join(k.value for k in InputKind)
        + " (python: a number, or a nested list for an input with dims); unlisted inputs are "
        "the framework's own arrays.",
        json_schema_extra={"additionalProperties": {"enum": [k.value for k in InputKind]}},
    )


class KLSpec(_Strict):
    """q of KL(p‖q), where p is the case's own family and parameters; the batch shapes of the
    two sides broadcast against each other."""

    family: str = Field(description="q's family, as in the registry, e.g. Gamma.")
    parametrization: str | None = Field(default=None, description="q's parametrisation.")
    params: dict[str, ArraySpec]
    param_dtypes: dict[str, Literal["float", "int32", "int64"]] = Field(
        default_factory=dict, description="q's parameters whose dtype is not the run's float."
    )

    @field_validator("params", mode="after")
    @classmethod
    def _literals_rectangular(cls, v: Any) -> Any:
        for name, spec in v.items():
            if not isinstance(spec, BaseModel):
                _literal_shape(spec, f" {name}")
        return v


#: The value a KL case is given where it names none: the case reads no value, but every case
#: has one.
KL_CASE_VALUE: Final = {"sample": {"seed": 0}}


class CaseSpec(_Strict):
    """One case: a family, its parameters and a value, evaluated in each dtype and framework."""

    id: CaseId
    family: str = Field(description="Family name as in the registry, e.g. MultivariateNormal.")
    parametrization: str | None = Field(
        default=None, description="e.g. covariance_matrix | scale_tril | precision_matrix."
    )
    params: dict[str, ArraySpec]
    value: ValueSpec = Field(
        description="The value log_prob and the checks that read a value take (a KL case "
        "needs none)."
    )
    value_dtype: ValueDType = "float"
    param_dtypes: dict[str, Literal["float", "int32", "int64"]] = Field(
        default_factory=dict,
        description="Per-parameter dtype where it should not follow the run's float dtype "
        "(e.g. an integer total_count).",
    )
    dtypes: Annotated[list[FloatName], Field(min_length=1)] = ["float32", "float64"]
    frameworks: list[str] | None = Field(
        default=None, description="Default: every framework that offers the family."
    )
    checks: list[str] | None = Field(default=None, description="Default: every check.")
    grad_wrt: Annotated[list[str], Field(min_length=1)] | None = Field(
        default=None,
        description="The inputs the gradient checks differentiate and judge (parameter names, "
        "value); default: every differentiable one. At a boundary where one partial derivative "
        "does not exist, list the others so they are still checked.",
    )
    expect: ExpectSpec | None = None
    context: ContextSpec | None = Field(
        default=None,
        description="Pin a calling context (input kinds, a global mode, a call): the case runs "
        "as that one call, a 'context' item per framework that offers it.",
    )
    kl: KLSpec | None = Field(
        default=None,
        description="Make this a KL case: KL(p‖q) with p the case's family and parameters and "
        "q this one; the case runs the kl check only, in each framework that registers the pair.",
    )
    description: str = ""
    tags: list[str] = []

    @model_validator(mode="before")
    @classmethod
    def _kl_case_value(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("kl") is not None and "value" not in data:
            return {**data, "value": KL_CASE_VALUE}
        return data

    @field_validator("params", "value", mode="after")
    @classmethod
    def _literals_rectangular(cls, v: Any) -> Any:
        items = v.items() if isinstance(v, dict) else [("", v)]
        for name, spec in items:
            if not isinstance(spec, BaseModel):
                _literal_shape(spec, f" {name}" if name else "")
        return v

    @field_validator("dtypes", "frameworks", "checks", "grad_wrt", mode="after")
    @classmethod
    def _no_repeats(cls, v: list[str] | None) -> list[str] | None:
        if v is not None and len(set(v)) != len(v):
            raise ValueError(f"lists an entry twice: {v}")
        return v


class CaseFile(BaseModel):
    """The top level of a case file: an optional format version and defaults, then the cases."""

    model_config = ConfigDict(extra="forbid", strict=True)

    format: Literal[1] = FORMAT_VERSION
    defaults: dict[str, Any] = Field(
        default_factory=dict, description="Keys applied to every case unless the case sets them."
    )
    #: Each case is checked on its own by the loader, so one that is not even a mapping is that
    #: case's error, not the file's.
    cases: list[Any]


def literal_shape(value: Any) -> tuple[int, ...]:
    return _literal_shape(value)


class CaseFileSchema(BaseModel):
    """The exported JSON Schema's view of a whole file (cases fully typed, for editors)."""

    model_config = ConfigDict(extra="forbid", title="conformance case file (format v1)")

    format: Literal[1] = FORMAT_VERSION
    defaults: dict[str, Any] = Field(
        default_factory=dict, description="Keys applied to every case unless the case sets them."
    )
    cases: list[CaseSpec]


def json_schema() -> dict:
    schema = CaseFileSchema.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    # A file's `defaults:` may supply any key of a case, so no key is required per case in the
    # schema; the loader still reports a key missing after defaults are applied.
    schema["$defs"]["CaseSpec"].pop("required", None)
    return schema
