"""Canonical work items, their version guard and their change history."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from groundwork.domain.ids import new_id
from groundwork.domain.work_items import WorkItem
from groundwork.persistence import db


@dataclass(frozen=True, slots=True)
class WorkItemChangeRow:
    """One change of a work item: who, through which door, what (decoded), and the versions around it."""

    actor_id: str
    source: str
    changes: dict[str, Any]
    version_before: datetime | None
    version_after: datetime
    changed_at: datetime


def work_item_of(row: Any) -> WorkItem:
    """A work item from a row (or mapping) with the `work_items` columns."""
    return WorkItem(
        id=row["id"],
        key=row["key"],
        title=row["title"],
        status=row["status"],
        sprint=row["sprint"],
        project_id=row["project_id"],
        workspace_id=row["workspace_id"],
        version=row["version"],
        watchers=tuple(row["watchers"]),
        fields=json.loads(row["fields"]),
    )


async def insert_work_item(
    *,
    workspace_id: str,
    project_id: str,
    title: str,
    status: str,
    sprint: str | None,
    watchers: list[str],
    fields: dict[str, Any],
    actor_id: str,
    source: str,
) -> WorkItem:
    """Insert a work item with the project's next key and record its creation (call in a transaction)."""
    counter = await db.fetchrow(
        "UPDATE projects SET next_item_number = next_item_number + 1 WHERE id = $1 AND workspace_id = $2"
        " RETURNING key, next_item_number - 1 AS number",
        project_id,
        workspace_id,
    )
    assert counter is not None, "project must exist in the workspace"
    row = await db.fetchrow(
        """
        INSERT INTO work_items (id, workspace_id, project_id, key, title, status, sprint, watchers, fields, version)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, date_trunc('microseconds', clock_timestamp()))
        RETURNING *
        """,
        new_id("wi"),
        workspace_id,
        project_id,
        f"{counter['key']}-{counter['number']}",
        title,
        status,
        sprint,
        watchers,
        json.dumps(fields),
    )
    assert row is not None
    item = work_item_of(row)
    await _record_change(item.id, actor_id, source, {"created": True}, None, item.version)
    return item


async def get_work_item(workspace_id: str, work_item_id: str, *, for_update: bool = False) -> WorkItem | None:
    """The work item of the workspace with this id; `for_update` locks the row until commit."""
    lock = " FOR UPDATE" if for_update else ""
    row = await db.fetchrow(
        f"SELECT * FROM work_items WHERE id = $1 AND workspace_id = $2{lock}", work_item_id, workspace_id
    )
    return work_item_of(row) if row else None


async def list_work_items(
    workspace_id: str,
    project_ids: list[str],
    *,
    status: str | None,
    sprint: str | None,
    after_id: str | None,
    limit: int,
) -> list[WorkItem]:
    """Work items of the given projects, newest first, after the keyset cursor `after_id`."""
    rows = await db.fetch(
        """
        SELECT * FROM work_items
        WHERE workspace_id = $1 AND project_id = ANY($2)
          AND ($3::text IS NULL OR status = $3) AND ($4::text IS NULL OR sprint = $4)
          AND ($5::text IS NULL OR id < $5)
        ORDER BY id DESC LIMIT $6
        """,
        workspace_id,
        project_ids,
        status,
        sprint,
        after_id,
        limit,
    )
    return [work_item_of(r) for r in rows]


async def update_work_item(
    item: WorkItem,
    *,
    title: str,
    status: str,
    sprint: str | None,
    watchers: list[str],
    fields: dict[str, Any],
    changes: dict[str, Any],
    actor_id: str,
    source: str,
) -> WorkItem:
    """Write new values over a row locked by `get_work_item(for_update=True)`, bumping its version."""
    # The version must grow even if two writes land in the same microsecond.
    row = await db.fetchrow(
        """
        UPDATE work_items SET title = $2, status = $3, sprint = $4, watchers = $5, fields = $6::jsonb,
            version = greatest(date_trunc('microseconds', clock_timestamp()), version + interval '1 microsecond')
        WHERE id = $1 RETURNING *
        """,
        item.id,
        title,
        status,
        sprint,
        watchers,
        json.dumps(fields),
    )
    assert row is not None
    updated = work_item_of(row)
    await _record_change(item.id, actor_id, source, changes, item.version, updated.version)
    return updated


async def _record_change(
    work_item_id: str,
    actor_id: str,
    source: str,
    changes: dict[str, Any],
    version_before: datetime | None,
    version_after: datetime,
) -> None:
    await db.execute(
        "INSERT INTO work_item_changes (work_item_id, actor_id, source, changes, version_before, version_after)"
        " VALUES ($1, $2, $3, $4::jsonb, $5, $6)",
        work_item_id,
        actor_id,
        source,
        json.dumps(changes),
        version_before,
        version_after,
    )


async def list_changes(work_item_id: str) -> list[WorkItemChangeRow]:
    """The change history of a work item, oldest first."""
    rows = await db.fetch(
        "SELECT actor_id, source, changes, version_before, version_after, changed_at"
        " FROM work_item_changes WHERE work_item_id = $1 ORDER BY id",
        work_item_id,
    )
    return [
        WorkItemChangeRow(
            actor_id=r["actor_id"],
            source=r["source"],
            changes=json.loads(r["changes"]),
            version_before=r["version_before"],
            version_after=r["version_after"],
            changed_at=r["changed_at"],
        )
        for r in rows
    ]
