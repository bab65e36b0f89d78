"""Counts behind the Agent API's read models: work items, completions, scope changes, context packages."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from groundwork.domain.work_items import STATUSES
from groundwork.persistence import db

_STATUS_COUNTS = ", ".join(f"count(*) FILTER (WHERE w.status = '{s}') AS {s}" for s in STATUSES)


async def work_item_counts(project_ids: list[str], recent: datetime, previous: datetime) -> dict[str, dict[str, Any]]:
    """Per project: work items by status, and how many were added in the recent and the previous window."""
    rows = await db.fetch(
        f"""
        SELECT w.project_id, count(*) AS total, {_STATUS_COUNTS},
               count(*) FILTER (WHERE w.created_at > $2) AS added_recent,
               count(*) FILTER (WHERE w.created_at > $3 AND w.created_at <= $2) AS added_previous
        FROM work_items w WHERE w.project_id = ANY($1::text[]) GROUP BY w.project_id
        """,
        project_ids,
        recent,
        previous,
    )
    return {r["project_id"]: dict(r) for r in rows}


async def change_counts(
    project_ids: list[str], recent: datetime, previous: datetime, scope_fields: tuple[str, ...]
) -> dict[str, dict[str, Any]]:
    """Per project: work items moved to done, and scope changes, in the recent and the previous window."""
    rows = await db.fetch(
        """
        SELECT w.project_id,
               count(*) FILTER (WHERE c.changes->'status'->>'to' = 'done' AND c.changed_at > $2) AS done_recent,
               count(*) FILTER (WHERE c.changes->'status'->>'to' = 'done' AND c.changed_at <= $2) AS done_previous,
               count(*) FILTER (WHERE c.changes ?| $4::text[] AND c.changed_at > $2) AS scope_recent,
               count(*) FILTER (WHERE c.changes ?| $4::text[] AND c.changed_at <= $2) AS scope_previous
        FROM work_item_changes c JOIN work_items w ON w.id = c.work_item_id
        WHERE w.project_id = ANY($1::text[]) AND c.changed_at > $3 AND c.version_before IS NOT NULL
        GROUP BY w.project_id
        """,
        project_ids,
        recent,
        previous,
        list(scope_fields),
    )
    return {r["project_id"]: dict(r) for r in rows}


async def package_counts(
    project_ids: list[str], classes: list[str], stale_before: datetime, recent: datetime, previous: datetime
) -> dict[tuple[str, str], dict[str, Any]]:
    """Per project and type: current packages (fresh enough, stale), and those created in each window."""
    rows = await db.fetch(
        """
        SELECT e.project_id, e.contribution_type,
               count(*) FILTER (WHERE e.as_of > $3) AS current,
               count(*) FILTER (WHERE e.as_of <= $3) AS stale,
               count(*) FILTER (WHERE e.created_at > $4) AS new_recent,
               count(*) FILTER (WHERE e.created_at > $5 AND e.created_at <= $4) AS new_previous
        FROM context_entries e
        WHERE e.project_id = ANY($1::text[]) AND e.classification = ANY($2::text[]) AND e.status = 'ready'
        GROUP BY e.project_id, e.contribution_type
        """,
        project_ids,
        classes,
        stale_before,
        recent,
        previous,
    )
    return {(r["project_id"], r["contribution_type"]): dict(r) for r in rows}


async def sprint_counts(project_id: str) -> list[dict[str, Any]]:
    """Per sprint of a project: work items by status."""
    rows = await db.fetch(
        f"""
        SELECT w.sprint, count(*) AS total, {_STATUS_COUNTS}
        FROM work_items w WHERE w.project_id = $1 AND w.sprint IS NOT NULL GROUP BY w.sprint ORDER BY w.sprint
        """,
        project_id,
    )
    return [dict(r) for r in rows]


async def sprint_blockers(project_id: str, sprint: str, classes: list[str], stale_before: datetime) -> int:
    """Current blocker packages whose evidence points at a work item of the sprint."""
    row = await db.fetchrow(
        """
        SELECT count(DISTINCT e.id) AS n FROM context_entries e
        JOIN context_evidence x ON x.entry_id = e.id AND x.reference_kind = 'work_item'
        JOIN work_items w ON w.id = x.reference_id AND w.sprint = $2
        WHERE e.project_id = $1 AND e.status = 'ready' AND e.contribution_type = 'blocker'
          AND e.classification = ANY($3::text[]) AND e.as_of > $4
        """,
        project_id,
        sprint,
        classes,
        stale_before,
    )
    return int(row["n"]) if row else 0


async def projects_with_engagement(project_ids: list[str]) -> list[dict[str, Any]]:
    """Project id, key and engagement, by key."""
    rows = await db.fetch(
        "SELECT id, key, engagement_id FROM projects WHERE id = ANY($1::text[]) ORDER BY key", project_ids
    )
    return [dict(r) for r in rows]
