"""The notification domain service: the caller's own inbox and every lifecycle command.

Every transport (REST, GraphQL apply, MCP apply) and every action sink (e-mail and chat action
links) changes a notification through `change_notification`, which differs only in `via`: one
transaction locks the row, checks the version, the transition and the confirmation, moves the
status and bumps the version, records the operation and the audit entry, and appends the event.
Reads are self-scoped: another principal's notification does not exist for the caller (404).
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from groundwork.domain.choices import check_choice
from groundwork.domain.errors import FieldError, NotFound, ValidationFailed
from groundwork.domain.notifications.inbox import (
    COMMANDS,
    MAX_READ_ALL,
    SCOPE_OPERATE,
    SINK_COMMANDS,
    SINK_VIA,
    SOURCE_KINDS,
    STATUSES,
    VIA,
    Command,
    allowed_actions,
    check_command,
    check_confirmation,
    parse_time,
    validate_command_input,
)
from groundwork.domain.pagination import page_info, page_request
from groundwork.domain.tenancy.connected_apps import check_field_authority, check_sink_command
from groundwork.domain.tenancy.principals import Principal
from groundwork.domain.times import TIMESTAMP_ACCEPTED, format_timestamp, timestamp
from groundwork.persistence import db
from groundwork.persistence.repositories.notifications import inbox as repo
from groundwork.persistence.repositories.notifications.inbox import NotificationAuditRow, NotificationRow
from groundwork.persistence.repositories.platform import outbox
from groundwork.platform.idempotency import request_results


@dataclass(frozen=True)
class CommandResult:
    """What a lifecycle command answers: the notification's new status and version, and its operation."""

    id: str
    status: str
    version: int
    operation_id: str
    audit_reference: str

    def answer(self) -> dict[str, Any]:
        """The REST answer of DESIGN.md: `{id, status, version, operation_id}`."""
        return {"id": self.id, "status": self.status, "version": self.version, "operation_id": self.operation_id}


@dataclass(frozen=True)
class ReadAllResult:
    """What read-all did: how many it read (one audited move each), as which operation, and whether more remain."""

    read: int
    operation_id: str | None
    has_more: bool


def sink_only(principal: Principal, via: str) -> bool:
    """Whether the caller acts as an action sink (an e-mail or chat link, or a `deliver` app's key)."""
    return via in SINK_VIA or (principal.app is not None and principal.app.direction == "deliver")


def allowed_for(principal: Principal, status: str) -> list[Command]:
    """What this caller may do next with a notification in `status` (none without `notifications:operate`)."""
    return allowed_actions(status, may_operate=principal.has_scope(SCOPE_OPERATE), sink_only=sink_only(principal, ""))


# ---------------------------------------------------------------------------------------------- reads


@dataclass(frozen=True)
class InboxFilter:
    """Validated list filters."""

    status: str | None
    source_kind: str | None
    since: datetime | None


def inbox_filter(status: str | None, source_kind: str | None, since: str | None) -> InboxFilter:
    """Validate `status`, `source_kind` and `since` (422 naming the bad one)."""
    return InboxFilter(
        check_choice(status, STATUSES, "status"),
        check_choice(source_kind, SOURCE_KINDS, "source_kind"),
        parse_time(since, "since") if since is not None else None,
    )


async def list_notifications(
    principal: Principal,
    *,
    status: str | None = None,
    source_kind: str | None = None,
    since: str | None = None,
    limit: int | None = None,
    cursor: str | None = None,
) -> tuple[list[NotificationRow], dict[str, Any], int]:
    """The caller's notifications, newest first: the page, its `page` member, and the unread count."""
    filters = inbox_filter(status, source_kind, since)
    page = page_request(limit, cursor)
    rows, unread = await repo.list_inbox(
        principal.id,
        status=filters.status,
        source_kind=filters.source_kind,
        since=filters.since,
        after_id=page.after_text(),
        limit=page.limit + 1,
    )
    rows, info = page_info(rows, page.limit, lambda r: {"id": r.id})
    return rows, info, unread


async def count_notifications(
    principal: Principal, *, status: str | None = None, source_kind: str | None = None, since: str | None = None
) -> int:
    """How many of the caller's notifications match the filters."""
    filters = inbox_filter(status, source_kind, since)
    return await repo.count_inbox(
        principal.id, status=filters.status, source_kind=filters.source_kind, since=filters.since
    )


async def get_notification(
    principal: Principal, notification_id: str
) -> tuple[NotificationRow, list[NotificationAuditRow]]:
    """One of the caller's notifications with its audit history (shown only to its owner)."""
    row = await repo.get_notification(principal.id, notification_id)
    if row is None:
        raise NotFound("No such notification.")
    return row, await repo.history(notification_id)


# ---------------------------------------------------------------------------------------------- commands


