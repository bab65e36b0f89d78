"""Snoozes and the start of their timer workflows (`ntsz_<snooze id>`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from asyncpg import Record

from groundwork.persistence import db

_COLUMNS = "id, notification_id, workspace_id, recipient_id, until, workflow_id"


@dataclass(frozen=True, slots=True)
class SnoozeRow:
    """A snooze: whose notification, until when, and the workflow whose timer ends it."""

    id: str
    notification_id: str
    workspace_id: str
    recipient_id: str
    until: datetime
    workflow_id: str


def _snooze(row: Record) -> SnoozeRow:
    return SnoozeRow(
        id=row["id"],
        notification_id=row["notification_id"],
        workspace_id=row["workspace_id"],
        recipient_id=row["recipient_id"],
        until=row["until"],
        workflow_id=row["workflow_id"],
    )


def snooze_workflow_id(snooze_id: str) -> str:
    """The workflow id of a snooze's timer."""
    return f"ntsz_{snooze_id}"


async def insert_snoozes(rows: list[SnoozeRow]) -> None:
    """Record snoozes whose timers are to start (in the snoozes' transaction)."""
    await db.execute(
        f"""
        INSERT INTO notification_snoozes ({_COLUMNS})
        SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::text[])
        """,
        [r.id for r in rows],
        [r.notification_id for r in rows],
        [r.workspace_id for r in rows],
        [r.recipient_id for r in rows],
        [r.until for r in rows],
        [r.workflow_id for r in rows],
    )


async def end_snoozes(snooze_ids: list[str], outcome: str) -> None:
    """Mark snoozes `woken` (their timer brought the notification back) or `ended` (before that)."""
    await db.execute(
        "UPDATE notification_snoozes SET outcome = $2, ended_at = clock_timestamp()"
        " WHERE id = ANY($1::text[]) AND outcome IS NULL",
        snooze_ids,
        outcome,
    )


async def get_snooze(snooze_id: str) -> SnoozeRow | None:
    """One snooze."""
    row = await db.fetchrow(f"SELECT {_COLUMNS} FROM notification_snoozes WHERE id = $1", snooze_id)
    return _snooze(row) if row else None


async def unstarted_snoozes_of(notification_ids: list[str]) -> list[SnoozeRow]:
    """The snoozes of these notifications whose timer is not known to be started (the relay starts them)."""
    rows = await db.fetch(
        f"SELECT {_COLUMNS} FROM notification_snoozes WHERE notification_id = ANY($1::text[])"
        " AND workflow_started_at IS NULL AND outcome IS NULL ORDER BY id",
        notification_ids,
    )
    return [_snooze(r) for r in rows]


async def claim_unstarted_snoozes(grace_seconds: float, limit: int) -> list[SnoozeRow]:
    """Snoozes whose timer is not known to be started `grace_seconds` after it was asked for.

    The claim pushes `start_requested_at` forward and commits at once, so no lock is held while the
    workflows start and another relay does not take the same rows.
    """
    rows = await db.fetch(
        f"""
        UPDATE notification_snoozes SET start_requested_at = clock_timestamp()
        WHERE id IN (
            SELECT id FROM notification_snoozes
            WHERE workflow_started_at IS NULL AND outcome IS NULL
              AND start_requested_at <= clock_timestamp() - make_interval(secs => $1)
            ORDER BY start_requested_at LIMIT $2 FOR UPDATE SKIP LOCKED)
        RETURNING {_COLUMNS}
        """,
        grace_seconds,
        limit,
    )
    return [_snooze(r) for r in rows]


async def mark_snoozes_started(snooze_ids: list[str]) -> None:
    """Record that these snoozes' timers started."""
    if snooze_ids:
        await db.execute(
            "UPDATE notification_snoozes SET workflow_started_at = clock_timestamp()"
            " WHERE id = ANY($1::text[]) AND workflow_started_at IS NULL",
            snooze_ids,
        )


async def overdue_snoozes(grace_seconds: float, limit: int) -> list[str]:
    """Snoozes still running `grace_seconds` after their end (their timer never fired), oldest end first."""
    rows = await db.fetch(
        "SELECT id FROM notification_snoozes WHERE outcome IS NULL"
        " AND until < clock_timestamp() - make_interval(secs => $1) ORDER BY until LIMIT $2",
        grace_seconds,
        limit,
    )
    return [r["id"] for r in rows]
