"""Connected apps: their declarations and lifecycle (registered, active, inactive)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from asyncpg import Record

from groundwork.domain.ids import new_id
from groundwork.persistence import db


@dataclass(frozen=True, slots=True)
class ConnectedAppRow:
    """An app's declaration and lifecycle, with how many unrevoked keys are bound to it."""

    id: str
    workspace_id: str
    name: str
    kind: str
    direction: str
    field_authority: list[str]
    provenance: str
    conflict: str
    status: str
    registered_by: str | None
    activated_by: str | None
    activated_at: datetime | None
    created_at: datetime
    updated_at: datetime
    key_count: int
    workspace: str | None  # the workspace's slug, where a listing across workspaces reads it


def _app(row: Record, *, key_count: int, workspace: str | None = None) -> ConnectedAppRow:
    return ConnectedAppRow(
        id=row["id"],
        workspace_id=row["workspace_id"],
        name=row["name"],
        kind=row["kind"],
        direction=row["direction"],
        field_authority=row["field_authority"],
        provenance=row["provenance"],
        conflict=row["conflict"],
        status=row["status"],
        registered_by=row["registered_by"],
        activated_by=row["activated_by"],
        activated_at=row["activated_at"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        key_count=key_count,
        workspace=workspace,
    )


async def insert_app(
    *,
    workspace_id: str,
    name: str,
    kind: str,
    direction: str,
    field_authority: list[str],
    provenance: str,
    conflict: str,
    registered_by: str | None,
) -> ConnectedAppRow | None:
    """Register an app (status `registered`); None if the workspace already has an app of that name."""
    row = await db.fetchrow(
        """
        INSERT INTO connected_apps (id, workspace_id, name, kind, direction, field_authority, provenance, conflict,
            registered_by)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
        ON CONFLICT (workspace_id, name) DO NOTHING RETURNING *
        """,
        new_id("app"),
        workspace_id,
        name,
        kind,
        direction,
        field_authority,
        provenance,
        conflict,
        registered_by,
    )
    return _app(row, key_count=0) if row else None  # no key is bound to an app yet


async def get_app(app_id: str, workspace_id: str | None = None) -> ConnectedAppRow | None:
    """An app by id (within a workspace when given), with how many unrevoked keys are bound to it."""
    row = await db.fetchrow(
        """
        SELECT a.*, (SELECT count(*) FROM api_keys k WHERE k.app_id = a.id AND k.revoked_at IS NULL) AS key_count
        FROM connected_apps a WHERE a.id = $1 AND ($2::text IS NULL OR a.workspace_id = $2)
        """,
        app_id,
        workspace_id,
    )
    return _app(row, key_count=row["key_count"]) if row else None


async def list_apps(
    workspace_id: str | None, *, after_id: str | None = None, limit: int = 1000
) -> list[ConnectedAppRow]:
    """Apps of a workspace (or of every workspace), newest first, with their workspace slug and key count."""
    rows = await db.fetch(
        """
        SELECT a.*, w.slug AS workspace,
               (SELECT count(*) FROM api_keys k WHERE k.app_id = a.id AND k.revoked_at IS NULL) AS key_count
        FROM connected_apps a JOIN workspaces w ON w.id = a.workspace_id
        WHERE ($1::text IS NULL OR a.workspace_id = $1) AND ($2::text IS NULL OR a.id < $2)
        ORDER BY a.id DESC LIMIT $3
        """,
        workspace_id,
        after_id,
        limit,
    )
    return [_app(r, key_count=r["key_count"], workspace=r["workspace"]) for r in rows]


async def set_status(app_id: str, status: str, actor_id: str | None) -> bool:
    """Activate or deactivate an app; False when there is no app with that id."""
    updated = await db.execute(
        """
        UPDATE connected_apps SET status = $2, updated_at = clock_timestamp(),
            activated_by = CASE WHEN $2 = 'active' THEN $3 ELSE activated_by END,
            activated_at = CASE WHEN $2 = 'active' THEN clock_timestamp() ELSE activated_at END
        WHERE id = $1
        """,
        app_id,
        status,
        actor_id,
    )
    return updated.endswith(" 1")
