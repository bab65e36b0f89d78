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
from groundwork.domain.notifications.snooze import SNOOZE_COMMANDS, SnoozeCommand
from groundwork.domain.pagination import page_info, page_request
from groundwork.domain.tenancy.connected_apps import check_field_authority, check_sink_command
from groundwork.domain.tenancy.principals import Principal
from groundwork.domain.times import TIMESTAMP_ACCEPTED, timestamp
from groundwork.persistence import db
from groundwork.persistence.repositories.notifications import inbox as repo
from groundwork.persistence.repositories.notifications import moves
from groundwork.persistence.repositories.notifications.inbox import NotificationAuditRow, NotificationRow
from groundwork.platform.idempotency import request_results
from groundwork.services.notifications.moves import Actor, Move, record_moves


@dataclass(frozen=True)
class CommandResult:
    """What a command answers: the notification's new status and version, and its operation (a snooze command
    also its `snoozed_until`)."""

    id: str
    status: str
    version: int
    operation_id: str
    audit_reference: str
    command: str = ""
    snoozed_until: datetime | None = None

    def answer(self) -> dict[str, Any]:
        """The REST answer of DESIGN.md: `{id, status, version, operation_id}` (+ `snoozed_until` for snoozes)."""
        answer: dict[str, Any] = {
            "id": self.id,
            "status": self.status,
            "version": self.version,
            "operation_id": self.operation_id,
        }
        if self.command in SNOOZE_COMMANDS:
            answer["snoozed_until"] = timestamp(self.snoozed_until)
        return answer


@dataclass(frozen=True)
class ReadAllResult:
    """What read-all did: how many it read (one audited move each), as which operation, and whether more remain."""

    read: int
    operation_id: str | None
    has_more: bool


def sink_only(principal: Principal, via: str) -> bool:
    """Whether the caller acts as an action sink (an e-mail or chat link, or a `deliver` app's key)."""
    return via in SINK_VIA or (principal.app is not None and principal.app.direction == "deliver")


def allowed_for(principal: Principal, status: str, snoozed: bool = False) -> list[Command | SnoozeCommand]:
    """What this caller may do next with a notification in `status` (none without `notifications:operate`)."""
    return allowed_actions(
        status, may_operate=principal.has_scope(SCOPE_OPERATE), sink_only=sink_only(principal, ""), snoozed=snoozed
    )


def actor(principal: Principal, via: str) -> Actor:
    """The principal as the mover of a command through `via`."""
    return Actor(principal.id, principal.workspace_id, via, principal.app)


# ---------------------------------------------------------------------------------------------- reads


@dataclass(frozen=True)
class InboxFilter:
    """Validated list filters."""

    status: str | None
    source_kind: str | None
    since: datetime | None
    snoozed: bool


def inbox_filter(status: str | None, source_kind: str | None, since: str | None, snoozed: Any = None) -> InboxFilter:
    """Validate `status`, `source_kind`, `since` and `snoozed` (422 naming the bad one)."""
    if snoozed is not None and not isinstance(snoozed, bool):
        raise ValidationFailed("Invalid filter.", [FieldError("snoozed", "must be true or false")])
    return InboxFilter(
        check_choice(status, STATUSES, "status"),
        check_choice(source_kind, SOURCE_KINDS, "source_kind"),
        parse_time(since, "since") if since is not None else None,
        bool(snoozed),
    )


async def list_notifications(
    principal: Principal,
    *,
    status: str | None = None,
    source_kind: str | None = None,
    since: str | None = None,
    limit: int | None = None,
    cursor: str | None = None,
    snoozed: Any = None,
) -> tuple[list[NotificationRow], dict[str, Any], int]:
    """The caller's notifications, newest first: the page, its `page` member, and the unread count. Snoozed
    notifications are left out, unless `snoozed` asks for them (and only them)."""
    filters = inbox_filter(status, source_kind, since, snoozed)
    page = page_request(limit, cursor)
    rows, unread = await repo.list_inbox(
        principal.id,
        status=filters.status,
        source_kind=filters.source_kind,
        since=filters.since,
        after_id=page.after_text(),
        limit=page.limit + 1,
        snoozed=filters.snoozed,
    )
    rows, info = page_info(rows, page.limit, lambda r: {"id": r.id})
    return rows, info, unread


async def count_notifications(
    principal: Principal,
    *,
    status: str | None = None,
    source_kind: str | None = None,
    since: str | None = None,
    snoozed: Any = None,
) -> int:
    """How many of the caller's notifications match the filters."""
    filters = inbox_filter(status, source_kind, since, snoozed)
    return await repo.count_inbox(
        principal.id,
        status=filters.status,
        source_kind=filters.source_kind,
        since=filters.since,
        snoozed=filters.snoozed,
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
    earlier = await earlier_move(principal, notification_id)
    if earlier is not None:
        return earlier
    async with db.transaction():
        row = await locked_notification(principal, notification_id)
        move = check_command(
            command,
            row.status,
            row.version,
            expected,
            sink_only=sink_only(principal, via),
            snoozed=row.snoozed_until is not None,
        )
        check_confirmation(move, confirm, notification_id)
        [after] = await moves.move_many([row.id], move.to_status)
        recorded = await record_moves(
            [Move(row, after, move.id, move.event_type)], actor(principal, via), operation_command=move.id, reason=why
        )
        await request_results.record_result("notification_move", recorded.audit_ids[0])
    return CommandResult(after.id, after.status, after.version, recorded.operation_id, recorded.audit_ids[0], move.id)


async def earlier_move(principal: Principal, notification_id: str) -> CommandResult | None:
    """The move an earlier attempt of this same request made (its answer was lost), if any.

    The same request retried after its first attempt's answer was lost gets that move's answer: its
    `expected_version` is stale now, and the move must not be refused or made twice.
    """
    earlier = await request_results.earlier_result("notification_move")
    entry = await moves.audit_entry(principal.id, earlier) if earlier is not None else None
    if entry is None or entry.notification_id != notification_id:
        return None
    return CommandResult(
        notification_id,
        entry.to_status,
        entry.version_after,
        entry.operation_id,
        entry.id,
        entry.command,
        entry.snoozed_until,
    )


async def locked_notification(principal: Principal, notification_id: str) -> NotificationRow:
    """The caller's notification, locked for a move (404 for anything else)."""
    row = await repo.get_notification(principal.id, notification_id, for_update=True)
    if row is None or row.workspace_id != principal.workspace_id:
        raise NotFound("No such notification.")
    return row


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
    read = COMMANDS["read"]
    async with db.transaction():
        rows = await moves.lock_unread(
            principal.id, up_to_time=time, up_to_id=last_id, inclusive=inclusive, limit=MAX_READ_ALL + 1
        )
        has_more = len(rows) > MAX_READ_ALL
        rows = rows[:MAX_READ_ALL]
        if not rows:
            return ReadAllResult(0, None, False)
        moved = await moves.move_many([r.id for r in rows], read.to_status)
        recorded = await record_moves(
            [Move(before, after, read.id, read.event_type) for before, after in zip(rows, moved, strict=True)],
            actor(principal, via),
            operation_command="read_all",
            reason=None,
        )
    return ReadAllResult(len(rows), recorded.operation_id, has_more)


async def operation(principal: Principal, operation_id: str) -> dict[str, Any]:
    """A notification command's operation (`op_`), visible only to the principal who ran it."""
    row = await moves.get_operation(principal.id, operation_id)
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
    } | ({"items": row.result} if row.result is not None else {})
