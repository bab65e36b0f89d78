"""Notifications: creation with the unread counters, the inbox, and lifecycle moves with their audit and
operations."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime

from asyncpg import Record

from groundwork.domain.ids import new_id
from groundwork.persistence import db

_COLUMNS = (
    "id, workspace_id, recipient_id, event_id, event_type, source_kind, source_external_id, resource_type,"
    " resource_id, title, body, status, version, created_at, updated_at"
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
    )


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
        RETURNING {_COLUMNS}
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
) -> tuple[list[NotificationRow], int]:
    """The recipient's notifications, newest first, after the keyset position `after_id`, and its unread count.

    One round trip: the page and the unread counter come back together.
    """
    rows = await db.fetch(
        f"""
        WITH page AS (
            SELECT {_COLUMNS} FROM notifications
            WHERE recipient_id = $1 AND ($2::text IS NULL OR status = $2) AND ($3::text IS NULL OR source_kind = $3)
              AND ($4::timestamptz IS NULL OR created_at >= $4) AND ($5::text IS NULL OR id < $5)
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
    )
    unread = int(rows[0]["unread_count"]) if rows else 0
    return [_notification(r) for r in rows if r["id"] is not None], unread


async def count_inbox(recipient_id: str, *, status: str | None, source_kind: str | None, since: datetime | None) -> int:
    """How many of the recipient's notifications match the filters."""
    row = await db.fetchrow(
        """
        SELECT count(*) AS n FROM notifications
        WHERE recipient_id = $1 AND ($2::text IS NULL OR status = $2) AND ($3::text IS NULL OR source_kind = $3)
          AND ($4::timestamptz IS NULL OR created_at >= $4)
        """,
        recipient_id,
        status,
        source_kind,
        since,
    )
    return int(row["n"]) if row else 0


async def unread_count(recipient_id: str) -> int:
    """The recipient's unread notifications (a counter, not a count)."""
    row = await db.fetchrow("SELECT unread FROM notification_unread_counts WHERE recipient_id = $1", recipient_id)
    return int(row["unread"]) if row else 0


async def get_notification(
    recipient_id: str, notification_id: str, *, for_update: bool = False
) -> NotificationRow | None:
    """The recipient's notification with this id (another principal's is None); `for_update` locks it."""
    lock = " FOR UPDATE" if for_update else ""
    row = await db.fetchrow(
        f"SELECT {_COLUMNS} FROM notifications WHERE id = $1 AND recipient_id = $2{lock}",
        notification_id,
        recipient_id,
    )
    return _notification(row) if row else None


async def history(notification_id: str) -> list[NotificationAuditRow]:
    """Every move of a notification, oldest first."""
    rows = await db.fetch(
        "SELECT * FROM notification_audit WHERE notification_id = $1 ORDER BY occurred_at, id", notification_id
    )
    return [_audit(r) for r in rows]


# ---------------------------------------------------------------------------------------------- moves


async def move(notification_id: str, to_status: str) -> NotificationRow:
    """Set the status of a locked notification and bump its version by one."""
    row = await db.fetchrow(
        f"UPDATE notifications SET status = $2, version = version + 1, updated_at = clock_timestamp()"
        f" WHERE id = $1 RETURNING {_COLUMNS}",
        notification_id,
        to_status,
    )
    assert row is not None
    return _notification(row)


async def lock_unread(
    recipient_id: str, *, up_to_time: datetime | None, up_to_id: str | None, inclusive: bool, limit: int
) -> list[NotificationRow]:
    """The recipient's unread notifications up to a time or an id, oldest first, locked."""
    rows = await db.fetch(
        f"""
        SELECT {_COLUMNS} FROM notifications
        WHERE recipient_id = $1 AND status = 'unread'
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
    return [_notification(r) for r in rows]


async def move_many(notification_ids: list[str], to_status: str) -> list[NotificationRow]:
    """`move` for many locked notifications at once."""
    rows = await db.fetch(
        f"UPDATE notifications SET status = $2, version = version + 1, updated_at = clock_timestamp()"
        f" WHERE id = ANY($1::text[]) RETURNING {_COLUMNS}",
        notification_ids,
        to_status,
    )
    return sorted((_notification(r) for r in rows), key=lambda r: r.id)


async def insert_operation(
    *, workspace_id: str, actor_id: str, command: str, via: str, app_id: str | None, notification_ids: list[str]
) -> NotificationOperationRow:
    """Record a command as an operation (`op_`)."""
    row = await db.fetchrow(
        "INSERT INTO notification_operations (id, workspace_id, actor_id, command, via, app_id, notification_ids)"
        " VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *",
        new_id("op"),
        workspace_id,
        actor_id,
        command,
        via,
        app_id,
        notification_ids,
    )
    assert row is not None
    return _operation(row, [])  # its moves are audited after it


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One move to record."""

    notification_id: str
    from_status: str
    to_status: str
    version_after: int


async def audit_entry(actor_id: str, audit_id: str) -> NotificationAuditRow | None:
    """One recorded move by `actor_id`: its notification, operation, new status and version."""
    row = await db.fetchrow("SELECT * FROM notification_audit WHERE id = $1 AND actor_id = $2", audit_id, actor_id)
    return _audit(row) if row else None


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
            from_status, to_status, version_after, reason)
        SELECT a.id, a.notification_id, $3, $4, $5, $6, $7, a.from_status, a.to_status, a.version_after, $8
        FROM unnest($1::text[], $2::text[], $9::text[], $10::text[], $11::int[])
            AS a(id, notification_id, from_status, to_status, version_after)
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
    return _operation(row, row["audit_ids"]) if row else None
