"""Connected apps: their declarations and lifecycle (registered, active, inactive)."""

from __future__ import annotations

from typing import Any

from groundwork.domain.ids import new_id
from groundwork.persistence import db


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
) -> dict[str, Any] | None:
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
    return dict(row) if row else None


async def get_app(app_id: str, workspace_id: str | None = None) -> dict[str, Any] | None:
    """An app by id (within a workspace when given), with how many unrevoked keys are bound to it."""
    row = await db.fetchrow(
        """
        SELECT a.*, (SELECT count(*) FROM api_keys k WHERE k.app_id = a.id AND k.revoked_at IS NULL) AS key_count
        FROM connected_apps a WHERE a.id = $1 AND ($2::text IS NULL OR a.workspace_id = $2)
        """,
        app_id,
        workspace_id,
    )
    return dict(row) if row else None


async def list_apps(
    workspace_id: str | None, *, after_id: str | None = None, limit: int = 1000
) -> list[dict[str, Any]]:
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
    return [dict(r) for r in rows]


async def set_status(app_id: str, status: str, actor_id: str | None) -> dict[str, Any]:
    """Activate or deactivate an app."""
    row = await db.fetchrow(
        """
        UPDATE connected_apps SET status = $2, updated_at = clock_timestamp(),
            activated_by = CASE WHEN $2 = 'active' THEN $3 ELSE activated_by END,
            activated_at = CASE WHEN $2 = 'active' THEN clock_timestamp() ELSE activated_at END
        WHERE id = $1 RETURNING *
        """,
        app_id,
        status,
        actor_id,
    )
    assert row is not None
    return dict(row)
