"""Retention of webhook history: old attempts, finished deliveries, and dispatched events no delivery needs."""

from __future__ import annotations

from groundwork.persistence import db


def _deleted(status: str) -> int:
    return int(status.split()[-1])


async def purge_attempts(older_than_days: float, limit: int) -> int:
    """Delete up to `limit` attempts older than the window, of deliveries no longer pending."""
    status = await db.execute(
        """
        DELETE FROM webhook_delivery_attempts WHERE id IN (
            SELECT a.id FROM webhook_delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
            WHERE a.attempted_at < clock_timestamp() - make_interval(secs => $1 * 86400.0) AND d.status <> 'pending'
            LIMIT $2)
        """,
        older_than_days,
        limit,
    )
    return _deleted(status)


async def purge_deliveries(older_than_days: float, limit: int) -> int:
    """Delete up to `limit` deliveries finished longer ago than the window (their attempts go with them)."""
    status = await db.execute(
        """
        DELETE FROM webhook_deliveries WHERE id IN (
            SELECT id FROM webhook_deliveries
            WHERE status <> 'pending' AND completed_at < clock_timestamp() - make_interval(secs => $1 * 86400.0)
            LIMIT $2)
        """,
        older_than_days,
        limit,
    )
    return _deleted(status)


async def purge_outbox(older_than_days: float, limit: int) -> int:
    """Delete up to `limit` events dispatched longer ago than the window that no delivery refers to any more."""
    status = await db.execute(
        """
        DELETE FROM outbox WHERE id IN (
            SELECT o.id FROM outbox o
            WHERE o.dispatched_at < clock_timestamp() - make_interval(secs => $1 * 86400.0)
              AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = o.event_id)
            LIMIT $2)
        """,
        older_than_days,
        limit,
    )
    return _deleted(status)
