"""The typed record of one item: what results.json holds for it, built in one place.

A record is the item's static part (:class:`ItemStatic`, fixed before it runs), what the item
reported of itself (:class:`ItemResult`), and the outcome its phases gave. :func:`build_record`
is the only place one is made; :meth:`Record.to_json` and :meth:`Record.from_json` convert at
the file's boundary. results.json is flat: the static fields sit beside the outcome, in the
order the dataclasses list them, and a field an item does not have is left out.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast, get_args

from conformance.check_names import CheckName
from conformance.dtypes import FLOAT_DTYPES, FloatName

Outcome = Literal["passed", "failed", "error", "skipped", "xfailed", "xpassed"]
OUTCOMES: tuple[Outcome, ...] = get_args(Outcome)

#: A JSON object as read from results.json (metrics, arrays: their keys vary by check).
JsonObject = dict[str, Any]


@dataclass(frozen=True)
class KnownFailureRef:
    """A known-failure entry an item matched, as its record names it."""

    id: str
    kind: tuple[str, ...]
    reason: str
    link: str | None = None

    def to_json(self) -> JsonObject:
        return {"id": self.id, "kind": list(self.kind), "reason": self.reason, "link": self.link}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> KnownFailureRef:
        return cls(
            id=str(data.get("id")),
            kind=tuple(str(k) for k in data.get("kind") or ()),
            reason=str(data.get("reason") or ""),
            link=_str_or_none(data.get("link")),
        )


@dataclass(frozen=True)
class ItemStatic:
    """What an item is, fixed before it runs: its case, framework, dtype and check.

    A check item has every field; an unsupported item has no dtype, device or variant; a case
    that failed to load has its case, file, line and check alone (case and line may be None);
    an item known only by its nodeid has what the nodeid says.
    """

    case: str | None = None
    file: str | None = None
    line: int | None = None
    family: str | None = None
    parametrization: str | None = None
    framework: str | None = None
    package: str | None = None
    framework_version: str | None = None
    dtype: FloatName | None = None
    device: str | None = None
    check: str | None = None
    variant: str | None = None
    context: str | None = None
    known_failures: tuple[KnownFailureRef, ...] = ()

    def _written(self, name: str, value: object) -> bool:
        """Whether results.json carries field ``name``: set fields, and the ones an item of
        its kind always names even when empty (a check item's variant, a load error's case
        and line)."""
        if name == "known_failures":
            return bool(value)
        if value is not None:
            return True
        if name == "variant":
            return self.device is not None
        return name in ("case", "line") and self.check == CheckName.LOAD

    def to_json(self) -> JsonObject:
        out: JsonObject = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if self._written(f.name, value):
                out[f.name] = [k.to_json() for k in value] if f.name == "known_failures" else value
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ItemStatic:
        line = data.get("line")
        return cls(
            **{name: _str_or_none(data.get(name)) for name in _STATIC_TEXT},
            line=line if isinstance(line, int) else None,
            dtype=float_name(data.get("dtype")),
            known_failures=tuple(
                KnownFailureRef.from_json(k)
                for k in data.get("known_failures") or ()
                if isinstance(k, Mapping)
            ),
        )


_STATIC_TEXT = tuple(
    f.name
    for f in dataclasses.fields(ItemStatic)
    if f.name not in ("line", "dtype", "known_failures")
)


#: What a failure's context always writes, empty or not.
FAILURE_KEYS = ("reproducer", "source", "inputs", "arrays", "expected_shapes")


@dataclass(frozen=True)
class Attachments:
    """What a report shows beside a result: the reproducer, the case's YAML, the inputs and
    arrays of a failure, its expected shapes, and the framework's notes on how it evaluated."""

    reproducer: str | None = None
    source: str | None = None
    inputs: dict[str, JsonObject] | None = None
    arrays: JsonObject | None = None
    expected_shapes: dict[str, list[int]] | None = None
    framework_notes: JsonObject | None = None
    #: The warnings the framework raised while the item ran: its record keeps them, the run's
    #: summary does not (each is {"category", "message", "where"}).
    warnings: list[JsonObject] | None = None
    #: A failure's context: its keys are written even when empty (a failure without a script
    #: says ``"reproducer": null``). Not a key of its own in the file.
    of_failure: bool = False

    def to_json(self) -> JsonObject:
        out: JsonObject = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            kept = value is not None or (self.of_failure and f.name in FAILURE_KEYS)
            if kept and f.name != "of_failure":
                out[f.name] = value
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Attachments:
        return cls(
            reproducer=_str_or_none(data.get("reproducer")),
            source=_str_or_none(data.get("source")),
            inputs=_dict_or_none(data.get("inputs")),
            arrays=_dict_or_none(data.get("arrays")),
            expected_shapes=_dict_or_none(data.get("expected_shapes")),
            framework_notes=_dict_or_none(data.get("framework_notes")),
            warnings=_list_or_none(data.get("warnings")),
            of_failure="reproducer" in data,
        )


