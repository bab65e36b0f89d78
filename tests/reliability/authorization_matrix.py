"""The authorization matrix: what every REST route, GraphQL field and MCP tool requires, and what it names.

The tests in `test_authorization_matrix.py` do not list the surface themselves: they read it from the
Litestar route tables (public and internal app), the Strawberry schema and the MCP server's tool list,
and look each entry up here. An entry missing here (a new route, field or tool) or declared here but
gone from the app fails `test_every_route_field_and_tool_is_declared_in_the_matrix`, so nothing new
ships without saying which scope it needs and which resource it reaches.

Each declaration names:
- `scope`: the scope a key must hold (None: any valid key; `PUBLIC`: no key at all; `TRANSPORT`: the
  GraphQL or MCP endpoint, whose fields and tools are rows of their own).
- the request that reaches a target resource of a victim workspace (path parameters, body, query or
  tool arguments, built from `Targets` ids by name), so refusals are checked on a real resource;
- `unseen`: what a caller who may not see that resource gets: `NOT_FOUND` (404 `not_found`, never a
  403, DESIGN "Errors"), `LISTED` (a 2xx answer over the caller's own data, none of the target's), or
  another documented refusal such as 403 `permission_denied` (connected apps are for workspace admins).
  `unseen_other` applies to a key of another workspace, `unseen_invisible` to a principal of the same
  workspace without visibility (not a member of the target's project, not the notification's owner,
  not a participant, not the endpoint's creator, not an admin).

Out of the matrix, with the reason: Litestar's automatic `OPTIONS` answers (no handler, no data), and MCP
over stdio (`groundwork mcp`), which runs as the one key in `GROUNDWORK_API_KEY` on the user's machine
with the same tools and the same scope check, and listens on no network.
"""

from __future__ import annotations

import re
from typing import Any

# The rows' kinds and outcomes, and the administration rows, are re-exported: the tests read them all from here.
from tests.reliability.matrix_administration import ADMIN as ADMIN
from tests.reliability.matrix_administration import ADMINISTRATION as ADMINISTRATION
from tests.reliability.matrix_administration import ADMINISTRATION_REST
from tests.reliability.matrix_rows import INSUFFICIENT_SCOPE as INSUFFICIENT_SCOPE
from tests.reliability.matrix_rows import (
    LISTED,
    PERMISSION_DENIED,
    PUBLIC,
    TRANSPORT,
    VALIDATION_FAILED,
    Field,
    Ids,
    Rest,
    Tool,
    _key,
    _none,
)
from tests.reliability.matrix_rows import NOT_FOUND as NOT_FOUND

# ------------------------------------------------------------------------------------------------ REST

WI_READ, WI_WRITE = "work-items:read", "work-items:write"
RUN, READ, APPLY = "work-item-enhance:run", "work-item-enhance:read", "work-item-enhance:apply"
CE = "context-engine:read"
AGENT = "agent:read"
HOOKS = "webhooks:manage"
N_READ, N_WRITE, N_OPERATE = "notifications:read", "notifications:write", "notifications:operate"
APPS = "connected-apps:manage"
CONTRIBUTE = "context-engine:contribute"


def _apply_body(ids: Ids) -> dict[str, Any]:
    return {"draft_ids": [ids["draft"]], "expected_target_version": ids["work_item_version"], "confirm": True}


