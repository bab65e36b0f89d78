"""MCP tools about principals: who this connection acts as, and whom it may address in a thread."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context

from groundwork.api.mcp.answers import listed
from groundwork.api.mcp.arguments import Cursor, Limit, PrincipalQuery, ProjectFilter
from groundwork.api.mcp.server import GroundworkMCPServer, caller, tool_error
from groundwork.api.resources.tenancy import directory_resource
from groundwork.domain.enhancement.model import SCOPE_READ as ENHANCEMENT_READ
from groundwork.domain.errors import GroundworkError
from groundwork.domain.notifications.inbox import SCOPE_READ as NOTIFICATIONS_READ
from groundwork.services.tenancy import people as service


def register_people_tools(mcp: GroundworkMCPServer) -> None:
    """Register the people tools on `mcp`."""

    @mcp.groundwork_tool(title="Who am I", scopes=[])
    async def whoami(ctx: Context[Any, Any]) -> dict[str, Any]:
        """The principal behind this connection's API key and the scopes it holds."""
        principal = caller(ctx, None)
        return {
            "data": {
                "id": principal.id,
                "name": principal.name,
                "kind": principal.kind,
                "workspaceId": principal.workspace_id,
                "isAdmin": principal.is_admin,
                "scopes": sorted(principal.scopes),
            }
        }

    @mcp.groundwork_tool(title="List people you may address", scopes=[NOTIFICATIONS_READ, ENHANCEMENT_READ])
    async def list_principals(
        ctx: Context[Any, Any],
        query: PrincipalQuery = None,
        project_id: ProjectFilter = None,
        limit: Limit = 20,
        cursor: Cursor = None,
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
        return listed([directory_resource(r) for r in rows], page)
