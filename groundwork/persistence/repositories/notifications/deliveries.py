"""E-mail and chat deliveries of notifications, and e-mail digests: rows their workflows work from."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from asyncpg import Record

from groundwork.persistence import db
from groundwork.persistence.repositories.notifications.preferences import PreferencesRow, preferences_row

# What a starter needs to start a delivery's workflow.
_DELIVERY_START = "id, workflow_id, workspace_id, notification_id, recipient_id, channel"
_DIGEST_START = "id, workflow_id, workspace_id, recipient_id, cadence, window_start, window_end, status"


@dataclass(frozen=True, slots=True)
class NotificationDeliveryStartRow:
    """A delivery as its starter sees it: its own workflow (`workflow_id`), or None when a digest carries it."""

    id: int
    workflow_id: str | None
    workspace_id: str
    notification_id: str
    recipient_id: str
    channel: str


@dataclass(frozen=True, slots=True)
class DigestRow:
    """A recipient's digest of one window, with its workflow and where it stands."""

    id: int
    workflow_id: str
    workspace_id: str
    recipient_id: str
    cadence: str
    window_start: datetime
    window_end: datetime
    status: str


@dataclass(frozen=True, slots=True)
class DeliveryContextRow:
    """A delivery with its notification and the recipient's current preferences (None: never saved)."""

    id: int
    workspace_id: str
    notification_id: str
    recipient_id: str
    channel: str
    status: str
    attempts: int
    digest_id: int | None
    title: str
    body: str
    notification_status: str
    notification_version: int
    event_type: str
    resource_type: str
    resource_id: str
    source_kind: str
    source_external_id: str
    notification_created_at: datetime
    preferences: PreferencesRow | None


@dataclass(frozen=True, slots=True)
class NotificationDeliveryRow:
    """A delivery of a notification on one channel, as stored."""

    id: int
    workspace_id: str
    notification_id: str
    recipient_id: str
    channel: str
    digest_id: int | None
    workflow_id: str | None
    status: str
    attempts: int
    last_error: str | None
    start_requested_at: datetime
    workflow_started_at: datetime | None
    sent_at: datetime | None
    created_at: datetime


def _delivery_start(row: Record) -> NotificationDeliveryStartRow:
    return NotificationDeliveryStartRow(
        id=row["id"],
        workflow_id=row["workflow_id"],
        workspace_id=row["workspace_id"],
        notification_id=row["notification_id"],
        recipient_id=row["recipient_id"],
        channel=row["channel"],
    )


def _digest(row: Record) -> DigestRow:
    return DigestRow(
        id=row["id"],
        workflow_id=row["workflow_id"],
        workspace_id=row["workspace_id"],
        recipient_id=row["recipient_id"],
        cadence=row["cadence"],
        window_start=row["window_start"],
        window_end=row["window_end"],
        status=row["status"],
    )


@dataclass(frozen=True, slots=True)
class NewDelivery:
    """One channel of one notification: its own workflow (`workflow_id`), or part of a digest."""

    workspace_id: str
    notification_id: str
    recipient_id: str
    channel: str
    workflow_id: str | None
    digest_id: int | None


async def insert_deliveries(rows: list[NewDelivery]) -> list[NotificationDeliveryStartRow]:
    """Insert deliveries (one per notification and channel, ever); returns those created now."""
    if not rows:
        return []
    created = await db.fetch(
        f"""
        INSERT INTO notification_deliveries (workspace_id, notification_id, recipient_id, channel, workflow_id,
            digest_id)
        SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[])
        ON CONFLICT (notification_id, channel) DO NOTHING
        RETURNING {_DELIVERY_START}
        """,
        [r.workspace_id for r in rows],
        [r.notification_id for r in rows],
        [r.recipient_id for r in rows],
        [r.channel for r in rows],
        [r.workflow_id for r in rows],
        [r.digest_id for r in rows],
    )
    return [_delivery_start(r) for r in created]


