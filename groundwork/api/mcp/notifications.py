"""MCP tools for notifications and messaging (contract v0.2, preview): read, draft, and confirmed apply only.

The workflow the spec asks of a client: read the current state, draft a proposal, show the user its
validation results, conflicts and exact command, and apply only after the user confirmed.
"""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp.types import ToolAnnotations

from groundwork.api.mcp.answers import listed
from groundwork.api.mcp.arguments import (
    Confirm,
    Cursor,
    ExpectedVersion,
    IdempotencyKey,
    Limit,
    NotificationId,
    NotificationStatus,
    ProposalId,
    Reason,
    SourceKind,
    choice,
    described,
)
from groundwork.api.mcp.enhancement import StoredError
from groundwork.api.mcp.server import GroundworkMCPServer, caller, tool_error
from groundwork.api.resources.notifications import (
    message_resource,
    notification_detail,
    notification_resource,
    proposal_resource,
    thread_resource,
)
from groundwork.domain.errors import FieldError, GroundworkError, ValidationFailed
from groundwork.domain.notifications.inbox import SCOPE_OPERATE, SCOPE_READ, SCOPE_WRITE
from groundwork.domain.tenancy.principals import Principal
from groundwork.platform.idempotency.calls import call_once
from groundwork.services.notifications import inbox as service
from groundwork.services.notifications import preferences, proposals
from groundwork.services.notifications import threads as messages
from groundwork.services.notifications.summary import summary
from groundwork.services.operations import status as operations

# A draft persists a proposal but changes no notification.
DRAFTS = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)
# Applying changes a notification's status: clients must ask the user first.
APPLIES = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False)
VIEWS = ("inbox", "threads", "preferences", "summary")
OUTCOMES = ("read", "acknowledged", "dismissed", "snoozed", "unsnoozed")

ResourceId = Annotated[
    str | None,
    described(
        "A `notification_`, `thread_`, `op_` or `ncp_` id: its canonical detail. Omit for a `view`.", maxLength=200
    ),
]
View = Annotated[str, choice("Without `resource_id`: which bounded view to read.", VIEWS, optional=False)]
Since = Annotated[
    str | None,
    described("An ISO 8601 time: the inbox since then, or what the summary covers (default: the last 24 hours)."),
]
Snoozed = Annotated[
    bool | None, described("true: only the snoozed notifications, which the inbox otherwise leaves out.")
]
Outcome = Annotated[str, choice("Where to move the notification.", OUTCOMES, optional=False)]
EvidenceRefs = Annotated[
    list[dict[str, str]] | None,
    described("References to evidence for the change (each `{kind, id}`).", maxItems=50),
]
SnoozeUntil = Annotated[str | None, described("With `snoozed`: an ISO 8601 time to snooze until.")]
SnoozeFor = Annotated[
    str | None, described("With `snoozed`: an ISO 8601 duration such as PT2H, counted from the apply.", maxLength=64)
]


async def _resource(principal: Principal, resource_id: str, limit: int, cursor: str | None) -> dict[str, Any]:
    if resource_id.startswith("notification_"):
        row, history = await service.get_notification(principal, resource_id)
        detail = notification_detail(row, history, principal)
        return {
            "data": detail,
            "provenance": {
                "source": detail["source"],
                "eventType": detail["eventType"],
                "createdAt": detail["createdAt"],
            },
            "allowedActions": detail["allowedActions"],
        }
    if resource_id.startswith("thread_"):
        thread, rows, page = await messages.get_thread(principal, resource_id, limit=limit, cursor=cursor)
        return listed({**thread_resource(thread), "messages": [message_resource(m) for m in rows]}, page)
    if resource_id.startswith("op_"):
        return {"data": await operations.operation_status(principal, resource_id)}
    if resource_id.startswith("ncp_"):
        return {"data": proposal_resource(await proposals.get_proposal(principal, resource_id))}
    raise ValidationFailed(
        "Unknown resource id.", [FieldError("resource_id", "a notification_, thread_, op_ or ncp_ id")]
    )


async def _view(principal: Principal, view: str, filters: dict[str, Any]) -> dict[str, Any]:
    if view == "inbox":
        rows, page, unread = await service.list_notifications(principal, **filters)
        return listed([notification_resource(r, principal) for r in rows], page, unreadCount=unread)
    if view == "threads":
        threads, page = await messages.list_threads(principal, limit=filters["limit"], cursor=filters["cursor"])
        return listed([thread_resource(t) for t in threads], page)
    if view == "preferences":
        return {"data": (await preferences.get_preferences(principal)).document()}
    return {"data": await summary(principal, filters["since"])}


