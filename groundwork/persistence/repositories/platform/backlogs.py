"""What operators watch: the outbox backlog, failed webhook deliveries, the index change log's tail."""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg

from groundwork.persistence import db


@dataclass(frozen=True)
class OutboxBacklog:
    """Undispatched outbox events and the age of the oldest, in seconds (0 when none waits)."""

    events: int
    oldest_age_seconds: float


@dataclass(frozen=True)
class LogTail:
    """Change sets of an index change log after a position, and the age of the oldest of them."""

    change_sets: int
    oldest_age_seconds: float


async def outbox_backlog() -> OutboxBacklog:
    """Count undispatched events (through the partial index on them) and age the oldest."""
    row = await db.fetchrow(
        "SELECT count(*) AS events,"
        " coalesce(extract(epoch FROM clock_timestamp() - min(occurred_at)), 0)::float8 AS oldest"
        " FROM outbox WHERE dispatched_at IS NULL"
    )
    assert row is not None
    return OutboxBacklog(int(row["events"]), max(0.0, float(row["oldest"])))


async def failed_webhook_deliveries() -> int:
    """Webhook deliveries stored as failed (until the delivery retention purges them)."""
    row = await db.fetchrow("SELECT count(*) AS failed FROM webhook_deliveries WHERE status = 'failed'")
    assert row is not None
    return int(row["failed"])


async def corpus_index_log_after(seq: int) -> LogTail:
    """The corpus index change sets after `seq` (those a replica at `seq` has not applied)."""
    row = await db.fetchrow(
        "SELECT count(*) AS change_sets,"
        " coalesce(extract(epoch FROM clock_timestamp() - min(created_at)), 0)::float8 AS oldest"
        " FROM corpus_index_log WHERE seq > $1",
        seq,
    )
    assert row is not None
    return LogTail(int(row["change_sets"]), max(0.0, float(row["oldest"])))


# The session lock whose holder is the one process reporting the gauges of shared state ("gw_gauge").
_GAUGE_REPORTER_LOCK = 0x67775F6761756765


async def hold_gauge_reporter_lock(dsn: str) -> asyncpg.Connection | None:
    """A connection of its own holding the gauge reporter's session lock, or None when another process holds it
    (the lock goes with the connection: a process that dies hands it on)."""
    connection = await asyncpg.connect(dsn)
    try:
        if await connection.fetchval("SELECT pg_try_advisory_lock($1)", _GAUGE_REPORTER_LOCK):
            return connection
    except BaseException:
        await connection.close()
        raise
    await connection.close()
    return None
