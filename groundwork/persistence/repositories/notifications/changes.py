"""The live feed's changes: each recipient's notification changes, numbered in commit order, and the leases
that bound open streams per API key."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from groundwork.persistence import db
from groundwork.persistence.repositories.notifications.inbox import NotificationRow


@dataclass(frozen=True, slots=True)
class NewChange:
    """One change to append to its recipient's feed (in the transaction of the change)."""

    recipient_id: str
    notification_id: str
    event_type: str
    changed_fields: tuple[str, ...]
    status: str
    version: int
    snoozed_until: datetime | None
    occurred_at: datetime


@dataclass(frozen=True, slots=True)
class ChangeRow:
    """A change as the feed sends it: its number, what changed, and the notification as the change left it."""

    seq: int
    event_type: str
    changed_fields: list[str]
    notification: NotificationRow


async def append_changes(changes: list[NewChange]) -> None:
    """Number and store changes, each recipient's after its last (its head row stays locked until commit)."""
    if not changes:
        return
    await db.execute(
        """
        WITH batch AS (
            SELECT c.*, row_number() OVER (PARTITION BY c.recipient_id ORDER BY c.position) AS n,
                   count(*) OVER (PARTITION BY c.recipient_id) AS total
            FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::timestamptz[],
                        $8::timestamptz[]) WITH ORDINALITY
                AS c(recipient_id, notification_id, event_type, changed_fields, status, version, snoozed_until,
                     occurred_at, position)),
        heads AS (
            INSERT INTO notification_stream_heads AS h (recipient_id, last_seq)
            SELECT recipient_id, count(*) FROM batch GROUP BY recipient_id ORDER BY recipient_id
            ON CONFLICT (recipient_id) DO UPDATE SET last_seq = h.last_seq + EXCLUDED.last_seq
            RETURNING recipient_id, last_seq)
        INSERT INTO notification_changes (recipient_id, seq, notification_id, event_type, changed_fields, status,
            version, snoozed_until, occurred_at)
        SELECT b.recipient_id, h.last_seq - b.total + b.n, b.notification_id, b.event_type,
               string_to_array(b.changed_fields, ','), b.status, b.version, b.snoozed_until, b.occurred_at
        FROM batch b JOIN heads h USING (recipient_id)
        ORDER BY b.recipient_id, b.n
        """,
        [c.recipient_id for c in changes],
        [c.notification_id for c in changes],
        [c.event_type for c in changes],
        [",".join(c.changed_fields) for c in changes],
        [c.status for c in changes],
        [c.version for c in changes],
        [c.snoozed_until for c in changes],
        [c.occurred_at for c in changes],
    )


async def head(recipient_id: str) -> int:
    """The number of the recipient's latest change (0 before the first)."""
    row = await db.fetchrow("SELECT last_seq FROM notification_stream_heads WHERE recipient_id = $1", recipient_id)
    return int(row["last_seq"]) if row else 0


async def changes_after(recipient_id: str, after: int, limit: int) -> list[ChangeRow]:
    """The recipient's changes numbered after `after`, oldest first, each with its notification as it left it."""
    rows = await db.fetch(
        """
        SELECT c.seq, c.event_type AS change_type, c.changed_fields, c.status, c.version, c.snoozed_until,
               c.occurred_at, n.id, n.workspace_id, n.recipient_id, n.event_id, n.event_type, n.source_kind,
               n.source_external_id, n.resource_type, n.resource_id, n.title, n.body, n.created_at
        FROM notification_changes c JOIN notifications n ON n.id = c.notification_id
        WHERE c.recipient_id = $1 AND c.seq > $2
        ORDER BY c.seq LIMIT $3
        """,
        recipient_id,
        after,
        limit,
    )
    return [
        ChangeRow(
            seq=r["seq"],
            event_type=r["change_type"],
            changed_fields=list(r["changed_fields"]),
            notification=NotificationRow(
                id=r["id"],
                workspace_id=r["workspace_id"],
                recipient_id=r["recipient_id"],
                event_id=r["event_id"],
                event_type=r["event_type"],
                source_kind=r["source_kind"],
                source_external_id=r["source_external_id"],
                resource_type=r["resource_type"],
                resource_id=r["resource_id"],
                title=r["title"],
                body=r["body"],
                status=r["status"],
                version=r["version"],
                created_at=r["created_at"],
                updated_at=r["occurred_at"],
                snoozed_until=r["snoozed_until"],
            ),
        )
        for r in rows
    ]


async def purge_changes(older_than_seconds: float, batch_size: int = 5000) -> int:
    """Delete changes older than `older_than_seconds`, a batch at a time; returns how many went."""
    purged = 0
    while True:
        status = await db.execute(
            """
            DELETE FROM notification_changes WHERE ctid = ANY(ARRAY(
                SELECT ctid FROM notification_changes
                WHERE occurred_at < clock_timestamp() - make_interval(secs => $1) LIMIT $2))
            """,
            older_than_seconds,
            batch_size,
        )
        deleted = int(status.split()[-1])
        purged += deleted
        if deleted < batch_size:
            return purged


# ---------------------------------------------------------------------------------------------- leases


async def take_lease(api_key_id: str, lease_id: str, ttl_seconds: float, limit: int) -> bool:
    """Take one of the key's `limit` stream slots for `ttl_seconds` (expired leases free theirs); False if full.

    Takers of one key are serialised by a transaction-scoped advisory lock, so the bound holds across
    every API process.
    """
    async with db.transaction():
        await db.execute("SELECT pg_advisory_xact_lock(hashtextextended($1, 38))", api_key_id)
        await db.execute(
            "DELETE FROM notification_stream_leases WHERE api_key_id = $1 AND expires_at <= clock_timestamp()",
            api_key_id,
        )
        row = await db.fetchrow(
            "SELECT count(*) AS n FROM notification_stream_leases WHERE api_key_id = $1", api_key_id
        )
        if row is not None and int(row["n"]) >= limit:
            return False
        await db.execute(
            "INSERT INTO notification_stream_leases (id, api_key_id, expires_at)"
            " VALUES ($1, $2, clock_timestamp() + make_interval(secs => $3))",
            lease_id,
            api_key_id,
            ttl_seconds,
        )
    return True


async def renew_lease(lease_id: str, ttl_seconds: float) -> bool:
    """Extend a lease; False if it is gone (it expired and was taken over)."""
    status = await db.execute(
        "UPDATE notification_stream_leases SET expires_at = clock_timestamp() + make_interval(secs => $2)"
        " WHERE id = $1",
        lease_id,
        ttl_seconds,
    )
    return status != "UPDATE 0"


async def drop_lease(lease_id: str) -> None:
    """Give a stream's slot back."""
    await db.execute("DELETE FROM notification_stream_leases WHERE id = $1", lease_id)
