"""Reading MCP output schemas in tests: a closed copy, and every member name they declare."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def closed(schema: Any) -> Any:
    """A copy of `schema` in which every object with declared members allows no other member."""
    if isinstance(schema, list):
        return [closed(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    copy = {key: closed(value) for key, value in schema.items()}
    if "properties" in schema:
        copy["properties"] = {name: closed(member) for name, member in schema["properties"].items()}
        copy.setdefault("additionalProperties", False)
    return copy


def member_names(schema: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """Every declared member name with where it is, e.g. `("nextCursor", ".page.nextCursor")`."""
    if isinstance(schema, list):
        for item in schema:
            yield from member_names(item, path)
    elif isinstance(schema, dict):
        for name, member in (schema.get("properties") or {}).items():
            yield name, f"{path}.{name}"
            yield from member_names(member, f"{path}.{name}")
        for key in ("items", "anyOf", "oneOf", "allOf"):
            if key in schema:
                yield from member_names(schema[key], f"{path}[]" if key == "items" else path)
