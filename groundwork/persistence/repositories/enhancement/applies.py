"""A run's apply history: each apply with the drafts it applied, the versions around it and each field's values."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from asyncpg import Record

from groundwork.persistence import db


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One field an apply wrote: its value before and after, and the draft that proposed it."""

    field: str
    draft_id: str | None
    before: Any
    after: Any


@dataclass(frozen=True, slots=True)
class ApplyRow:
    """One apply of a run's drafts to its work item: by whom, when, the versions and the values around it."""

    id: str
    run_id: str
    work_item_id: str
    draft_ids: list[str]
    expected_target_version: datetime
    target_version: datetime
    actor_id: str
    applied_at: datetime
    changes: tuple[FieldChange, ...] = ()


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
        changes=tuple(
            FieldChange(c["field"], c.get("draft_id"), c.get("before"), c.get("after"))
            for c in json.loads(row["changes"])
        ),
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
    changes: list[FieldChange],
) -> None:
    """Record an apply in the run's history (in the apply's transaction)."""
    await db.execute(
        "INSERT INTO enhancement_applies (id, run_id, work_item_id, draft_ids, expected_target_version,"
        " target_version, actor_id, changes) VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb)",
        apply_id,
        run_id,
        work_item_id,
        draft_ids,
        expected_target_version,
        target_version,
        actor_id,
        json.dumps([{"field": c.field, "draft_id": c.draft_id, "before": c.before, "after": c.after} for c in changes]),
    )


async def get_apply(apply_id: str) -> ApplyRow | None:
    """An earlier apply, for idempotent retries."""
    row = await db.fetchrow("SELECT * FROM enhancement_applies WHERE id = $1", apply_id)
    return _apply(row) if row else None


async def list_applies(
    run_id: str, *, after: tuple[datetime, str] | None = None, limit: int | None = None
) -> list[ApplyRow]:
    """A run's apply history, oldest first, continuing after (applied_at, id) when given."""
    rows = await db.fetch(
        "SELECT * FROM enhancement_applies WHERE run_id = $1"
        " AND ($2::timestamptz IS NULL OR (applied_at, id) > ($2, $3)) ORDER BY applied_at, id LIMIT $4",
        run_id,
        after[0] if after else None,
        after[1] if after else None,
        limit,
    )
    return [_apply(r) for r in rows]
