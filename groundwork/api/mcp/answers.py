"""The envelopes of tool answers, camelCase like every REST resource: `{data}` and `{data, page}`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def page_resource(page: Mapping[str, Any]) -> dict[str, Any]:
    """`{nextCursor, hasMore}` of a service's page (which may still spell them in snake_case)."""
    return {
        "nextCursor": page.get("nextCursor", page.get("next_cursor")),
        "hasMore": bool(page.get("hasMore", page.get("has_more", False))),
    }


def listed(items: Any, page: Mapping[str, Any], **members: Any) -> dict[str, Any]:
    """A list answer: `{data: [...], page: {nextCursor, hasMore}}` and any other members."""
    return {"data": items, "page": page_resource(page), **members}
