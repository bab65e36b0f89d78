"""Notifications: creation with the unread counters, and the inbox as its recipient reads it.

Moves, their audit and operations are in `moves.py`; snoozes and their timers in `snoozes.py`; the live
feed's numbered changes in `changes.py`.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from asyncpg import Record

from groundwork.domain.ids import new_id
from groundwork.persistence import db

COLUMNS = (
    "id, workspace_id, recipient_id, event_id, event_type, source_kind, source_external_id, resource_type,"
    " resource_id, title, body, status, version, created_at, updated_at, snoozed_until, snooze_id"
)


@dataclass(frozen=True, slots=True)
class NotificationRow:
    """A notification in its recipient's inbox."""

    id: str
    workspace_id: str
    recipient_id: str
    event_id: str
    event_type: str
    source_kind: str
    source_external_id: str
    resource_type: str
    resource_id: str
    title: str
    body: str
    status: str
    version: int
    created_at: datetime
    updated_at: datetime
    # While snoozed: when the snooze ends, and which snooze it is (its timer brings the notification back).
    snoozed_until: datetime | None = None
    snooze_id: str | None = None

    @property
    def visible_unread(self) -> bool:
        """Whether it counts in `unreadCount`: unread and not snoozed."""
        return self.status == "unread" and self.snoozed_until is None


@dataclass(frozen=True, slots=True)
class NotificationAuditRow:
    """One recorded move of a notification: who, through which door, from and to, why, as which operation."""

    id: str
    notification_id: str
    operation_id: str
    actor_id: str
    via: str
    app_id: str | None
    provenance: str | None
    from_status: str
    to_status: str
    version_after: int
    reason: str | None
    occurred_at: datetime
    command: str
    snoozed_until: datetime | None


@dataclass(frozen=True, slots=True)
class NotificationOperationRow:
    """A command as run (`op_`): on which notifications, through which door, and the audit ids of its moves."""

    id: str
    workspace_id: str
    actor_id: str
    command: str
    via: str
    app_id: str | None
    notification_ids: list[str]
    created_at: datetime
    audit_ids: list[str]
    # A bulk move's per-item answer (None for other commands).
    result: list[dict[str, Any]] | None = None


