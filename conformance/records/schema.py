"""results.json's JSON Schema, derived from the typed record so the two cannot drift apart.

A record is flat in the file (the static fields beside the outcome), so the schema's record
is built from the fields of :class:`~conformance.records.record.ItemStatic`,
:class:`~conformance.records.record.Record` and
:class:`~conformance.records.record.Attachments` with their types; pydantic writes the types'
JSON Schema. ``conformance schema --results`` prints it; docs/results.schema.json is a copy a
test holds current, for tools that read results.json without installing the suite.
"""

from __future__ import annotations

import typing
from typing import Any

import pydantic

from conformance.records.record import Attachments, ItemStatic, Record
from conformance.records.results import SCHEMA_VERSION

#: Record fields every record has (the others are left out where an item lacks them).
REQUIRED = ("nodeid", "outcome", "kind", "message", "metrics")


def _flat_fields() -> dict[str, Any]:
    """Each field of a record as results.json writes it: name → (type, default)."""
    parts = {
        Record: [n for n in typing.get_type_hints(Record) if n not in ("static", "attachments")],
        ItemStatic: list(typing.get_type_hints(ItemStatic)),
        Attachments: [n for n in typing.get_type_hints(Attachments) if n != "of_failure"],
    }
    hints = {
        name: hint
        for cls in parts
        for name, hint in typing.get_type_hints(cls).items()
        if name in parts[cls]
    }
    order = [
        "nodeid",
        *parts[ItemStatic],
        *(n for n in parts[Record] if n not in ("nodeid", "crashes")),
        *parts[Attachments],
        "crashes",
    ]
    return {name: (hints[name], ... if name in REQUIRED else None) for name in order}


def record_model() -> type[pydantic.BaseModel]:
    """A pydantic model of one record in the file (for its schema only)."""
    fields = _flat_fields()
    model = pydantic.create_model(
        "Record",
        __config__=pydantic.ConfigDict(extra="allow"),
        __doc__="One item of a run: " + (Record.__doc__ or "").split(":", 1)[-1].strip(),
        **fields,
    )
    return typing.cast(type[pydantic.BaseModel], model)


#: The run header's ``not_offered``: what the frameworks lack, which has no items.
NOT_OFFERED: dict[str, Any] = {
    "description": (
        "Framework → the families and parametrisations of the run's case files it does not "
        "offer (no item stands for them), sorted, each with the adapter's reason."
    ),
    "type": "object",
    "additionalProperties": {
        "type": "array",
        "items": {
            "type": "object",
            "required": ["family", "parametrization", "reason"],
            "properties": {
                "family": {"type": "string"},
                "parametrization": {"type": "string"},
                "reason": {"type": "string"},
            },
        },
    },
}


def results_schema() -> dict[str, Any]:
    """The JSON Schema of a results.json of :data:`SCHEMA_VERSION`."""
    record = record_model().model_json_schema(ref_template="#/$defs/{model}")
    defs = record.pop("$defs", {})
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "conformance results.json",
        "description": (
            f"A run's results, schema version {SCHEMA_VERSION}: the run's metadata and one "
            "record per collected item."
        ),
        "type": "object",
        "required": ["run", "records"],
        "properties": {
            "run": {
                "type": "object",
                "required": ["schema_version"],
                "properties": {
                    "schema_version": {"const": SCHEMA_VERSION},
                    "not_offered": NOT_OFFERED,
                },
            },
            "records": {"type": "array", "items": {"$ref": "#/$defs/Record"}},
        },
        "$defs": {**defs, "Record": record},
    }
