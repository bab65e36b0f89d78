"""Tracker imports that run as workflows: the file, its maps, the status, the progress and the report so far."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from asyncpg import Record

from groundwork.domain.ids import new_id
from groundwork.persistence import db


@dataclass(frozen=True, slots=True)
class ImportRow:
    """One import: what it imports where, as whom, and how far it is."""

    id: str
    workspace_id: str
    project_id: str
    actor_id: str
    format: str
    content: str
    status_map: dict[str, str]
    people_map: dict[str, str]
    status: str
    total: int
    processed: int
    report: dict[str, Any]
    created_at: datetime
    updated_at: datetime


def _row(r: Record) -> ImportRow:
    return ImportRow(
        id=r["id"],
        workspace_id=r["workspace_id"],
        project_id=r["project_id"],
        actor_id=r["actor_id"],
        format=r["format"],
        content=r["content"],
        status_map=json.loads(r["status_map"]),
        people_map=json.loads(r["people_map"]),
        status=r["status"],
        total=r["total"],
        processed=r["processed"],
        report=json.loads(r["report"]),
        created_at=r["created_at"],
        updated_at=r["updated_at"],
    )


async def insert_import(
    *,
    workspace_id: str,
    project_id: str,
    actor_id: str,
    kind: str,
    content: str,
    status_map: dict[str, str],
    people_map: dict[str, str],
    total: int,
    report: dict[str, Any],
) -> ImportRow:
    """Record a queued import."""
    row = await db.fetchrow(
        """
        INSERT INTO work_item_imports
            (id, workspace_id, project_id, actor_id, format, content, status_map, people_map, total, report)
        VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb, $9, $10::jsonb) RETURNING *
        """,
        new_id("imp"),
        workspace_id,
        project_id,
        actor_id,
        kind,
        content,
        json.dumps(status_map),
        json.dumps(people_map),
        total,
        json.dumps(report),
    )
    assert row is not None
    return _row(row)


async def get_import(import_id: str, *, for_update: bool = False) -> ImportRow | None:
    """One import by id; `for_update` locks it until commit."""
    lock = " FOR UPDATE" if for_update else ""
    row = await db.fetchrow(f"SELECT * FROM work_item_imports WHERE id = $1{lock}", import_id)
    return _row(row) if row else None


async def record_progress(import_id: str, status: str, processed: int, report: dict[str, Any]) -> None:
    """Write an import's status, progress and report so far."""
    await db.execute(
        "UPDATE work_item_imports SET status = $2, processed = $3, report = $4::jsonb, updated_at = clock_timestamp()"
        " WHERE id = $1",
        import_id,
        status,
        processed,
        json.dumps(report),
    )