REST: dict[str, Rest] = {
    # Probes and API documentation: no key, no data (DESIGN "Auth"; auth.PUBLIC_PATHS).
    "GET /health/live": Rest(PUBLIC),
    "GET /health/ready": Rest(PUBLIC),
    "GET /schema": Rest(PUBLIC),
    "GET /schema/openapi.json": Rest(PUBLIC),
    "GET /schema/swagger": Rest(PUBLIC),
    "GET /schema/oauth2-redirect.html": Rest(PUBLIC),
    "GET /schema/{path}": Rest(PUBLIC, params={"path": "openapi.json"}),
    # Prometheus text: process-wide counts by route template and status, never an id, key or body
    # (DESIGN "Observability"); the leak check below proves none of the victim's data is in it.
    "GET /metrics": Rest(PUBLIC),
    # The browser pages' assets, served from installed packages: no key, no data.
    "GET /static/{bundle}/{name}": Rest(PUBLIC, params={"bundle": "swagger-ui", "name": "swagger-ui.css"}),
    # The signed, single-use action link authorises itself (the token is the credential): a forged token
    # is 404 and shows nothing (tests/integration/notifications/test_channels.py covers real links).
    "GET /api/v1/notification-actions/{token}": Rest(PUBLIC, params={"token": "forged"}),
    "POST /api/v1/notification-actions/{token}": Rest(PUBLIC, body=_none, params={"token": "forged"}),
    # The page behind an e-mail's View link: the signed token is the credential, and opens that page only
    # (tests/e2e/test_notification_page.py covers real links in Chromium).
    "GET /api/v1/notification-views/{token}": Rest(PUBLIC, params={"token": "forged"}),
    # GraphQL's own page and endpoint: every field is in GRAPHQL below.
    "GET /graphql": Rest(TRANSPORT, why="the GraphiQL page; queries are checked field by field in GRAPHQL"),
    "POST /graphql": Rest(TRANSPORT, why="checked field by field in GRAPHQL"),
    "* /mcp": Rest(TRANSPORT, why="checked tool by tool in MCP"),
    "WEBSOCKET /graphql": Rest(
        TRANSPORT, why="refuses every handshake: test_graphql_over_websocket_is_refused_at_the_handshake"
    ),
    # Work items and projects.
    "GET /api/v1/projects": Rest(WI_READ, unseen_other=LISTED),
    "GET /api/v1/work-items": Rest(WI_READ, query=lambda ids: {"project_id": ids["project"]}, unseen_other=LISTED),
    "POST /api/v1/work-items": Rest(
        WI_WRITE,
        body=lambda ids: {"project_id": ids["project"], "title": "Intruder", "status": "todo"},
        unseen_other=VALIDATION_FAILED,
    ),
    "GET /api/v1/work-items/{work_item_id}": Rest(WI_READ),
    "PATCH /api/v1/work-items/{work_item_id}": Rest(
        WI_WRITE, body=lambda ids: {"expected_version": ids["work_item_version"], "title": "Overwritten"}
    ),
    "GET /api/v1/work-items/{work_item_id}/history": Rest(WI_READ),
    # Enhancement runs.
    "POST /api/v1/work-item-enhancements": Rest(
        RUN,
        body=lambda ids: {
            "target": {"type": "work_item", "id": ids["work_item"]},
            "actions": ["estimate"],
            "confirm": True,
        },
        query=lambda ids: {"wait": 0},
    ),
    "GET /api/v1/work-item-enhancements": Rest(
        READ, query=lambda ids: {"target_id": ids["work_item"]}, unseen_other=LISTED
    ),
    "GET /api/v1/work-item-enhancements/{run_id}": Rest(READ),
    "POST /api/v1/work-item-enhancements/{run_id}/actions": Rest(
        RUN, body=lambda ids: {"action": "design", "confirm": True}, query=lambda ids: {"wait": 0}
    ),
    "GET /api/v1/work-item-enhancements/{run_id}/drafts": Rest(READ),
    "GET /api/v1/work-item-enhancements/{run_id}/artifacts": Rest(READ),
    "POST /api/v1/work-item-enhancements/{run_id}/apply": Rest(APPLY, body=_apply_body),
    "GET /api/v1/work-item-enhancements/{run_id}/applies": Rest(READ),
    "POST /api/v1/work-item-enhancements/{run_id}/drafts/{draft_id}/reject": Rest(
        APPLY, body=lambda ids: {"reason": "Not what we need.", "confirm": True}
    ),
    "POST /api/v1/work-item-enhancements/{run_id}/cancel": Rest(RUN, body=lambda ids: {"confirm": True}),
    # The scope follows the id: a run id needs `work-item-enhance:read` (an `op_` id `notifications:read`,
    # checked in OPERATION_OF_A_COMMAND below).
    "GET /api/v1/operations/{operation_id}": Rest(READ, params={"operation_id": "run"}),
    # Context engine and evidence search.
    "POST /api/v1/context/search": Rest(
        CE, body=lambda ids: {"subject_ref": {"type": "project", "id": ids["project"]}, "query": ids["passage_word"]}
    ),
    "POST /api/v1/context/query": Rest(
        CE, body=lambda ids: {"question": ids["package_word"], "project_id": ids["project"]}
    ),
    "GET /api/v1/context/passages/{passage_id}": Rest(CE),
    # A filter by a project the caller cannot see is 404, as for evidence search's subject.
    "GET /api/v1/context/sources": Rest(CE, query=lambda ids: {"project_id": ids["project"]}),
    "GET /api/v1/context-engine": Rest(CE, query=lambda ids: {"project_id": ids["project"]}),
    "GET /api/v1/context-engine/{package_id}": Rest(CE),
    "GET /api/v1/context-engine/search": Rest(
        CE, query=lambda ids: {"query": ids["package_word"], "project_id": ids["project"]}
    ),
    "GET /api/v1/context-engine/packages": Rest(CE, query=lambda ids: {"project_id": ids["project"]}),
    "GET /api/v1/context-engine/packages/{package_id}/evidence": Rest(CE),
    "GET /api/v1/context-engine/providers": Rest(CE, query=lambda ids: {"project_id": ids["project"]}),
    # Agent API.
    "GET /api/agent/v1/projects": Rest(AGENT, unseen_other=LISTED),
    "GET /api/agent/v1/projects/{project_id}/delivery": Rest(AGENT),
    "GET /api/agent/v1/projects/{project_id}/sprints/current": Rest(AGENT),
    "GET /api/agent/v1/projects/{project_id}/risks": Rest(AGENT),
    # Webhooks: an endpoint is the workspace's, and a non-admin manages only its own (docs/webhooks.md).
    "POST /api/v1/webhook-endpoints": Rest(
        HOOKS,
        body=lambda ids: {"url": "http://127.0.0.1:9/intruder", "event_types": ["notification.*"]},
        unseen_other=LISTED,
    ),
    "GET /api/v1/webhook-endpoints": Rest(HOOKS, unseen_other=LISTED),
    "GET /api/v1/webhook-endpoints/{endpoint_id}": Rest(HOOKS),
    "PATCH /api/v1/webhook-endpoints/{endpoint_id}": Rest(HOOKS, body=lambda ids: {"enabled": False}),
    "DELETE /api/v1/webhook-endpoints/{endpoint_id}": Rest(HOOKS),
    "POST /api/v1/webhook-endpoints/{endpoint_id}/rotate-secret": Rest(HOOKS, body=_none),
    "POST /api/v1/webhook-endpoints/{endpoint_id}/test": Rest(HOOKS, body=_none),
    "GET /api/v1/webhook-endpoints/{endpoint_id}/deliveries": Rest(HOOKS),
    "GET /api/v1/webhook-deliveries/{delivery_id}": Rest(HOOKS),
    "POST /api/v1/webhook-deliveries/{delivery_id}/redeliver": Rest(HOOKS, body=_none),
    # Notifications: self-scoped; another principal's notification is 404.
    "GET /api/v1/notifications": Rest(N_READ, unseen_other=LISTED),
    "GET /api/v1/notifications/summary": Rest(N_READ, unseen_other=LISTED),
    "GET /api/v1/notifications/preferences": Rest(N_READ, unseen_other=LISTED),
    "PUT /api/v1/notifications/preferences": Rest(
        N_WRITE, body=lambda ids: {"channels": {"in_app": {"enabled": True}}}, unseen_other=LISTED
    ),
    "POST /api/v1/notifications/read-all": Rest(N_OPERATE, body=lambda ids: {}, unseen_other=LISTED),
    # Each item is checked as the single command would be: someone else's notification is that item's 404
    # (`not_found` in `data.items[]`) in an answer about the caller's own request.
    "POST /api/v1/notifications/bulk": Rest(
        N_OPERATE,
        body=lambda ids: {
            "command": "acknowledge",
            "items": [{"id": ids["notification"], "expected_version": 2}],
            "confirm": True,
        },
        unseen_other=LISTED,
    ),
    # The caller's own live feed (Server-Sent Events; the session's streams end after a second): nothing of
    # anyone else's notifications is in it.
    "GET /api/v1/notifications/stream": Rest(N_READ, unseen_other=LISTED),
    "GET /api/v1/notifications/{notification_id}": Rest(N_READ),
    "POST /api/v1/notifications/{notification_id}/read": Rest(N_OPERATE, body=lambda ids: {"expected_version": 2}),
    "POST /api/v1/notifications/{notification_id}/acknowledge": Rest(
        N_OPERATE, body=lambda ids: {"expected_version": 2, "confirm": True}
    ),
    "POST /api/v1/notifications/{notification_id}/dismiss": Rest(
        N_OPERATE, body=lambda ids: {"expected_version": 2, "confirm": True}
    ),
    "POST /api/v1/notifications/{notification_id}/snooze": Rest(
        N_OPERATE, body=lambda ids: {"expected_version": 2, "for": "PT1H", "confirm": True}
    ),
    "POST /api/v1/notifications/{notification_id}/unsnooze": Rest(N_OPERATE, body=lambda ids: {"expected_version": 2}),
    # Threads: participant-scoped; a non-participant gets 404.
    "GET /api/v1/messages": Rest(N_READ, unseen_other=LISTED),
    "POST /api/v1/messages": Rest(
        N_WRITE,
        body=lambda ids: {"title": "Intruder", "participant_ids": [ids["recipient"]], "body": "hi"},
        unseen_other=VALIDATION_FAILED,
    ),
    "GET /api/v1/messages/{thread_id}": Rest(N_READ),
    "POST /api/v1/messages/{thread_id}/messages": Rest(N_WRITE, body=lambda ids: {"body": "intruding"}),
    "POST /api/v1/messages/{thread_id}/read": Rest(N_OPERATE, body=_none),
    # Connected apps: workspace admins only; another workspace's app is 404.
    "POST /api/v1/connected-apps": Rest(
        APPS,
        body=lambda ids: {
            "name": f"intruder-{_key()[:8]}",
            "kind": "assistant",
            "direction": "read",
            "provenance": "intruder",
            "conflict": "reject",
        },
        unseen_other=LISTED,
        unseen_invisible=PERMISSION_DENIED,
    ),
    "GET /api/v1/connected-apps": Rest(APPS, unseen_other=LISTED, unseen_invisible=PERMISSION_DENIED),
    "GET /api/v1/connected-apps/{app_id}": Rest(APPS, unseen_invisible=PERMISSION_DENIED),
    "POST /api/v1/connected-apps/{app_id}/activate": Rest(APPS, body=_none, unseen_invisible=PERMISSION_DENIED),
    "POST /api/v1/connected-apps/{app_id}/deactivate": Rest(APPS, body=_none, unseen_invisible=PERMISSION_DENIED),
    **ADMINISTRATION_REST,
}

