"""Where an evidence reference can be opened: the API route of each kind that has one.

Every `evidenceRefs` entry (a briefing claim's, a package's, a draft's or an artifact's) of a kind listed here
carries its `href`, a path on the public API that a caller with the same visibility can GET. `external` and
`code_context` references point outside Groundwork and carry none.
"""

from __future__ import annotations

from urllib.parse import quote

OPENING_ROUTES = {
    "passage": "/api/v1/context/passages/{id}",
    "work_item": "/api/v1/work-items/{id}",
    # A history reference is `<work item id>@<version after>`: the item's history lists that change.
    "work_item_history": "/api/v1/work-items/{id}/history",
    "context_package": "/api/v1/context-engine/{id}",
    "package": "/api/v1/context-engine/{id}",
}


# Every kind an evidence reference has anywhere in Groundwork: those a route opens, and those pointing outside.
EVIDENCE_KINDS: tuple[str, ...] = (*OPENING_ROUTES, "external", "code_context")


def opening_route(kind: str, reference_id: str) -> str | None:
    """The API path that opens a reference of `kind`, or None for a kind that points outside Groundwork."""
    route = OPENING_ROUTES.get(kind)
    if route is None:
        return None
    target = reference_id.partition("@")[0] if kind == "work_item_history" else reference_id
    return route.format(id=quote(target, safe=""))


def with_route(reference: dict[str, str]) -> dict[str, str | None]:
    """A `{kind, id}` evidence reference with its `href` (null for a kind no route opens)."""
    return {**reference, "href": opening_route(reference["kind"], reference["id"])}