def _notification(row: Record) -> NotificationRow:
    return NotificationRow(
        id=row["id"],
        workspace_id=row["workspace_id"],
        recipient_id=row["recipient_id"],
        event_id=row["event_id"],
        event_type=row["event_type"],
        source_kind=row["source_kind"],
        source_external_id=row["source_external_id"],
        resource_type=row["resource_type"],
        resource_id=row["resource_id"],
        title=row["title"],
        body=row["body"],
        status=row["status"],
        version=row["version"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        snoozed_until=row["snoozed_until"],
        snooze_id=row["snooze_id"],
    )


def notification_row(row: Record) -> NotificationRow:
    """A notification from a row selected with every column."""
    return _notification(row)


def audit_row(row: Record) -> NotificationAuditRow:
    """An audited move from a `notification_audit` row."""
    return _audit(row)


def operation_row(row: Record, audit_ids: list[str]) -> NotificationOperationRow:
    """An operation from a `notification_operations` row and the audit ids of its moves."""
    return _operation(row, audit_ids)


def _audit(row: Record) -> NotificationAuditRow:
    return NotificationAuditRow(
        id=row["id"],
        notification_id=row["notification_id"],
        operation_id=row["operation_id"],
        actor_id=row["actor_id"],
        via=row["via"],
        app_id=row["app_id"],
        provenance=row["provenance"],
        from_status=row["from_status"],
        to_status=row["to_status"],
        version_after=row["version_after"],
        reason=row["reason"],
        occurred_at=row["occurred_at"],
        command=row["command"],
        snoozed_until=row["snoozed_until"],
    )


def _operation(row: Record, audit_ids: list[str]) -> NotificationOperationRow:
    return NotificationOperationRow(
        id=row["id"],
        workspace_id=row["workspace_id"],
        actor_id=row["actor_id"],
        command=row["command"],
        via=row["via"],
        app_id=row["app_id"],
        notification_ids=row["notification_ids"],
        created_at=row["created_at"],
        audit_ids=audit_ids,
        result=json.loads(row["result"]) if row["result"] is not None else None,
    )


@dataclass(frozen=True)
class NewNotification:
    """One notification to create from an outbox event for one recipient."""

    workspace_id: str
    recipient_id: str
    event_id: str
    event_type: str
    source_kind: str
    source_external_id: str
    resource_type: str
    resource_id: str
    title: str
    body: str


# ---------------------------------------------------------------------------------------------- creation


async def insert_notifications(rows: list[NewNotification]) -> list[NotificationRow]:
    """Insert notifications, skipping any (event, recipient) that already has one; returns those created now.

    Unread counters grow in the same statement's transaction, for the new rows only.
    """
    if not rows:
        return []
    created = await db.fetch(
        f"""
        INSERT INTO notifications (id, workspace_id, recipient_id, event_id, event_type, source_kind,
            source_external_id, resource_type, resource_id, title, body)
        SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
            $7::text[], $8::text[], $9::text[], $10::text[], $11::text[])
        ON CONFLICT (event_id, recipient_id) DO NOTHING
        RETURNING {COLUMNS}
        """,
        [new_id("notification") for _ in rows],
        [r.workspace_id for r in rows],
        [r.recipient_id for r in rows],
        [r.event_id for r in rows],
        [r.event_type for r in rows],
        [r.source_kind for r in rows],
        [r.source_external_id for r in rows],
        [r.resource_type for r in rows],
        [r.resource_id for r in rows],
        [r.title for r in rows],
        [r.body for r in rows],
    )
    result = [_notification(r) for r in created]
    counts = Counter(r.recipient_id for r in result)
    await adjust_unread(counts)
    return result


async def adjust_unread(deltas: dict[str, int]) -> None:
    """Add each delta to its recipient's unread counter (rows taken in id order, so writers never deadlock)."""
    grow = sorted((k, v) for k, v in deltas.items() if v > 0)
    shrink = sorted((k, v) for k, v in deltas.items() if v < 0)
    if grow:
        await db.execute(
            """
            INSERT INTO notification_unread_counts (recipient_id, unread)
            SELECT id, delta FROM unnest($1::text[], $2::int[]) AS d(id, delta) ORDER BY id
            ON CONFLICT (recipient_id) DO UPDATE SET unread = notification_unread_counts.unread + EXCLUDED.unread
            """,
            [k for k, _ in grow],
            [v for _, v in grow],
        )
    if shrink:
        # A recipient with unread notifications has a counter row: it was written when they were created.
        await db.execute(
            """
            UPDATE notification_unread_counts c SET unread = greatest(c.unread + d.delta, 0)
            FROM unnest($1::text[], $2::int[]) AS d(id, delta) WHERE c.recipient_id = d.id
            """,
            [k for k, _ in shrink],
            [v for _, v in shrink],
        )


# ---------------------------------------------------------------------------------------------- inbox


async def list_inbox(
    recipient_id: str,
    *,
    status: str | None,
    source_kind: str | None,
    since: datetime | None,
    after_id: str | None,
    limit: int,
    snoozed: bool = False,
) -> tuple[list[NotificationRow], int]:
    """The recipient's notifications, newest first, after the keyset position `after_id`, and its unread count:
    those not snoozed, or (`snoozed`) only the snoozed ones.

    One round trip: the page and the unread counter come back together.
    """
    rows = await db.fetch(
        f"""
        WITH page AS (
            SELECT {COLUMNS} FROM notifications
            WHERE recipient_id = $1 AND ($2::text IS NULL OR status = $2) AND ($3::text IS NULL OR source_kind = $3)
              AND ($4::timestamptz IS NULL OR created_at >= $4) AND ($5::text IS NULL OR id < $5)
              AND (snoozed_until IS NOT NULL) = $7
            ORDER BY id DESC LIMIT $6)
        SELECT counter.unread_count, page.*
        FROM (SELECT coalesce((SELECT unread FROM notification_unread_counts WHERE recipient_id = $1), 0)
              AS unread_count) counter
        LEFT JOIN page ON true
        ORDER BY page.id DESC
        """,
        recipient_id,
        status,
        source_kind,
        since,
        after_id,
        limit,
        snoozed,
    )
    unread = int(rows[0]["unread_count"]) if rows else 0
    return [_notification(r) for r in rows if r["id"] is not None], unread


async def count_inbox(
    recipient_id: str, *, status: str | None, source_kind: str | None, since: datetime | None, snoozed: bool = False
) -> int:
    """How many of the recipient's notifications match the filters (snoozed ones, or the others)."""
    row = await db.fetchrow(
        """
        SELECT count(*) AS n FROM notifications
        WHERE recipient_id = $1 AND ($2::text IS NULL OR status = $2) AND ($3::text IS NULL OR source_kind = $3)
          AND ($4::timestamptz IS NULL OR created_at >= $4) AND (snoozed_until IS NOT NULL) = $5
        """,
        recipient_id,
        status,
        source_kind,
        since,
        snoozed,
    )
    return int(row["n"]) if row else 0


async def unread_count(recipient_id: str) -> int:
    """The recipient's unread notifications that are not snoozed (a counter, not a count)."""
    row = await db.fetchrow("SELECT unread FROM notification_unread_counts WHERE recipient_id = $1", recipient_id)
    return int(row["unread"]) if row else 0


async def get_notification(
    recipient_id: str, notification_id: str, *, for_update: bool = False
) -> NotificationRow | None:
    """The recipient's notification with this id (another principal's is None); `for_update` locks it."""
    lock = " FOR UPDATE" if for_update else ""
    row = await db.fetchrow(
        f"SELECT {COLUMNS} FROM notifications WHERE id = $1 AND recipient_id = $2{lock}",
        notification_id,
        recipient_id,
    )
    return _notification(row) if row else None


async def lock_notifications(recipient_id: str, notification_ids: list[str]) -> list[NotificationRow]:
    """The recipient's notifications among these ids, locked in id order (so concurrent moves never deadlock)."""
    rows = await db.fetch(
        f"SELECT {COLUMNS} FROM notifications WHERE recipient_id = $1 AND id = ANY($2::text[]) ORDER BY id FOR UPDATE",
        recipient_id,
        notification_ids,
    )
    return [_notification(r) for r in rows]


async def history(notification_id: str) -> list[NotificationAuditRow]:
    """Every move of a notification, oldest first."""
    rows = await db.fetch(
        "SELECT * FROM notification_audit WHERE notification_id = $1 ORDER BY occurred_at, id", notification_id
    )
    return [_audit(r) for r in rows]
