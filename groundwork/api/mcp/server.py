"""The MCP server: the same services and scopes as REST, as tools and resources for AI assistants and IDEs.

Over Streamable HTTP (mounted at /mcp) the auth middleware has already resolved the Bearer key,
and the principal travels in the ASGI scope; over stdio (`groundwork mcp`) it comes from the key
in `GROUNDWORK_API_KEY`, resolved once at start.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from importlib.metadata import version
from typing import Any, TypeVar

import asyncpg
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp.types import (
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    SubscriptionsListenRequestParams,
    ToolAnnotations,
)
from pydantic import ValidationError

from groundwork.api.input_policy.tool_arguments import argument_errors, strict_tools
from groundwork.api.mcp.errors import CodedToolError, InternalFailure, error_result, invalid_params, tool_error
from groundwork.domain.errors import GroundworkError, NotFound, Unauthenticated, UnusableValue
from groundwork.domain.tenancy.connected_apps import scope_refusal
from groundwork.domain.tenancy.principals import Principal
from groundwork.platform.outages import unavailable

log = logging.getLogger(__name__)
# Set by the /mcp mount handler for HTTP, or once at start for stdio.
current_principal: ContextVar[Principal | None] = ContextVar("current_principal", default=None)

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
F = TypeVar("F", bound=Callable[..., Any])


def principal_of(request_context: ServerRequestContext[Any, Any] | None) -> Principal | None:
    """The authenticated principal of this request, if any."""
    principal = current_principal.get()
    if principal is None and request_context is not None:
        request = request_context.request
        user = getattr(request, "scope", {}).get("user") if request is not None else None
        principal = user if isinstance(user, Principal) else None
    return principal


def caller(ctx: Context[Any, Any] | None, scope: str | None) -> Principal:
    """The authenticated principal of this call, holding `scope` (None: any scope)."""
    request_context = None
    if ctx is not None:
        try:
            request_context = ctx.request_context
        except ValueError:
            request_context = None
    principal = principal_of(request_context)
    if principal is None:
        raise tool_error(Unauthenticated("No authenticated principal for this MCP session."))
    if scope is not None and not principal.has_scope(scope):
        raise tool_error(scope_refusal(principal, scope))
    return principal


def _failure(name: str, exc: UnexpectedToolError) -> CallToolResult:
    cause = exc.__cause__
    if isinstance(cause, asyncpg.DataError):
        cause = UnusableValue("a value cannot be stored or compared")
    elif cause is not None:
        cause = unavailable(cause) or cause
    if isinstance(cause, GroundworkError):
        return error_result(cause)
    log.error("MCP tool %r crashed", name, exc_info=exc)
    return error_result(InternalFailure())


class GroundworkMCPServer(MCPServer):
    """The SDK's server with Groundwork's rules for every tool: each declares the scopes that let a key see it
    (a key is listed only the tools it may call), a title and an output schema; every failure of a tool that
    ran answers a coded tool error; arguments that do not fit its input schema and an unknown tool are
    JSON-RPC errors (groundwork.api.mcp.errors)."""

    def __init__(self, **settings: Any) -> None:
        super().__init__(**settings)
        # Tool name -> the scopes any one of which lets a key call it (empty: any valid key).
        self.tool_scopes: dict[str, tuple[str, ...]] = {}

    def groundwork_tool(
        self, *, title: str, scopes: Sequence[str], annotations: ToolAnnotations = READ_ONLY
    ) -> Callable[[F], F]:
        """Register a tool with its title, annotations and the scopes that list it."""

        def register(fn: F) -> F:
            self.tool_scopes[fn.__name__] = tuple(scopes)
            return self.tool(title=title, annotations=annotations)(fn)

        return register

    def visible_to(self, principal: Principal | None, name: str) -> bool:
        """Whether `principal` may call the tool `name` (so it is listed)."""
        scopes = self.tool_scopes.get(name, ())
        if not scopes:
            return principal is not None
        return principal is not None and any(principal.has_scope(s) for s in scopes)

    async def _handle_list_tools(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        principal = principal_of(ctx)
        return ListToolsResult(tools=[t for t in await self.list_tools() if self.visible_to(principal, t.name)])

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        """Call a tool; a failure of the tool is a coded tool error, a call that does not fit it a JSON-RPC error."""
        tool = self._tool_manager.get_tool(name)
        if tool is None:
            raise invalid_params(NotFound(f"Unknown tool {name[:100]!r}."))
        try:
            result: CallToolResult | Any = await super().call_tool(name, arguments, context)
        except UnexpectedToolError as exc:
            return _failure(name, exc)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise invalid_params(argument_errors(exc.__cause__, tool)) from None
            if isinstance(exc.__cause__, CodedToolError):
                return error_result(exc.__cause__.error)
            raise
        return result


def build_mcp_server() -> GroundworkMCPServer:
    """A fresh server with every Groundwork tool and resource registered (one per app instance)."""
    bus = InMemorySubscriptionBus()
    mcp = GroundworkMCPServer(
        name="groundwork",
        subscriptions=bus,
        title="Groundwork",
        version=version("groundwork"),
        instructions=(
            "Groundwork proposes; people decide. Read work items and projects, inspect enhancement runs and "
            "evidence. Nothing changes a work item without an explicit, confirmed apply."
        ),
    )

    # Each service registers its tools from its own module (imported here: they import `caller` from this one).
    from groundwork.api.mcp.context_engine import register_context_engine_tools
    from groundwork.api.mcp.enhancement import register_enhancement_tools
    from groundwork.api.mcp.enhancement_review import register_enhancement_review_tools
    from groundwork.api.mcp.evidence_search import register_context_search_tools
    from groundwork.api.mcp.notifications import register_notification_tools
    from groundwork.api.mcp.people import register_people_tools
    from groundwork.api.mcp.resources import register_resources
    from groundwork.api.mcp.schemas.catalog import OUTPUTS
    from groundwork.api.mcp.subscriptions import ResourceUpdates, VisibleListenHandler
    from groundwork.api.mcp.work_items import register_work_item_tools

    register_work_item_tools(mcp)
    register_context_search_tools(mcp)
    register_context_engine_tools(mcp)
    register_enhancement_tools(mcp)
    register_enhancement_review_tools(mcp)
    register_notification_tools(mcp)
    register_people_tools(mcp)
    strict_tools(mcp, OUTPUTS)
    register_resources(mcp)
    lowlevel = mcp._lowlevel_server
    lowlevel.add_request_handler(
        "subscriptions/listen", SubscriptionsListenRequestParams, VisibleListenHandler(bus, ResourceUpdates(bus))
    )
    # No prompts to offer: without their handlers the server does not advertise the capability.
    for method in ("prompts/list", "prompts/get"):
        lowlevel._request_handlers.pop(method, None)
    return mcp
