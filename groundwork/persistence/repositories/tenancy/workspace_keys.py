"""A workspace's API keys as its members list them over REST (never the key itself)."""

from __future__ import annotations

from groundwork.persistence import db
from groundwork.persistence.repositories.tenancy.api_keys import ApiKeyRow, key_row


async def keys_of(workspace_id: str, principal_id: str | None, *, after_id: str | None, limit: int) -> list[ApiKeyRow]:
    """Keys of the workspace (of one principal when given), newest first."""
    rows = await db.fetch(
        """
        SELECT * FROM api_keys
        WHERE workspace_id = $1 AND ($2::text IS NULL OR principal_id = $2) AND ($3::text IS NULL OR id < $3)
        ORDER BY id DESC LIMIT $4
        """,
        workspace_id,
        principal_id,
        after_id,
        limit,
    )
    return [key_row(r) for r in rows]


async def key_of(workspace_id: str, api_key_id: str) -> ApiKeyRow | None:
    """One key of the workspace."""
    row = await db.fetchrow("SELECT * FROM api_keys WHERE id = $1 AND workspace_id = $2", api_key_id, workspace_id)
    return key_row(row) if row else None