# The operation route called with an `op_` id (a notification command's operation): scope notifications:read.
OPERATION_OF_A_COMMAND = ("GET /api/v1/operations/{operation_id}", Rest(N_READ, params={"operation_id": "operation"}))

# The internal listener (`/internal/v1`): only provider keys reach it; to any other caller (no key, a
# revoked key, a customer key) it is not there (404). A provider key without the scope is 403.
INTERNAL: dict[str, Rest] = {
    "GET /health/live": Rest(PUBLIC),
    "GET /health/ready": Rest(PUBLIC),
    "GET /schema": Rest(PUBLIC),
    "GET /schema/openapi.json": Rest(PUBLIC),
    "GET /schema/swagger": Rest(PUBLIC),
    "GET /schema/oauth2-redirect.html": Rest(PUBLIC),
    "GET /schema/{path}": Rest(PUBLIC, params={"path": "openapi.json"}),
    # The browser pages' assets, served from installed packages: no key, no data.
    "GET /static/{bundle}/{name}": Rest(PUBLIC, params={"bundle": "swagger-ui", "name": "swagger-ui.css"}),
    "POST /internal/v1/context-engine/providers": Rest(
        CONTRIBUTE,
        body=lambda ids: {
            "name": f"intruder-{_key()[:8]}",
            "classification": "delivery",
            "capabilities": ["risks"],
            "authority": "advisory",
        },
        unseen_other=LISTED,
    ),
    "GET /internal/v1/context-engine/providers": Rest(CONTRIBUTE, unseen_other=LISTED),
    "POST /internal/v1/context-engine/contributions": Rest(
        CONTRIBUTE,
        body=lambda ids: {
            "provider_id": ids["provider"],
            "project_id": ids["project"],
            "term": "intrusion",
            "summary": "An intruder's contribution.",
            "contribution_type": "risk",
            "evidence": [
                {
                    "capability": "risks",
                    "reference": {"kind": "external", "id": "x", "class": "general"},
                    "as_of": ids["now"],
                }
            ],
            "generated_at": ids["now"],
        },
        query=lambda ids: {"wait": 0},
    ),
    "GET /internal/v1/context-engine/contributions/{contribution_id}": Rest(CONTRIBUTE),
    "POST /internal/v1/corpus/sources": Rest(
        CONTRIBUTE,
        body=lambda ids: {"project_id": ids["project"], "uri": "intruder.md", "kind": "markdown", "content": "# x"},
        query=lambda ids: {"wait": 0},
    ),
}


