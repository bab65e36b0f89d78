"""The actions requested of enhancement runs: one row per request, pending until completed or failed."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec
from asyncpg import Record

from groundwork.persistence import db


class RunActionRow(msgspec.Struct, frozen=True, gc=False):
    """A requested action of a run (one per request id) and where it stands."""

    id: int
    run_id: str
    request_id: str
    action: str
    instructions: str
    state: str
    error_code: str | None
    created_at: datetime
    completed_at: datetime | None


def run_action_row(row: Record) -> RunActionRow:
    """An action from a row with the `enhancement_run_actions` columns."""
    return RunActionRow(
        id=row["id"],
        run_id=row["run_id"],
        request_id=row["request_id"],
        action=row["action"],
        instructions=row["instructions"],
        state=row["state"],
        error_code=row["error_code"],
        created_at=row["created_at"],
        completed_at=row["completed_at"],
    )


def run_action_from_json(item: dict[str, Any]) -> RunActionRow:
    """An action from its `json_agg` form (a read that fetches a run with its actions in one round trip)."""
    completed_at = item["completed_at"]
    return RunActionRow(
        id=item["id"],
        run_id=item["run_id"],
        request_id=item["request_id"],
        action=item["action"],
        instructions=item["instructions"],
        state=item["state"],
        error_code=item["error_code"],
        created_at=datetime.fromisoformat(item["created_at"]),
        completed_at=datetime.fromisoformat(completed_at) if completed_at is not None else None,
    )


async def insert_run_action(run_id: str, request_id: str, action: str, instructions: str) -> RunActionRow:
    """Record a requested action once per request id; a retry returns the same row."""
    row = await db.fetchrow(
        "INSERT INTO enhancement_run_actions (run_id, request_id, action, instructions, state)"
        " VALUES ($1, $2, $3, $4, 'pending') ON CONFLICT (run_id, request_id) DO UPDATE SET run_id = EXCLUDED.run_id"
        " RETURNING *",
        run_id,
        request_id,
        action,
        instructions,
    )
    assert row is not None
    return run_action_row(row)


async def lock_run_actions(run_id: str, request_ids: list[str]) -> dict[str, str]:
    """Lock action requests of a run until commit (in id order); their states by request id."""
    rows = await db.fetch(
        "SELECT request_id, state FROM enhancement_run_actions WHERE run_id = $1 AND request_id = ANY($2::text[])"
        " ORDER BY id FOR UPDATE",
        run_id,
        request_ids,
    )
    return {r["request_id"]: r["state"] for r in rows}


async def list_run_actions(run_id: str) -> list[RunActionRow]:
    """Every action request of a run, in order."""
    rows = await db.fetch("SELECT * FROM enhancement_run_actions WHERE run_id = $1 ORDER BY id", run_id)
    return [run_action_row(r) for r in rows]


async def pending_actions(run_id: str) -> list[RunActionRow]:
    """The action requests of a run not yet completed or failed."""
    rows = await db.fetch(
        "SELECT * FROM enhancement_run_actions WHERE run_id = $1 AND state = 'pending' ORDER BY id", run_id
    )
    return [run_action_row(r) for r in rows]


async def fail_run_action(run_action_id: int, error_code: str) -> None:
    """Mark an action request failed."""
    await db.execute(
        "UPDATE enhancement_run_actions SET state = 'failed', error_code = $2, completed_at = clock_timestamp()"
        " WHERE id = $1 AND state = 'pending'",
        run_action_id,
        error_code,
    )
