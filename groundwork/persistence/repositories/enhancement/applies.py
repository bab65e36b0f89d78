"""A run's apply history: each apply with the drafts it applied and the versions around it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from asyncpg import Record

from groundwork.persistence import db


@dataclass(frozen=True, slots=True)
class ApplyRow:
    """One apply of a run's drafts to its work item: by whom, when, and the versions before and after."""

    id: str
    run_id: str
    work_item_id: str
    draft_ids: list[str]
    expected_target_version: datetime
    target_version: datetime
    actor_id: str
    applied_at: datetime


def _apply(row: Record) -> ApplyRow:
    return ApplyRow(
        id=row["id"],
        run_id=row["run_id"],
        work_item_id=row["work_item_id"],
        draft_ids=row["draft_ids"],
        expected_target_version=row["expected_target_version"],
        target_version=row["target_version"],
        actor_id=row["actor_id"],
        applied_at=row["applied_at"],
    )


async def insert_apply(
    *,
    apply_id: str,
    run_id: str,
    work_item_id: str,
    draft_ids: list[str],
    expected_target_version: datetime,
    target_version: datetime,
    actor_id: str,
) -> None:
    """Record an apply in the run's history."""
    await db.execute(
        "INSERT INTO enhancement_applies (id, run_id, work_item_id, draft_ids, expected_target_version,"
        " target_version, actor_id) VALUES ($1, $2, $3, $4, $5, $6, $7)",
        apply_id,
        run_id,
        work_item_id,
        draft_ids,
        expected_target_version,
        target_version,
        actor_id,
    )


async def get_apply(apply_id: str) -> ApplyRow | None:
    """An earlier apply, for idempotent retries."""
    row = await db.fetchrow("SELECT * FROM enhancement_applies WHERE id = $1", apply_id)
    return _apply(row) if row else None


async def list_applies(run_id: str) -> list[ApplyRow]:
    """A run's apply history, oldest first."""
    rows = await db.fetch("SELECT * FROM enhancement_applies WHERE run_id = $1 ORDER BY applied_at, id", run_id)
    return [_apply(r) for r in rows]
