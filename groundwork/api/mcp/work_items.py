"""MCP tools for projects and canonical work items."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context, MCPServer

from groundwork.api.mcp.server import READ_ONLY, caller, tool_error
from groundwork.api.resources.enhancement import project_resource, work_item_resource
from groundwork.domain.errors import GroundworkError
from groundwork.services.work_items import items as work_item_service


def register_work_item_tools(mcp: MCPServer) -> None:
    """Register the work item tools on `mcp`."""

    @mcp.tool(annotations=READ_ONLY)
    async def list_projects(ctx: Context[Any, Any]) -> dict[str, Any]:
        """The projects this caller can see, with their engagement and portfolio."""
        rows = await work_item_service.list_projects(caller(ctx, "work-items:read"))
        return {"data": [project_resource(r) for r in rows]}

    @mcp.tool(annotations=READ_ONLY)
    async def list_work_items(
        ctx: Context[Any, Any],
        project_id: str | None = None,
        status: str | None = None,
        sprint: str | None = None,
        limit: int = 20,
        cursor: str | None = None,
    ) -> dict[str, Any]:
        """Work items of visible projects, newest first; pass `cursor` from `page.next_cursor` for more."""
        try:
            items, page = await work_item_service.list_work_items(
                caller(ctx, "work-items:read"),
                project_id=project_id,
                status=status,
                sprint=sprint,
                limit=limit,
                cursor=cursor,
            )
        except GroundworkError as error:
            raise tool_error(error) from None
        return {"data": [work_item_resource(i) for i in items], "page": page}

    @mcp.tool(annotations=READ_ONLY)
    async def get_work_item(ctx: Context[Any, Any], work_item_id: str) -> dict[str, Any]:
        """One work item with its fields and current version."""
        try:
            item = await work_item_service.get_work_item(caller(ctx, "work-items:read"), work_item_id)
        except GroundworkError as error:
            raise tool_error(error) from None
        return {"data": work_item_resource(item)}