# --------------------------------------------------------------------------------------------- GraphQL


def _subject(ids: Ids) -> dict[str, Any]:
    return {"type": "project", "id": ids["project"]}


GRAPHQL: dict[str, Field] = {
    "query viewer": Field(None, unseen_other=LISTED),
    "query projects": Field(WI_READ, unseen_other=LISTED),
    "query principals": Field(None, unseen_other=LISTED),
    "query workItem": Field(WI_READ, lambda ids: {"id": ids["work_item"]}),
    # A filter by a project the caller cannot see lists nothing, as a filter by an unknown project does.
    "query workItems": Field(WI_READ, lambda ids: {"projectId": ids["project"]}, unseen_other=LISTED),
    "query contextCorpusSearch": Field(CE, lambda ids: {"subjectRef": _subject(ids), "query": ids["passage_word"]}),
    "query contextPassage": Field(CE, lambda ids: {"id": ids["passage"]}),
    "query contextSources": Field(CE, lambda ids: {"projectId": ids["project"]}),
    "query contextQuery": Field(CE, lambda ids: {"question": ids["package_word"], "projectId": ids["project"]}),
    "query contextEngineSearch": Field(CE, lambda ids: {"query": ids["package_word"], "projectId": ids["project"]}),
    "query contextEnginePackageEvidence": Field(CE, lambda ids: {"packageId": ids["package"]}),
    "query contextEngineProviders": Field(CE, lambda ids: {"projectId": ids["project"]}),
    "query contextEngineOverview": Field(CE, lambda ids: {"projectId": ids["project"]}),
    "query contextEnginePackages": Field(CE, lambda ids: {"projectId": ids["project"]}),
    "query contextEnginePackage": Field(CE, lambda ids: {"id": ids["package"]}),
    "query workItemEnhancementRun": Field(READ, lambda ids: {"id": ids["run"]}),
    "query workItemEnhancementDrafts": Field(READ, lambda ids: {"runId": ids["run"]}),
    "query workItemEnhancementArtifacts": Field(READ, lambda ids: {"runId": ids["run"]}),
    "query workItemEnhancementRuns": Field(READ, lambda ids: {"targetId": ids["work_item"]}, unseen_other=LISTED),
    "query notification": Field(N_READ, lambda ids: {"id": ids["notification"]}),
    "query notificationList": Field(N_READ, unseen_other=LISTED),
    "query notificationSummary": Field(N_READ, unseen_other=LISTED),
    "query operation": Field(N_READ, lambda ids: {"id": ids["operation"]}),
    "mutation createWorkItemEnhancementRun": Field(
        RUN,
        lambda ids: {
            "input": {
                "target": {"type": "work_item", "id": ids["work_item"]},
                "actions": ["estimate"],
                "confirm": True,
                "idempotencyKey": _key(),
                "wait": 0,
            }
        },
    ),
    "mutation runWorkItemEnhancementAction": Field(
        RUN,
        lambda ids: {
            "input": {"runId": ids["run"], "action": "design", "confirm": True, "idempotencyKey": _key(), "wait": 0}
        },
    ),
    "mutation applyWorkItemEnhancementDrafts": Field(
        APPLY,
        lambda ids: {
            "input": {
                "runId": ids["run"],
                "draftIds": [ids["draft"]],
                "expectedTargetVersion": ids["work_item_version"],
                "confirm": True,
                "idempotencyKey": _key(),
            }
        },
    ),
    "mutation rejectDraft": Field(
        APPLY,
        lambda ids: {
            "input": {
                "runId": ids["run"],
                "draftId": ids["draft"],
                "reason": "Not what we need.",
                "confirm": True,
                "idempotencyKey": _key(),
            }
        },
    ),
    "mutation cancelEnhancementRun": Field(
        RUN, lambda ids: {"input": {"runId": ids["run"], "confirm": True, "idempotencyKey": _key()}}
    ),
    "mutation draftNotificationChange": Field(
        N_WRITE,
        lambda ids: {
            "input": {"notificationId": ids["notification"], "requestedOutcome": "acknowledged", "expectedVersion": 2}
        },
    ),
    "mutation applyNotificationChange": Field(
        N_OPERATE,
        lambda ids: {
            "input": {"proposalId": ids["proposal"], "expectedVersion": 2, "idempotencyKey": _key(), "confirm": True}
        },
    ),
}


