"""What every REST answer is made of: resource Structs, the list `page`, and the conversion of a built answer.

Each route declares its answer as a Struct of `groundwork/api/rest/documents/`; the OpenAPI document is
generated from those Structs and the handler returns one (`typed`), so a field the schema does not name (or
one of the wrong type) fails the request in the tests instead of reaching a client undocumented.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, TypeVar

import msgspec
from litestar import Response

from groundwork.api.documented import documented

Document = TypeVar("Document", bound=msgspec.Struct)

Timestamp = Annotated[str, documented(format="date-time")]
# A snake_case name served beside its camelCase one until the next minor version (docs/decisions.md).
DEPRECATED = msgspec.Meta(
    description="Deprecated: the camelCase field beside it.", extra_json_schema={"extra": {"deprecated": True}}
)


class Resource(msgspec.Struct, rename="camel", forbid_unknown_fields=True, kw_only=True):
    """Base of every response object: camelCase names, and no field the schema does not declare."""


class Page(Resource, kw_only=True):
    """Where the next page of a list starts (`cursor=nextCursor`), and whether there is one."""

    next_cursor: str | None
    has_more: bool
    legacy_next_cursor: Annotated[str | None, DEPRECATED] = msgspec.field(default=None, name="next_cursor")
    legacy_has_more: Annotated[bool, DEPRECATED] = msgspec.field(default=False, name="has_more")


class Reference(Resource, kw_only=True):
    """A typed reference to another resource."""

    type: str
    id: str


class Named(Resource, kw_only=True):
    """An id with its display name."""

    id: str
    name: str


def to_camel(name: str) -> str:
    """`snake_case` as `camelCase`."""
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def page_document(page: Mapping[str, Any]) -> dict[str, Any]:
    """A service's page (`next_cursor`, `has_more`) as the wire shows it: camelCase, the old names beside."""
    next_cursor, has_more = page["next_cursor"], bool(page["has_more"])
    return {"nextCursor": next_cursor, "hasMore": has_more, "next_cursor": next_cursor, "has_more": has_more}


def typed(kind: type[Document], body: dict[str, Any]) -> Document:
    """The answer `body` (`{"data": ..., "page": ...}`) as its declared Struct; a mismatch is a 500, never silent."""
    if isinstance(page := body.get("page"), Mapping) and "next_cursor" in page:
        body = {**body, "page": page_document(page)}
    return msgspec.convert(body, kind)


def created(document: Document, location: str) -> Response[Document]:
    """A 201 answer with `Location`: the created resource's URL (or, with no route of its own, the list showing it)."""
    return Response(document, status_code=201, headers={"Location": location})
