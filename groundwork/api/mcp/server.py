"""The MCP server: the same services and scopes as REST, as tools for AI assistants and IDEs.

Over Streamable HTTP (mounted at /mcp) the auth middleware has already resolved the Bearer key,
and the principal travels in the ASGI scope; over stdio (`groundwork mcp`) it comes from the key
in `GROUNDWORK_API_KEY`, resolved once at start.
"""

from __future__ import annotations

import json
import logging
from contextvars import ContextVar
from typing import Any

import asyncpg
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import ValidationError

from groundwork.api.input_policy.tool_arguments import argument_errors, strict_tools
from groundwork.domain.errors import GroundworkError, NotFound, Unauthenticated, UnusableValue
from groundwork.domain.tenancy.connected_apps import scope_refusal
from groundwork.domain.tenancy.principals import Principal
from groundwork.platform.outages import unavailable

log = logging.getLogger(__name__)
# Set by the /mcp mount handler for HTTP, or once at start for stdio.
current_principal: ContextVar[Principal | None] = ContextVar("current_principal", default=None)

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


def tool_error(error: GroundworkError) -> ToolError:
    """A tool failure carrying the same stable code REST answers with."""
    return ToolError(json.dumps({"code": error.code, "message": error.detail, **error.extra}))


class GroundworkMCPServer(MCPServer):
    """The SDK's server, with one rule for every tool: every failure answers a tool error with a stable code.
    A domain error a tool lets through (or a value the database refused) has its own code, as a tool that
    catches it would; arguments that do not fit the input schema (groundwork.api.input_policy) are
    `invalid_request`, an unknown tool
    `not_found`; anything else is `internal_error`, its details only logged."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        """Call a tool; every failure becomes a coded tool error."""
        try:
            result: CallToolResult | Any = await super().call_tool(name, arguments, context)
        except UnexpectedToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, asyncpg.DataError):
                cause = UnusableValue("a value cannot be stored or compared")
            elif cause is not None:
                cause = unavailable(cause) or cause
            if not isinstance(cause, GroundworkError):
                log.error("MCP tool %r crashed", name, exc_info=exc)
                raise ToolError(
                    f"Error executing tool {name}: "
                    + json.dumps({"code": "internal_error", "message": "Something went wrong on our side."})
                ) from None
            raise ToolError(f"Error executing tool {name}: {tool_error(cause)}") from None
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                refusal = argument_errors(exc.__cause__, self._tool_manager.get_tool(name))
                raise ToolError(f"Error executing tool {name}: {tool_error(refusal)}") from exc
            if self._tool_manager.get_tool(name) is None:
                raise ToolError(tool_error(NotFound(f"Unknown tool {name[:100]!r}."))) from exc
            raise
        return result


def caller(ctx: Context[Any, Any] | None, scope: str | None) -> Principal:
    """The authenticated principal of this call, holding `scope` (None: any scope)."""
    principal = current_principal.get()
    if principal is None and ctx is not None:
        try:
            request = ctx.request_context.request
            user = getattr(request, "scope", {}).get("user") if request is not None else None
            principal = user if isinstance(user, Principal) else None
        except ValueError:
            principal = None
    if principal is None:
        raise tool_error(Unauthenticated("No authenticated principal for this MCP session."))
    if scope is not None and not principal.has_scope(scope):
        raise tool_error(scope_refusal(principal, scope))
    return principal


def build_mcp_server() -> MCPServer:
    """A fresh server with every Groundwork tool registered (one per app instance)."""
    mcp = GroundworkMCPServer(
        name="groundwork",
        instructions=(
            "Groundwork proposes; people decide. Read work items and projects, inspect enhancement runs and "
            "evidence. Nothing changes a work item without an explicit, confirmed apply."
        ),
    )

    @mcp.tool(annotations=READ_ONLY)
    async def whoami(ctx: Context[Any, Any]) -> dict[str, Any]:
        """The principal behind this connection's API key and the scopes it holds."""
        principal = caller(ctx, None)
        return {
            "id": principal.id,
            "name": principal.name,
            "kind": principal.kind,
            "workspaceId": principal.workspace_id,
            "isAdmin": principal.is_admin,
            "scopes": sorted(principal.scopes),
        }

    # Each service registers its tools from its own module (imported here: they import `caller` from this one).
    from groundwork.api.mcp.context_engine import register_context_engine_tools
    from groundwork.api.mcp.enhancement import register_enhancement_tools
    from groundwork.api.mcp.enhancement_review import register_enhancement_review_tools
    from groundwork.api.mcp.evidence_search import register_context_search_tools
    from groundwork.api.mcp.notifications import register_notification_tools
    from groundwork.api.mcp.people import register_people_tools
    from groundwork.api.mcp.work_items import register_work_item_tools

    register_work_item_tools(mcp)
    register_context_search_tools(mcp)
    register_context_engine_tools(mcp)
    register_enhancement_tools(mcp)
    register_enhancement_review_tools(mcp)
    register_notification_tools(mcp)
    register_people_tools(mcp)
    strict_tools(mcp)
    return mcp