# ------------------------------------------------------------------------------------------------- MCP

MCP: dict[str, Tool] = {
    "whoami": Tool(None, unseen_other=LISTED),
    "list_projects": Tool(WI_READ, unseen_other=LISTED),
    "list_work_items": Tool(WI_READ, lambda ids: {"project_id": ids["project"]}, unseen_other=LISTED),
    "list_principals": Tool(None, unseen_other=LISTED),
    "get_work_item": Tool(WI_READ, lambda ids: {"work_item_id": ids["work_item"]}),
    "search_context": Tool(CE, lambda ids: {"subject_ref": _subject(ids), "query": ids["passage_word"]}),
    "get_passage": Tool(CE, lambda ids: {"passage_id": ids["passage"]}),
    "list_sources": Tool(CE, lambda ids: {"project_id": ids["project"]}),
    "query_context": Tool(CE, lambda ids: {"question": ids["package_word"], "project_id": ids["project"]}),
    "get_context_overview": Tool(CE, lambda ids: {"project_id": ids["project"]}),
    "list_context_packages": Tool(CE, lambda ids: {"project_id": ids["project"]}),
    "get_context_package": Tool(CE, lambda ids: {"package_id": ids["package"]}),
    "get_package_evidence": Tool(CE, lambda ids: {"package_id": ids["package"]}),
    "list_context_providers": Tool(CE, lambda ids: {"project_id": ids["project"]}),
    "search_context_packages": Tool(CE, lambda ids: {"query": ids["package_word"], "project_id": ids["project"]}),
    "list_enhancement_runs": Tool(READ, lambda ids: {"target_id": ids["work_item"]}, unseen_other=LISTED),
    "create_enhancement_run": Tool(
        RUN,
        lambda ids: {
            "work_item_id": ids["work_item"],
            "actions": ["estimate"],
            "idempotency_key": _key(),
            "confirm": True,
            "wait": 0,
        },
    ),
    "get_enhancement_run": Tool(READ, lambda ids: {"run_id": ids["run"]}),
    "run_enhancement_action": Tool(
        RUN,
        lambda ids: {"run_id": ids["run"], "action": "design", "idempotency_key": _key(), "confirm": True, "wait": 0},
    ),
    "list_enhancement_drafts": Tool(READ, lambda ids: {"run_id": ids["run"]}),
    "list_enhancement_artifacts": Tool(READ, lambda ids: {"run_id": ids["run"]}),
    "get_operation_status": Tool(READ, lambda ids: {"run_id": ids["run"]}),
    "prepare_apply": Tool(APPLY, lambda ids: {"run_id": ids["run"], "draft_ids": [ids["draft"]]}),
    "apply_drafts": Tool(
        APPLY,
        lambda ids: {
            "run_id": ids["run"],
            "draft_ids": [ids["draft"]],
            "expected_target_version": ids["work_item_version"],
            "confirm": True,
            "idempotency_key": _key(),
        },
    ),
    "list_run_applies": Tool(READ, lambda ids: {"run_id": ids["run"]}),
    "reject_draft": Tool(
        APPLY,
        lambda ids: {
            "run_id": ids["run"],
            "draft_id": ids["draft"],
            "reason": "Not what we need.",
            "confirm": True,
            "idempotency_key": _key(),
        },
    ),
    "cancel_enhancement_run": Tool(RUN, lambda ids: {"run_id": ids["run"], "confirm": True, "idempotency_key": _key()}),
    "get_notifications_messaging": Tool(N_READ, lambda ids: {"resource_id": ids["notification"]}),
    "draft_notifications_messaging_change": Tool(
        N_WRITE,
        lambda ids: {
            "notification_id": ids["notification"],
            "requested_outcome": "acknowledged",
            "expected_version": 2,
        },
    ),
    "apply_notifications_messaging_change": Tool(
        N_OPERATE,
        lambda ids: {"proposal_id": ids["proposal"], "expected_version": 2, "idempotency_key": _key(), "confirm": True},
    ),
}