async def open_digest(
    *,
    workspace_id: str,
    recipient_id: str,
    cadence: str,
    window_start: datetime,
    window_end: datetime,
    workflow_id: str,
) -> tuple[DigestRow, bool]:
    """The digest of a recipient's window, created if new and locked until commit, and whether it was created."""
    row = await db.fetchrow(
        f"""
        INSERT INTO notification_digests (workspace_id, recipient_id, cadence, window_start, window_end, workflow_id)
        VALUES ($1, $2, $3, $4, $5, $6)
        ON CONFLICT (recipient_id, cadence, window_start) DO UPDATE SET cadence = EXCLUDED.cadence
        RETURNING {_DIGEST_START}, (xmax = 0) AS created
        """,
        workspace_id,
        recipient_id,
        cadence,
        window_start,
        window_end,
        workflow_id,
    )
    assert row is not None
    return _digest(row), bool(row["created"])


async def _claim_unstarted(table: str, columns: str, condition: str, grace_seconds: float, limit: int) -> list[Record]:
    """Rows whose workflow is not known to be started `grace_seconds` after it was asked for.

    The claim pushes `start_requested_at` forward and commits at once, so no lock is held while the
    workflows start and another relay does not take the same rows.
    """
    return await db.fetch(
        f"""
        UPDATE {table} SET start_requested_at = clock_timestamp()
        WHERE id IN (
            SELECT id FROM {table}
            WHERE workflow_started_at IS NULL AND {condition}
              AND start_requested_at <= clock_timestamp() - make_interval(secs => $1)
            ORDER BY start_requested_at LIMIT $2 FOR UPDATE SKIP LOCKED)
        RETURNING {columns}
        """,
        grace_seconds,
        limit,
    )


async def claim_unstarted_deliveries(grace_seconds: float, limit: int) -> list[NotificationDeliveryStartRow]:
    """Deliveries with a workflow of their own that is not known to be started (see `_claim_unstarted`)."""
    rows = await _claim_unstarted(
        "notification_deliveries", _DELIVERY_START, "workflow_id IS NOT NULL", grace_seconds, limit
    )
    return [_delivery_start(r) for r in rows]


async def claim_unstarted_digests(grace_seconds: float, limit: int) -> list[DigestRow]:
    """Digests whose workflow is not known to be started (see `_claim_unstarted`)."""
    return [
        _digest(r) for r in await _claim_unstarted("notification_digests", _DIGEST_START, "true", grace_seconds, limit)
    ]


async def mark_started(table: str, ids: list[int]) -> None:
    """Record that the workflows of these deliveries (or digests) started."""
    if not ids:
        return
    if table not in ("notification_deliveries", "notification_digests"):
        raise ValueError(table)
    await db.execute(
        f"UPDATE {table} SET workflow_started_at = clock_timestamp() WHERE id = ANY($1::bigint[])"
        " AND workflow_started_at IS NULL",
        ids,
    )


_CONTEXT = """
    SELECT d.id, d.workspace_id, d.notification_id, d.recipient_id, d.channel, d.status, d.attempts, d.digest_id,
           n.title, n.body, n.status AS notification_status, n.version AS notification_version, n.event_type,
           n.resource_type, n.resource_id, n.source_kind, n.source_external_id, n.created_at AS notification_created_at,
           p.email_enabled, p.email_address, p.email_digest, p.chat_enabled, p.chat_webhook_url, p.events
    FROM notification_deliveries d
    JOIN notifications n ON n.id = d.notification_id
    LEFT JOIN notification_preferences p ON p.principal_id = d.recipient_id
"""


def _context(row: Record) -> DeliveryContextRow:
    return DeliveryContextRow(
        id=row["id"],
        workspace_id=row["workspace_id"],
        notification_id=row["notification_id"],
        recipient_id=row["recipient_id"],
        channel=row["channel"],
        status=row["status"],
        attempts=row["attempts"],
        digest_id=row["digest_id"],
        title=row["title"],
        body=row["body"],
        notification_status=row["notification_status"],
        notification_version=row["notification_version"],
        event_type=row["event_type"],
        resource_type=row["resource_type"],
        resource_id=row["resource_id"],
        source_kind=row["source_kind"],
        source_external_id=row["source_external_id"],
        notification_created_at=row["notification_created_at"],
        # The preference columns are all NULL when the recipient never saved any (a left join).
        preferences=preferences_row(row, row["recipient_id"]) if row["email_enabled"] is not None else None,
    )


