"""MCP tools for projects and canonical work items."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context

from groundwork.api.mcp.answers import listed
from groundwork.api.mcp.arguments import Cursor, Limit, ProjectFilter, Sprint, WorkItemId, WorkItemStatus
from groundwork.api.mcp.server import GroundworkMCPServer, caller, tool_error
from groundwork.api.resources.enhancement import project_resource, work_item_resource
from groundwork.domain.errors import GroundworkError
from groundwork.services.work_items import items as work_item_service

READ = "work-items:read"


def register_work_item_tools(mcp: GroundworkMCPServer) -> None:
    """Register the work item tools on `mcp`."""

    @mcp.groundwork_tool(title="List projects", scopes=[READ])
    async def list_projects(ctx: Context[Any, Any]) -> dict[str, Any]:
        """The projects this caller can see, with their engagement and portfolio."""
        rows = await work_item_service.list_projects(caller(ctx, READ))
        return {"data": [project_resource(r) for r in rows]}

    @mcp.groundwork_tool(title="List work items", scopes=[READ])
    async def list_work_items(
        ctx: Context[Any, Any],
        project_id: ProjectFilter = None,
        status: WorkItemStatus = None,
        sprint: Sprint = None,
        limit: Limit = 20,
        cursor: Cursor = None,
    ) -> dict[str, Any]:
        """Work items of visible projects, newest first; pass `page.nextCursor` as `cursor` for more."""
        try:
            items, page = await work_item_service.list_work_items(
                caller(ctx, READ), project_id=project_id, status=status, sprint=sprint, limit=limit, cursor=cursor
            )
        except GroundworkError as error:
            raise tool_error(error) from None
        return listed([work_item_resource(i) for i in items], page)

    @mcp.groundwork_tool(title="Get a work item", scopes=[READ])
    async def get_work_item(ctx: Context[Any, Any], work_item_id: WorkItemId) -> dict[str, Any]:
        """One work item with its fields and current version."""
        try:
            item = await work_item_service.get_work_item(caller(ctx, READ), work_item_id)
        except GroundworkError as error:
            raise tool_error(error) from None
        return {"data": work_item_resource(item)}