# ------------------------------------------------------------------------------------------- discovery


def route_key(method: str, path: str) -> str:
    """`GET /api/v1/runs/{run_id}`: the method and the path template without parameter types."""
    template = re.sub(r"{(\w+):\w+}", r"{\1}", path)
    return f"{method} {template}"


def rest_surface(app: Any) -> set[str]:
    """Every route of a Litestar app as `METHOD /path` (Litestar's automatic OPTIONS answers left out)."""
    found: set[str] = set()
    for route in app.routes:
        kind = type(route).__name__
        if kind == "WebSocketRoute":
            found.add(route_key("WEBSOCKET", route.path))
            continue
        if kind == "ASGIRoute":
            found.add(route_key("*", route.path))
            continue
        for handler in route.route_handlers:
            for method in handler.http_methods:
                if method != "OPTIONS":
                    found.add(route_key(method, route.path))
    return found


def graphql_surface(schema: Any) -> set[str]:
    """Every query and mutation field of a Strawberry schema as `query name` / `mutation name`."""
    graphql = schema._schema
    found = {f"query {name}" for name in graphql.query_type.fields}
    if graphql.mutation_type is not None:
        found |= {f"mutation {name}" for name in graphql.mutation_type.fields}
    if graphql.subscription_type is not None:
        found |= {f"subscription {name}" for name in graphql.subscription_type.fields}
    return found


def undeclared(surface: set[str], declared: dict[str, Any]) -> tuple[list[str], list[str]]:
    """What the app serves but the matrix does not declare, and what the matrix declares but the app lacks."""
    return sorted(surface - declared.keys()), sorted(declared.keys() - surface)
