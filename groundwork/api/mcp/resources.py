"""MCP resources: runs, drafts, context packages, passages and notifications as resource templates.

A read calls the same service, with the same scope and visibility, as the REST read of the resource, and its
content is the REST resource (`application/json`, camelCase). A resource the caller may not see is the
JSON-RPC error -32002 (resource not found), as REST answers 404; any other refusal is -32602 (or -32603 on our
side), with `data` carrying `{code, message, errors}` like a tool error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPError
from mcp.types import INTERNAL_ERROR, INVALID_PARAMS

from groundwork.api.mcp.errors import CodedToolError, error_body
from groundwork.api.mcp.server import GroundworkMCPServer, caller
from groundwork.api.resources.context_engine import package_resource
from groundwork.api.resources.enhancement import draft_resource, run_resource
from groundwork.api.resources.evidence_search import stored_passage_resource
from groundwork.api.resources.notifications import notification_detail
from groundwork.domain.enhancement.model import SCOPE_READ as ENHANCEMENT_READ
from groundwork.domain.errors import GroundworkError, NotFound
from groundwork.domain.notifications.inbox import SCOPE_READ as NOTIFICATIONS_READ
from groundwork.domain.tenancy.connected_apps import scope_refusal
from groundwork.domain.tenancy.principals import Principal
from groundwork.services.context_engine import reads as packages
from groundwork.services.enhancement import run_views
from groundwork.services.evidence_search import corpus_reads
from groundwork.services.notifications import inbox

RESOURCE_NOT_FOUND = -32002  # the MCP specification's code for a resource that does not exist
CONTEXT_READ = "context-engine:read"
JSON = "application/json"


async def read_run(principal: Principal, run_id: str) -> dict[str, Any]:
    """The run, as `GET /api/v1/work-item-enhancement-runs/{id}` shows it."""
    return run_resource(await run_views.read_run(principal, run_id))


async def read_draft(principal: Principal, run_id: str, draft_id: str) -> dict[str, Any]:
    """One draft of a run the caller can see."""
    view = await run_views.read_run(principal, run_id)
    for draft in view.drafts:
        if draft.id == draft_id:
            return draft_resource(draft, view.eligible[draft.id], view.ineligible_reasons.get(draft.id))
    raise NotFound("No such draft.")


async def read_package(principal: Principal, package_id: str) -> dict[str, Any]:
    """The context package."""
    return package_resource(await packages.get_package(principal, package_id))


async def read_passage(principal: Principal, passage_id: str) -> dict[str, Any]:
    """The passage exactly as stored."""
    return stored_passage_resource(await corpus_reads.get_passage(principal, passage_id))


async def read_notification(principal: Principal, notification_id: str) -> dict[str, Any]:
    """One of the caller's notifications with its audit history."""
    row, history = await inbox.get_notification(principal, notification_id)
    return notification_detail(row, history, principal)


@dataclass(frozen=True)
class Template:
    """A resource template: its URI, the scope a read needs and how to read it."""

    uri: str
    name: str
    title: str
    description: str
    scope: str
    read: Callable[..., Awaitable[dict[str, Any]]]
    subscribable: bool

    def pattern(self) -> re.Pattern[str]:
        """A regular expression matching this template's URIs, one group per variable."""
        return re.compile("^" + re.sub(r"\\{(\w+)\\}", r"(?P<\1>[^/]+)", re.escape(self.uri)) + "$")


TEMPLATES = (
    Template(
        "groundwork://runs/{id}",
        "enhancement_run",
        "Enhancement run",
        "An enhancement run with its target, drafts, artifacts and allowed next actions; subscribe to hear "
        "when its state changes.",
        ENHANCEMENT_READ,
        read_run,
        True,
    ),
    Template(
        "groundwork://runs/{run_id}/drafts/{id}",
        "enhancement_draft",
        "Enhancement draft",
        "A draft of a run: the value proposed for one work item field, with its evidence and eligibility; "
        "subscribe to hear when its run's state changes (an apply, an expiry).",
        ENHANCEMENT_READ,
        read_draft,
        True,
    ),
    Template(
        "groundwork://packages/{id}",
        "context_package",
        "Context package",
        "A governed context package with its scope, freshness, provenance and coverage.",
        CONTEXT_READ,
        read_package,
        False,
    ),
    Template(
        "groundwork://passages/{id}",
        "passage",
        "Passage",
        "A corpus passage exactly as stored, with its source, place and neighbours.",
        CONTEXT_READ,
        read_passage,
        False,
    ),
    Template(
        "groundwork://notifications/{id}",
        "notification",
        "Notification",
        "One of your notifications with its audit history; subscribe to hear when its status changes.",
        NOTIFICATIONS_READ,
        read_notification,
        True,
    ),
)


def refusal(error: GroundworkError) -> MCPError:
    """The JSON-RPC error for a read that failed with `error`."""
    code = {"not_found": RESOURCE_NOT_FOUND, "internal_error": INTERNAL_ERROR}.get(error.code, INVALID_PARAMS)
    return MCPError(code=code, message=error.detail, data=error_body(error))


async def read_as(principal: Principal, uri: str) -> dict[str, Any]:
    """The resource at `uri` as `principal` may see it (a GroundworkError otherwise)."""
    for template in TEMPLATES:
        match = template.pattern().match(uri)
        if match is not None:
            if not principal.has_scope(template.scope):
                raise scope_refusal(principal, template.scope)
            ids = match.groupdict()
            return await template.read(principal, *([ids["run_id"]] if "run_id" in ids else []), ids["id"])
    raise NotFound("No such resource.")


def register_resources(mcp: GroundworkMCPServer) -> None:
    """Register every resource template on `mcp`."""
    for template in TEMPLATES:
        _register(mcp, template)


async def _answer(ctx: Context[Any, Any], uri: str) -> str:
    try:
        return json.dumps(await read_as(caller(ctx, None), uri), separators=(",", ":"))
    except CodedToolError as error:
        raise refusal(error.error) from None
    except GroundworkError as error:
        raise refusal(error) from None


def _register(mcp: GroundworkMCPServer, template: Template) -> None:
    async def read_nested(ctx: Context[Any, Any], run_id: str, id: str) -> str:
        return await _answer(ctx, template.uri.format(run_id=run_id, id=id))

    async def read_one(ctx: Context[Any, Any], id: str) -> str:
        return await _answer(ctx, template.uri.format(id=id))

    register = mcp.resource(
        template.uri, name=template.name, title=template.title, description=template.description, mime_type=JSON
    )
    register(read_nested if "{run_id}" in template.uri else read_one)
