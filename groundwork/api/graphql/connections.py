"""Relay connections: every GraphQL list that pages answers `edges { cursor node }`, `nodes` and
`pageInfo { hasNextPage endCursor }`; an edge's cursor resumes the list right after its node."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

import strawberry

from groundwork.domain.pagination import encode_cursor

Node = TypeVar("Node")

# Appended to a deprecation reason: old names are served for one more minor version.
DEPRECATED_UNTIL = "; served until the next minor version."


@strawberry.type(description="One item of a page with the cursor that resumes the list right after it.")
class Edge(Generic[Node]):
    cursor: str = strawberry.field(description="Pass it as `after` to continue the list after this item.")
    node: Node = strawberry.field(description="The item.")


@strawberry.type(description="Where a page stands in its list: whether more items follow and where to continue.")
class PageInfo:
    has_next_page: bool = strawberry.field(description="True when more items follow this page.")
    end_cursor: str | None = strawberry.field(
        description="The cursor of the page's last edge: pass it as `after` for the next page (null on an empty page)."
    )
    has_previous_page: bool = strawberry.field(
        description="Always false: lists page forward only (`first` and `after`), as Relay allows."
    )
    start_cursor: str | None = strawberry.field(
        description="The cursor of the page's first edge (null on an empty page)."
    )
    next_cursor: str | None = strawberry.field(
        description="The cursor of the next page (null on the last page).",
        deprecation_reason="Use `endCursor` with `hasNextPage`" + DEPRECATED_UNTIL,
    )
    has_more: bool = strawberry.field(
        description="True when more items follow this page.", deprecation_reason="Use `hasNextPage`" + DEPRECATED_UNTIL
    )


def id_cursor(node: Any) -> str:
    """The cursor after a node of a list kept in id order (the position the services page by)."""
    return encode_cursor({"id": str(node.id)})


def edges_of(nodes: Sequence[Node], cursors: Sequence[str]) -> list[Edge[Node]]:
    """The edges of a page's nodes and their cursors, in order."""
    return [Edge(cursor=c, node=n) for n, c in zip(nodes, cursors, strict=True)]


def page_info_of(page: dict[str, Any], edges: Sequence[Edge[Any]]) -> PageInfo:
    """A service's page (`next_cursor`, `has_more`) as Relay's page info for these edges."""
    return PageInfo(
        has_next_page=bool(page["has_more"]),
        end_cursor=edges[-1].cursor if edges else None,
        has_previous_page=False,
        start_cursor=edges[0].cursor if edges else None,
        next_cursor=page["next_cursor"],
        has_more=bool(page["has_more"]),
    )


def connection_fields(
    nodes: Sequence[Node],
    page: dict[str, Any],
    cursor_of: Callable[[Node], str] = id_cursor,
    cursors: Sequence[str] | None = None,
) -> dict[str, Any]:
    """`edges`, `nodes` and `pageInfo` of a connection from a service's page of nodes; a ranked list gives
    its `cursors` (one per node, from the service), a list in key order derives them with `cursor_of`."""
    edges = edges_of(nodes, [cursor_of(n) for n in nodes] if cursors is None else cursors)
    return {"edges": edges, "nodes": list(nodes), "page_info": page_info_of(page, edges)}
