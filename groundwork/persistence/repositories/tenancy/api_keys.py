"""API keys: stored by SHA-256 hash only, with scopes, revocation and last use."""

from __future__ import annotations

from typing import Any

from groundwork.domain.ids import new_id
from groundwork.persistence import db


async def create_api_key(
    workspace_id: str, principal_id: str, key_hash: str, key_prefix: str, scopes: list[str], app_id: str | None = None
) -> dict[str, Any]:
    """Insert a key record (never the key itself), bound to a connected app when `app_id` is given."""
    row = await db.fetchrow(
        "INSERT INTO api_keys (id, workspace_id, principal_id, key_hash, key_prefix, scopes, app_id)"
        " VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *",
        new_id("key"),
        workspace_id,
        principal_id,
        key_hash,
        key_prefix,
        scopes,
        app_id,
    )
    assert row is not None
    return dict(row)


async def find_active_by_hash(key_hash: str) -> dict[str, Any] | None:
    """The unrevoked key with this hash, joined with its principal and the connected app it is bound to."""
    row = await db.fetchrow(
        """
        SELECT k.id AS api_key_id, k.scopes, k.workspace_id, k.last_used_at,
               p.id AS principal_id, p.name, p.kind, p.is_admin,
               a.id AS app_id, a.name AS app_name, a.kind AS app_kind, a.status AS app_status,
               a.direction AS app_direction, a.field_authority AS app_field_authority, a.provenance AS app_provenance
        FROM api_keys k JOIN principals p ON p.id = k.principal_id
        LEFT JOIN connected_apps a ON a.id = k.app_id
        WHERE k.key_hash = $1 AND k.revoked_at IS NULL
        """,
        key_hash,
    )
    return dict(row) if row else None


async def touch_last_used(api_key_id: str) -> None:
    """Record that the key was used now (callers throttle how often)."""
    await db.execute("UPDATE api_keys SET last_used_at = now() WHERE id = $1", api_key_id)


async def list_api_keys(workspace_slug: str | None = None) -> list[dict[str, Any]]:
    """Every key with its workspace and principal, newest first."""
    rows = await db.fetch(
        """
        SELECT k.id, k.key_prefix, k.scopes, k.created_at, k.revoked_at, k.last_used_at, k.app_id,
               w.slug AS workspace, p.name AS principal
        FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id JOIN principals p ON p.id = k.principal_id
        WHERE $1::text IS NULL OR w.slug = $1
        ORDER BY k.created_at DESC, k.id DESC
        """,
        workspace_slug,
    )
    return [dict(r) for r in rows]


async def revoke_api_key(api_key_id: str) -> bool:
    """Revoke a key; False when no unrevoked key has that id."""
    status = await db.execute("UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL", api_key_id)
    return status.endswith(" 1")