def register_notification_tools(mcp: GroundworkMCPServer) -> None:
    """Register the notifications and messaging tools on `mcp`."""

    @mcp.groundwork_tool(title="Read notifications and messages", scopes=[SCOPE_READ])
    async def get_notifications_messaging(
        ctx: Context[Any, Any],
        resource_id: ResourceId = None,
        view: View = "inbox",
        status: NotificationStatus = None,
        source_kind: SourceKind = None,
        since: Since = None,
        limit: Limit = 20,
        cursor: Cursor = None,
        snoozed: Snoozed = None,
    ) -> dict[str, Any]:
        """Read your notifications and threads (contract v0.2, preview). With `resource_id` (notification_,
        thread_, op_ or ncp_): its canonical detail with provenance and allowed actions. Otherwise a bounded
        `view`: `inbox` (filters status, source_kind, since, snoozed: true for only the snoozed ones, which
        the inbox otherwise leaves out; limit up to 100, cursor), `threads`,
        `preferences`, or `summary` (what changed since `since` in what you requested, watch or take part in).
        Read only."""
        principal = caller(ctx, SCOPE_READ)
        try:
            if resource_id:
                return await _resource(principal, resource_id, limit, cursor)
            if view not in VIEWS:
                raise ValidationFailed("Unknown view.", [FieldError("view", f"one of {', '.join(VIEWS)}")])
            filters = {
                "status": status,
                "source_kind": source_kind,
                "since": since,
                "limit": limit,
                "cursor": cursor,
                "snoozed": snoozed,
            }
            return await _view(principal, view, filters)
        except GroundworkError as error:
            raise tool_error(error) from None

    @mcp.groundwork_tool(title="Draft a notification change", scopes=[SCOPE_WRITE], annotations=DRAFTS)
    async def draft_notifications_messaging_change(
        ctx: Context[Any, Any],
        notification_id: NotificationId,
        requested_outcome: Outcome,
        expected_version: ExpectedVersion,
        reason: Reason = None,
        evidence_refs: EvidenceRefs = None,
        snooze_until: SnoozeUntil = None,
        snooze_for: SnoozeFor = None,
    ) -> dict[str, Any]:
        """Propose moving one of your notifications to `requested_outcome` (read, acknowledged, dismissed,
        snoozed or unsnoozed) from the version you read; `snoozed` takes `snooze_until` (a time) or `snooze_for`
        (an ISO 8601 duration such as PT2H, counted from the apply): the notification then leaves the inbox
        until that time, its status unchanged. Persists a proposal with validation results, conflicts and the
        exact command to show the user; changes nothing. Apply it with apply_notifications_messaging_change
        after the user confirmed."""
        principal = caller(ctx, SCOPE_WRITE)
        try:
            proposal = await proposals.draft_change(
                principal,
                notification_id,
                requested_outcome,
                expected_version,
                reason,
                evidence_refs,
                snooze_until,
                snooze_for,
            )
        except GroundworkError as error:
            raise tool_error(error) from None
        return {"data": proposal_resource(proposal)}

    @mcp.groundwork_tool(title="Apply a notification change", scopes=[SCOPE_OPERATE], annotations=APPLIES)
    async def apply_notifications_messaging_change(
        ctx: Context[Any, Any],
        proposal_id: ProposalId,
        expected_version: ExpectedVersion,
        idempotency_key: IdempotencyKey,
        confirm: Confirm = None,
    ) -> dict[str, Any]:
        """Apply a proposal after the user explicitly confirmed it: needs `confirm: true`, the notification's
        expected version, and a fresh `idempotency_key` (reuse it only to retry the same call). A stale version
        or a move the lifecycle forbids changes nothing. Answers the updated notification and the audit reference."""
        principal = caller(ctx, SCOPE_OPERATE)

        async def apply() -> dict[str, Any]:
            result, _ = await proposals.apply_proposal(principal, proposal_id, expected_version, confirm, via="mcp")
            return {**result.answer(), "audit_reference": result.audit_reference}

        request = {"proposal_id": proposal_id, "expected_version": expected_version, "confirm": confirm}
        try:
            outcome, replayed = await call_once(
                principal, idempotency_key, "apply_notifications_messaging_change", request, apply
            )
        except GroundworkError as error:
            raise tool_error(error) from None
        if "error" in outcome:
            raise tool_error(StoredError(outcome["error"]))
        row, history = await service.get_notification(principal, outcome["id"])
        return {
            "data": notification_detail(row, history, principal),
            "operation": await service.operation(principal, outcome["operation_id"]),
            "auditReference": outcome["audit_reference"],
            "idempotencyReplayed": replayed,
        }
