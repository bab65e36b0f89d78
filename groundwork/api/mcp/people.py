"""MCP tool: the principals a caller may address, so an assistant can start a thread with them."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context, MCPServer

from groundwork.api.mcp.server import READ_ONLY, caller, tool_error
from groundwork.api.resources.tenancy import directory_resource
from groundwork.domain.errors import GroundworkError
from groundwork.services.tenancy import people as service


def register_people_tools(mcp: MCPServer) -> None:
    """Register the people tools on `mcp`."""

    @mcp.tool(annotations=READ_ONLY)
    async def list_principals(
        ctx: Context[Any, Any],
        query: str | None = None,
        project_id: str | None = None,
        limit: int = 20,
        cursor: str | None = None,
    ) -> dict[str, Any]:
        """People this caller may address (who share a project with it): id, name and kind, by name.

        Needs `notifications:read` or `work-item-enhance:read`; pass an `id` as a thread's `participant_ids`.
        """
        try:
            rows, page = await service.directory(
                caller(ctx, None), query=query, project_id=project_id, limit=limit, cursor=cursor
            )
        except GroundworkError as error:
            raise tool_error(error) from None
        return {"data": [directory_resource(r) for r in rows], "page": page}