async def delivery_context(delivery_id: int) -> DeliveryContextRow | None:
    """A delivery with its notification and the recipient's current preferences."""
    row = await db.fetchrow(_CONTEXT + " WHERE d.id = $1", delivery_id)
    return _context(row) if row else None


async def finish_delivery(delivery_id: int, status: str, error: str | None = None) -> None:
    """Settle a pending delivery as `sent`, `failed` or `skipped` (a settled one is left as it is)."""
    await db.execute(
        "UPDATE notification_deliveries SET status = $2, last_error = coalesce($3, last_error),"
        " sent_at = CASE WHEN $2 = 'sent' THEN clock_timestamp() ELSE sent_at END"
        " WHERE id = $1 AND status = 'pending'",
        delivery_id,
        status,
        error,
    )


async def record_attempt(delivery_id: int, error: str | None) -> None:
    """Count one send attempt, with its error if it failed."""
    await db.execute(
        "UPDATE notification_deliveries SET attempts = attempts + 1, last_error = coalesce($2, last_error)"
        " WHERE id = $1",
        delivery_id,
        error,
    )


async def close_digest(digest_id: int) -> tuple[DigestRow | None, list[DeliveryContextRow]]:
    """Close a digest to new notifications and return it with its pending deliveries (oldest first).

    The row lock orders this after any relay still attaching a delivery to the window, so nothing
    attached before the close is missed; the relay attaches later ones to the next window.
    """
    async with db.transaction():
        digest = await db.fetchrow(
            "UPDATE notification_digests SET status = CASE WHEN status = 'open' THEN 'closed' ELSE status END"
            " WHERE id = $1 RETURNING *",
            digest_id,
        )
        if digest is None:
            return None, []
        rows = await db.fetch(_CONTEXT + " WHERE d.digest_id = $1 AND d.status = 'pending' ORDER BY d.id", digest_id)
        return _digest(digest), [_context(r) for r in rows]


async def finish_digest(
    digest_id: int, status: str, delivered: list[int], skipped: list[int] | None = None, error: str | None = None
) -> None:
    """Settle a digest, the deliveries it carried (`sent`, or `failed` with it) and those it left out (`skipped`)."""
    async with db.transaction():
        await db.execute(
            "UPDATE notification_digests SET status = $2, last_error = coalesce($3, last_error),"
            " sent_at = CASE WHEN $2 = 'sent' THEN clock_timestamp() ELSE sent_at END WHERE id = $1",
            digest_id,
            status,
            error,
        )
        for ids, outcome in ((delivered, "failed" if status == "failed" else "sent"), (skipped or [], "skipped")):
            if ids:
                await db.execute(
                    "UPDATE notification_deliveries SET status = $2,"
                    " sent_at = CASE WHEN $2 = 'sent' THEN clock_timestamp() ELSE sent_at END"
                    " WHERE id = ANY($1::bigint[]) AND status = 'pending'",
                    ids,
                    outcome,
                )


async def record_digest_attempt(digest_id: int, error: str | None) -> None:
    """Count one digest send attempt, with its error if it failed."""
    await db.execute(
        "UPDATE notification_digests SET attempts = attempts + 1, last_error = coalesce($2, last_error) WHERE id = $1",
        digest_id,
        error,
    )


async def deliveries_of(notification_id: str) -> list[NotificationDeliveryRow]:
    """Every delivery of a notification (tests and operators)."""
    rows = await db.fetch(
        "SELECT * FROM notification_deliveries WHERE notification_id = $1 ORDER BY id", notification_id
    )
    return [
        NotificationDeliveryRow(
            id=r["id"],
            workspace_id=r["workspace_id"],
            notification_id=r["notification_id"],
            recipient_id=r["recipient_id"],
            channel=r["channel"],
            digest_id=r["digest_id"],
            workflow_id=r["workflow_id"],
            status=r["status"],
            attempts=r["attempts"],
            last_error=r["last_error"],
            start_requested_at=r["start_requested_at"],
            workflow_started_at=r["workflow_started_at"],
            sent_at=r["sent_at"],
            created_at=r["created_at"],
        )
        for r in rows
    ]
