"""Counts behind the Agent API's read models: work items, completions, scope changes, context packages."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from asyncpg import Record

from groundwork.domain.work_items import STATUSES
from groundwork.persistence import db

_STATUS_COUNTS = ", ".join(f"count(*) FILTER (WHERE w.status = '{s}') AS {s}" for s in STATUSES)


@dataclass(frozen=True, slots=True)
class WorkItemCountsRow:
    """A project's work items: in all, by status, and added in the recent and the previous window."""

    project_id: str
    total: int
    by_status: dict[str, int]
    added_recent: int
    added_previous: int


@dataclass(frozen=True, slots=True)
class ChangeCountsRow:
    """A project's work items moved to done, and its scope changes, in the recent and the previous window."""

    project_id: str
    done_recent: int
    done_previous: int
    scope_recent: int
    scope_previous: int


@dataclass(frozen=True, slots=True)
class PackageCountsRow:
    """A project's packages of one type: current (fresh enough), stale, and created in each window."""

    project_id: str
    contribution_type: str
    current: int
    stale: int
    new_recent: int
    new_previous: int


@dataclass(frozen=True, slots=True)
class SprintCountsRow:
    """A sprint's work items: in all, and by status."""

    sprint: str
    total: int
    by_status: dict[str, int]


def _by_status(row: Record) -> dict[str, int]:
    return {s: row[s] for s in STATUSES}


async def work_item_counts(
    project_ids: list[str], recent: datetime, previous: datetime
) -> dict[str, WorkItemCountsRow]:
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
    return {
        r["project_id"]: WorkItemCountsRow(
            project_id=r["project_id"],
            total=r["total"],
            by_status=_by_status(r),
            added_recent=r["added_recent"],
            added_previous=r["added_previous"],
        )
        for r in rows
    }


async def change_counts(
    project_ids: list[str], recent: datetime, previous: datetime, scope_fields: tuple[str, ...]
) -> dict[str, ChangeCountsRow]:
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
    return {
        r["project_id"]: ChangeCountsRow(
            project_id=r["project_id"],
            done_recent=r["done_recent"],
            done_previous=r["done_previous"],
            scope_recent=r["scope_recent"],
            scope_previous=r["scope_previous"],
        )
        for r in rows
    }


async def package_counts(
    project_ids: list[str], classes: list[str], stale_before: datetime, recent: datetime, previous: datetime
) -> dict[tuple[str, str], PackageCountsRow]:
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
    return {
        (r["project_id"], r["contribution_type"]): PackageCountsRow(
            project_id=r["project_id"],
            contribution_type=r["contribution_type"],
            current=r["current"],
            stale=r["stale"],
            new_recent=r["new_recent"],
            new_previous=r["new_previous"],
        )
        for r in rows
    }


async def sprint_counts(project_id: str) -> list[SprintCountsRow]:
    """Per sprint of a project: work items by status."""
    rows = await db.fetch(
        f"""
        SELECT w.sprint, count(*) AS total, {_STATUS_COUNTS}
        FROM work_items w WHERE w.project_id = $1 AND w.sprint IS NOT NULL GROUP BY w.sprint ORDER BY w.sprint
        """,
        project_id,
    )
    return [SprintCountsRow(sprint=r["sprint"], total=r["total"], by_status=_by_status(r)) for r in rows]


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