async def change_notification(
    principal: Principal,
    notification_id: str,
    command: str,
    *,
    expected_version: Any,
    reason: Any = None,
    confirm: Any = None,
    via: str,
) -> CommandResult:
    """Run one lifecycle command on the caller's notification, in one transaction, exactly once per version."""
    if command not in COMMANDS:
        raise ValidationFailed("Unknown command.", [FieldError("command", f"must be one of {', '.join(COMMANDS)}")])
    if via not in VIA or (via in SINK_VIA and command not in SINK_COMMANDS):
        raise ValueError(f"{via!r} cannot {command}")  # only our own action links use e-mail and chat
    expected, why = validate_command_input(expected_version, reason)
    check_sink_command(principal, command, SINK_COMMANDS)
    check_field_authority(principal, ["status"])
    # The same request retried after its first attempt's answer was lost gets that move's answer (its
    # `expected_version` is stale now, and the move must not be refused or made twice).
    earlier = await request_results.earlier_result("notification_move")
    entry = await repo.audit_entry(principal.id, earlier) if earlier is not None else None
    if entry is not None and entry.notification_id == notification_id:
        return CommandResult(notification_id, entry.to_status, entry.version_after, entry.operation_id, str(earlier))
    async with db.transaction():
        row = await repo.get_notification(principal.id, notification_id, for_update=True)
        if row is None or row.workspace_id != principal.workspace_id:
            raise NotFound("No such notification.")
        move = check_command(command, row.status, row.version, expected, sink_only=sink_only(principal, via))
        check_confirmation(move, confirm, notification_id)
        operation_id, audit_ids, moved = await _record_moves(principal, [row], move, via=via, reason=why)
        await request_results.record_result("notification_move", audit_ids[0])
    return CommandResult(moved[0].id, moved[0].status, moved[0].version, operation_id, audit_ids[0])


async def _record_moves(
    principal: Principal, rows: list[NotificationRow], move: Command, *, via: str, reason: str | None
) -> tuple[str, list[str], list[NotificationRow]]:
    """Move locked notifications, record the operation and one audit entry and one event per move."""
    ids = [r.id for r in rows]
    moved = [await repo.move(ids[0], move.to_status)] if len(ids) == 1 else await repo.move_many(ids, move.to_status)
    app = principal.app
    operation = await repo.insert_operation(
        workspace_id=principal.workspace_id,
        actor_id=principal.id,
        command=move.id if len(ids) == 1 or move.id != "read" else "read_all",
        via=via,
        app_id=app.id if app else None,
        notification_ids=ids,
    )
    audit_ids = await repo.insert_audit(
        [repo.AuditEntry(m.id, move.from_status, move.to_status, m.version) for m in moved],
        operation_id=operation.id,
        actor_id=principal.id,
        via=via,
        app_id=app.id if app else None,
        provenance=app.provenance if app else None,
        reason=reason,
    )
    source = {"via": via, "app_id": app.id if app else None}
    events = []
    for m in moved:
        occurred = format_timestamp(m.updated_at)
        if move.event_type == "notification.acknowledged":
            payload: dict[str, Any] = {
                "notification_id": m.id,
                "prior_status": move.from_status,
                "status": m.status,
                "occurred_at": occurred,
            }
        else:
            payload = {
                "notification_id": m.id,
                "changed_fields": ["status"],
                "version": m.version,
                "occurred_at": occurred,
            }
        events.append(
            {
                "type": move.event_type,
                "workspace_id": m.workspace_id,
                "resource_type": "notification",
                "resource_id": m.id,
                "actor_id": principal.id,
                "payload": payload,
                "source": source,
                "occurred_at": m.updated_at,
                "project_id": None,
                "private_to": m.recipient_id,
            }
        )
    await outbox.append_events(events)
    if move.from_status == "unread":
        await repo.adjust_unread({principal.id: -len(moved)})
    return operation.id, audit_ids, moved


UP_TO_ACCEPTED = f"must be {TIMESTAMP_ACCEPTED}, a notification id or a cursor from the list"


def _up_to(value: Any) -> tuple[datetime | None, str | None, bool]:
    """`up_to` of read-all: a time, a notification id (inclusive), or a list cursor (exclusive, as pages are)."""
    if value is None:
        return None, None, False
    if not isinstance(value, str) or not value:
        raise ValidationFailed(
            "Invalid up_to.", [FieldError("up_to", "must be a time, a notification id or a cursor from the list")]
        )
    if value.startswith("notification_"):
        return None, value, True
    if value[:4].isdigit() and "T" in value:
        return parse_time(value, "up_to"), None, False
    try:
        position = json.loads(base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)))
    except (ValueError, binascii.Error, UnicodeDecodeError, RecursionError):
        position = None
    if not isinstance(position, dict) or not isinstance(position.get("id"), str):
        raise ValidationFailed(
            "Invalid up_to.", [FieldError("up_to", "must be a time, a notification id or a cursor from the list")]
        )
    return None, position["id"], False


async def read_all(principal: Principal, up_to: Any, *, via: str) -> ReadAllResult:
    """Read the caller's unread notifications up to a point (at most 1,000 a call), one audited move each."""
    time, last_id, inclusive = _up_to(up_to)
    check_field_authority(principal, ["status"])
    async with db.transaction():
        rows = await repo.lock_unread(
            principal.id, up_to_time=time, up_to_id=last_id, inclusive=inclusive, limit=MAX_READ_ALL + 1
        )
        has_more = len(rows) > MAX_READ_ALL
        rows = rows[:MAX_READ_ALL]
        if not rows:
            return ReadAllResult(0, None, False)
        operation_id, _, _ = await _record_moves(principal, rows, COMMANDS["read"], via=via, reason=None)
    return ReadAllResult(len(rows), operation_id, has_more)


async def operation(principal: Principal, operation_id: str) -> dict[str, Any]:
    """A notification command's operation (`op_`), visible only to the principal who ran it."""
    row = await repo.get_operation(principal.id, operation_id)
    if row is None:
        raise NotFound("No such operation.")
    return {
        "id": row.id,
        "kind": "notification_command",
        "status": "succeeded",
        "command": row.command,
        "via": row.via,
        "appId": row.app_id,
        "notificationIds": list(row.notification_ids),
        "auditReferences": list(row.audit_ids),
        "startedAt": timestamp(row.created_at),
        "updatedAt": timestamp(row.created_at),
        "completedAt": timestamp(row.created_at),
        "error": None,
    }
