"""Builders for the output schemas: JSON Schema objects whose members are all present in every answer.

Published schemas leave `additionalProperties` open, so a resource may gain members in a minor version
without breaking a client that validates; the suite checks answers against a closed copy, so every member a
tool answers is declared here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

Schema = dict[str, Any]

STRING: Schema = {"type": "string"}
TEXT: Schema = {"type": ["string", "null"]}
INTEGER: Schema = {"type": "integer"}
NUMBER: Schema = {"type": "number"}
BOOLEAN: Schema = {"type": "boolean"}
ANY: Schema = {}
TIME: Schema = {"type": "string", "format": "date-time"}
OPTIONAL_TIME: Schema = {"type": ["string", "null"], "format": "date-time"}
OPEN_OBJECT: Schema = {"type": "object"}


def obj(properties: dict[str, Schema], description: str | None = None, *, optional: Iterable[str] = ()) -> Schema:
    """An object with `properties`, each required unless named in `optional`."""
    left_out = set(optional)
    schema: Schema = {
        "type": "object",
        "properties": properties,
        "required": [name for name in properties if name not in left_out],
    }
    if description is not None:
        schema["description"] = description
    return schema


def nullable(schema: Schema) -> Schema:
    """`schema` or null."""
    return {"anyOf": [schema, {"type": "null"}]}


def array(items: Schema) -> Schema:
    """A list of `items`."""
    return {"type": "array", "items": items}


def enum(values: Iterable[str], *, optional: bool = False) -> Schema:
    """One of `values` (or null when `optional`)."""
    listed: list[Any] = list(values)
    return {"type": ["string", "null"] if optional else "string", "enum": [*listed, None] if optional else listed}


def described(schema: Schema, description: str) -> Schema:
    """`schema` with a description."""
    return {**schema, "description": description}


PAGE = obj(
    {
        "nextCursor": described(TEXT, "Pass as `cursor` for the next page; null on the last page."),
        "hasMore": described(BOOLEAN, "Whether another page follows."),
    },
    "Where the list goes on (keyset pagination).",
)
SUBJECT = obj({"type": STRING, "id": STRING}, "A subject: its type and id.")
NAMED = obj({"id": TEXT, "name": TEXT})
ERROR = nullable(obj({"code": STRING, "message": TEXT}, "Why it failed."))


def one(resource: Schema, description: str, **members: Schema) -> Schema:
    """The answer of a read: `{data: resource}` and any other members."""
    return obj({"data": resource, **members}, description)


def listing(resource: Schema, description: str, *, paged: bool = True, **members: Schema) -> Schema:
    """The answer of a list: `{data: [resource], page}` and any other members."""
    page = {"page": PAGE} if paged else {}
    return obj({"data": array(resource), **page, **members}, description)