@dataclass(frozen=True)
class ItemResult:
    """What an item reports of itself when it ran: its failure kind, message, metrics and
    attachments (the outcome is pytest's, read from the phases)."""

    kind: str | None = None
    message: str | None = None
    metrics: JsonObject = field(default_factory=dict)
    attachments: Attachments = Attachments()

    def to_json(self) -> JsonObject:
        out: JsonObject = {"kind": self.kind, "message": self.message}
        if self.metrics:
            out["metrics"] = self.metrics
        extra = self.attachments.to_json()
        if extra:
            out["extra"] = extra
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ItemResult:
        metrics = data.get("metrics")
        extra = data.get("extra")
        return cls(
            kind=_str_or_none(data.get("kind")),
            message=_str_or_none(data.get("message")),
            metrics=metrics if isinstance(metrics, dict) else {},
            attachments=Attachments.from_json(extra if isinstance(extra, Mapping) else {}),
        )


@dataclass(frozen=True)
class Record:
    """One item's line of results.json: what it is, how it ended, and what it carries."""

    nodeid: str
    static: ItemStatic
    outcome: Outcome
    kind: str | None
    message: str
    metrics: JsonObject = field(default_factory=dict)
    #: Seconds over its phases; None for an item that never reported.
    duration: float | None = None
    attachments: Attachments = Attachments()
    #: Messages of earlier runs that crashed their worker (``--crash-retries``).
    crashes: tuple[str, ...] = ()

    @property
    def failing(self) -> bool:
        return self.outcome in ("failed", "error")

    def to_json(self) -> JsonObject:
        out: JsonObject = {"nodeid": self.nodeid, **self.static.to_json()}
        out.update(outcome=self.outcome, kind=self.kind, message=self.message, metrics=self.metrics)
        if self.duration is not None:
            out["duration"] = self.duration
        out.update(self.attachments.to_json())
        if self.crashes:
            out["crashes"] = list(self.crashes)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Record:
        """A record as results.json (schema version 1) holds it; a field it lacks reads as
        absent, and a record without an outcome as an error (a hand-edited or truncated file)."""
        outcome = data.get("outcome")
        metrics = data.get("metrics")
        duration = data.get("duration")
        return cls(
            nodeid=str(data.get("nodeid")),
            static=ItemStatic.from_json(data),
            outcome=cast(Outcome, outcome) if outcome in OUTCOMES else "error",
            kind=_str_or_none(data.get("kind")),
            message=str(data.get("message") or ""),
            metrics=metrics if isinstance(metrics, dict) else {},
            duration=float(duration) if isinstance(duration, int | float) else None,
            attachments=Attachments.from_json(data),
            crashes=tuple(str(c) for c in data.get("crashes") or ()),
        )


def build_record(
    nodeid: str,
    static: ItemStatic,
    result: ItemResult,
    outcome: Outcome,
    message: str,
    duration: float | None = None,
    crashes: tuple[str, ...] = (),
) -> Record:
    """The record of an item, from its static part, its own result and its phases' outcome."""
    return Record(
        nodeid=nodeid,
        static=static,
        outcome=outcome,
        kind=result.kind,
        message=message,
        metrics=result.metrics,
        duration=None if duration is None else round(duration, 6),
        attachments=result.attachments,
        crashes=crashes,
    )


def float_name(value: object) -> FloatName | None:
    """``value`` as a float dtype's name, or None if it names none."""
    return value if value in FLOAT_DTYPES else None


def _str_or_none(value: object) -> str | None:
    return None if value is None else str(value)


def _dict_or_none(value: object) -> Any:
    return value if isinstance(value, dict) else None


def _list_or_none(value: object) -> Any:
    return value if isinstance(value, list) else None
