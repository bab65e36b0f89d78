"""Notification moves (lifecycle commands, snoozes, a snooze's end) with their operations and audit.

Every function runs inside its caller's transaction, on rows the caller has locked.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from groundwork.domain.ids import new_id
from groundwork.persistence import db
from groundwork.persistence.repositories.notifications.inbox import (
    COLUMNS,
    NotificationAuditRow,
    NotificationOperationRow,
    NotificationRow,
    audit_row,
    notification_row,
    operation_row,
)


async def move_many(notification_ids: list[str], to_status: str) -> list[NotificationRow]:
    """Set the status of locked notifications and bump each version by one; dismissing also ends a snooze."""
    rows = await db.fetch(
        f"""
        UPDATE notifications SET status = $2, version = version + 1, updated_at = clock_timestamp(),
            snoozed_until = CASE WHEN $2 = 'dismissed' THEN NULL ELSE snoozed_until END,
            snooze_id = CASE WHEN $2 = 'dismissed' THEN NULL ELSE snooze_id END
        WHERE id = ANY($1::text[]) RETURNING {COLUMNS}
        """,
        notification_ids,
        to_status,
    )
    return sorted((notification_row(r) for r in rows), key=lambda r: r.id)


async def snooze_many(notification_ids: list[str], snooze_ids: list[str], until: datetime) -> list[NotificationRow]:
    """Snooze locked notifications until `until` (each under its own snooze id) and bump each version by one."""
    rows = await db.fetch(
        """
        UPDATE notifications n SET snoozed_until = $3, snooze_id = s.snooze_id, version = n.version + 1,
            updated_at = clock_timestamp()
        FROM unnest($1::text[], $2::text[]) AS s(id, snooze_id)
        WHERE n.id = s.id RETURNING n.*
        """,
        notification_ids,
        snooze_ids,
        until,
    )
    return sorted((notification_row(r) for r in rows), key=lambda r: r.id)


async def unsnooze(notification_id: str) -> NotificationRow:
    """End a locked notification's snooze now and bump its version by one."""
    row = await db.fetchrow(
        f"UPDATE notifications SET snoozed_until = NULL, snooze_id = NULL, version = version + 1,"
        f" updated_at = clock_timestamp() WHERE id = $1 RETURNING {COLUMNS}",
        notification_id,
    )
    assert row is not None
    return notification_row(row)


async def lock_unread(
    recipient_id: str, *, up_to_time: datetime | None, up_to_id: str | None, inclusive: bool, limit: int
) -> list[NotificationRow]:
    """The recipient's unread notifications that are not snoozed, up to a time or an id, oldest first, locked."""
    rows = await db.fetch(
        f"""
        SELECT {COLUMNS} FROM notifications
        WHERE recipient_id = $1 AND status = 'unread' AND snoozed_until IS NULL
          AND ($2::timestamptz IS NULL OR created_at <= $2)
          AND ($3::text IS NULL OR id < $3 OR ($4 AND id = $3))
        ORDER BY id LIMIT $5 FOR UPDATE
        """,
        recipient_id,
        up_to_time,
        up_to_id,
        inclusive,
        limit,
    )
    return [notification_row(r) for r in rows]


async def insert_operation(
    *,
    workspace_id: str,
    actor_id: str,
    command: str,
    via: str,
    app_id: str | None,
    notification_ids: list[str],
    result: list[dict[str, Any]] | None = None,
) -> NotificationOperationRow:
    """Record a command as an operation (`op_`), with a bulk move's per-item `result`."""
    row = await db.fetchrow(
        "INSERT INTO notification_operations (id, workspace_id, actor_id, command, via, app_id, notification_ids,"
        " result) VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb) RETURNING *",
        new_id("op"),
        workspace_id,
        actor_id,
        command,
        via,
        app_id,
        notification_ids,
        json.dumps(result) if result is not None else None,
    )
    assert row is not None
    return operation_row(row, [])  # its moves are audited after it


async def set_operation_result(operation_id: str, result: list[dict[str, Any]]) -> None:
    """Keep a bulk move's per-item answer with its operation."""
    await db.execute(
        "UPDATE notification_operations SET result = $2::jsonb WHERE id = $1", operation_id, json.dumps(result)
    )


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One move to record."""

    notification_id: str
    command: str
    from_status: str
    to_status: str
    version_after: int
    snoozed_until: datetime | None


async def audit_entry(actor_id: str, audit_id: str) -> NotificationAuditRow | None:
    """One recorded move by `actor_id`: its notification, operation, new status and version."""
    row = await db.fetchrow("SELECT * FROM notification_audit WHERE id = $1 AND actor_id = $2", audit_id, actor_id)
    return audit_row(row) if row else None


async def insert_audit(
    entries: list[AuditEntry],
    *,
    operation_id: str,
    actor_id: str,
    via: str,
    app_id: str | None,
    provenance: str | None,
    reason: str | None,
) -> list[str]:
    """Record moves of one operation; returns their audit ids (`aud_`) in the order given."""
    ids = [new_id("aud") for _ in entries]
    await db.execute(
        """
        INSERT INTO notification_audit (id, notification_id, operation_id, actor_id, via, app_id, provenance,
            from_status, to_status, version_after, reason, command, snoozed_until)
        SELECT a.id, a.notification_id, $3, $4, $5, $6, $7, a.from_status, a.to_status, a.version_after, $8,
            a.command, a.snoozed_until
        FROM unnest($1::text[], $2::text[], $9::text[], $10::text[], $11::int[], $12::text[], $13::timestamptz[])
            AS a(id, notification_id, from_status, to_status, version_after, command, snoozed_until)
        """,
        ids,
        [e.notification_id for e in entries],
        operation_id,
        actor_id,
        via,
        app_id,
        provenance,
        reason,
        [e.from_status for e in entries],
        [e.to_status for e in entries],
        [e.version_after for e in entries],
        [e.command for e in entries],
        [e.snoozed_until for e in entries],
    )
    return ids


async def get_operation(actor_id: str, operation_id: str) -> NotificationOperationRow | None:
    """An operation the principal ran, with the audit ids of its moves."""
    row = await db.fetchrow(
        """
        SELECT o.*, coalesce((SELECT array_agg(a.id ORDER BY a.id) FROM notification_audit a
                              WHERE a.operation_id = o.id), '{}') AS audit_ids
        FROM notification_operations o WHERE o.id = $1 AND o.actor_id = $2
        """,
        operation_id,
        actor_id,
    )
    return operation_row(row, row["audit_ids"]) if row else None
