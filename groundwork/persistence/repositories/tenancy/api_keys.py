"""API keys: stored by SHA-256 hash only, with scopes, revocation and last use."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import msgspec

from groundwork.domain.ids import new_id
from groundwork.persistence import db


@dataclass(frozen=True, slots=True)
class ApiKeyRow:
    """A key's record (never the key itself)."""

    id: str
    workspace_id: str
    principal_id: str
    key_hash: str
    key_prefix: str
    scopes: list[str]
    created_at: datetime
    revoked_at: datetime | None
    last_used_at: datetime | None
    app_id: str | None


# A Struct rather than a dataclass, as on every hot path: a key is resolved on each request its process
# has not cached, and a frozen dataclass costs several times as much to build.
class ActiveKeyRow(msgspec.Struct, frozen=True, gc=False):
    """An unrevoked key with its principal and the connected app it is bound to (`app_*` None without one)."""

    api_key_id: str
    scopes: list[str]
    workspace_id: str
    last_used_at: datetime | None
    principal_id: str
    name: str
    kind: str
    is_admin: bool
    app_id: str | None
    app_name: str | None
    app_kind: str | None
    app_status: str | None
    app_direction: str | None
    app_field_authority: list[str] | None
    app_provenance: str | None


@dataclass(frozen=True, slots=True)
class ApiKeyListingRow:
    """A key's record as operators list it, with its workspace's slug and its principal's name."""

    id: str
    key_prefix: str
    scopes: list[str]
    created_at: datetime
    revoked_at: datetime | None
    last_used_at: datetime | None
    app_id: str | None
    workspace: str
    principal: str


async def create_api_key(
    workspace_id: str, principal_id: str, key_hash: str, key_prefix: str, scopes: list[str], app_id: str | None = None
) -> ApiKeyRow:
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
    return ApiKeyRow(
        id=row["id"],
        workspace_id=row["workspace_id"],
        principal_id=row["principal_id"],
        key_hash=row["key_hash"],
        key_prefix=row["key_prefix"],
        scopes=row["scopes"],
        created_at=row["created_at"],
        revoked_at=row["revoked_at"],
        last_used_at=row["last_used_at"],
        app_id=row["app_id"],
    )


async def find_active_by_hash(key_hash: str) -> ActiveKeyRow | None:
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
    if row is None:
        return None
    return ActiveKeyRow(
        api_key_id=row["api_key_id"],
        scopes=row["scopes"],
        workspace_id=row["workspace_id"],
        last_used_at=row["last_used_at"],
        principal_id=row["principal_id"],
        name=row["name"],
        kind=row["kind"],
        is_admin=row["is_admin"],
        app_id=row["app_id"],
        app_name=row["app_name"],
        app_kind=row["app_kind"],
        app_status=row["app_status"],
        app_direction=row["app_direction"],
        app_field_authority=row["app_field_authority"],
        app_provenance=row["app_provenance"],
    )


async def touch_last_used(api_key_id: str) -> None:
    """Record that the key was used now (callers throttle how often)."""
    await db.execute("UPDATE api_keys SET last_used_at = now() WHERE id = $1", api_key_id)


async def list_api_keys(workspace_slug: str | None = None) -> list[ApiKeyListingRow]:
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
    return [
        ApiKeyListingRow(
            id=r["id"],
            key_prefix=r["key_prefix"],
            scopes=r["scopes"],
            created_at=r["created_at"],
            revoked_at=r["revoked_at"],
            last_used_at=r["last_used_at"],
            app_id=r["app_id"],
            workspace=r["workspace"],
            principal=r["principal"],
        )
        for r in rows
    ]


async def revoke_api_key(api_key_id: str) -> bool:
    """Revoke a key; False when no unrevoked key has that id."""
    status = await db.execute("UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL", api_key_id)
    return status.endswith(" 1")
