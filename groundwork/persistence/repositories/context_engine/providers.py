"""Context providers: registered per workspace by name, with their class, capabilities and authority."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from asyncpg import Record

from groundwork.domain.ids import new_id
from groundwork.persistence import db


@dataclass(frozen=True, slots=True)
class ProviderRow:
    """A registered provider: its class, what it can contribute, its authority, and whether it is built in."""

    id: str
    workspace_id: str
    name: str
    classification: str
    capabilities: list[str]
    authority: str
    builtin: bool
    registered_by: str | None
    created_at: datetime
    updated_at: datetime


def _provider(row: Record) -> ProviderRow:
    return ProviderRow(
        id=row["id"],
        workspace_id=row["workspace_id"],
        name=row["name"],
        classification=row["classification"],
        capabilities=row["capabilities"],
        authority=row["authority"],
        builtin=row["builtin"],
        registered_by=row["registered_by"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


async def upsert_provider(
    *,
    workspace_id: str,
    name: str,
    classification: str,
    capabilities: list[str],
    authority: str,
    builtin: bool,
    registered_by: str | None,
) -> tuple[ProviderRow, bool]:
    """Register a provider by name (updating capabilities and authority if it exists); (row, created now)."""
    row = await db.fetchrow(
        """
        INSERT INTO context_providers (id, workspace_id, name, classification, capabilities, authority, builtin,
                                       registered_by)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
        ON CONFLICT (workspace_id, name) DO UPDATE
            SET capabilities = EXCLUDED.capabilities, authority = EXCLUDED.authority,
                updated_at = CASE WHEN context_providers.capabilities = EXCLUDED.capabilities
                                   AND context_providers.authority = EXCLUDED.authority
                                  THEN context_providers.updated_at ELSE clock_timestamp() END
        RETURNING *, (xmax = 0) AS created
        """,
        new_id("prov"),
        workspace_id,
        name,
        classification,
        capabilities,
        authority,
        builtin,
        registered_by,
    )
    assert row is not None
    return _provider(row), bool(row["created"])


async def get_provider(provider_id: str) -> ProviderRow | None:
    """A provider by id."""
    row = await db.fetchrow("SELECT * FROM context_providers WHERE id = $1", provider_id)
    return _provider(row) if row else None


async def get_provider_by_name(workspace_id: str, name: str) -> ProviderRow | None:
    """A provider of the workspace by name."""
    row = await db.fetchrow("SELECT * FROM context_providers WHERE workspace_id = $1 AND name = $2", workspace_id, name)
    return _provider(row) if row else None


async def providers_of_workspace(workspace_id: str) -> list[ProviderRow]:
    """Every provider of a workspace, by name."""
    rows = await db.fetch("SELECT * FROM context_providers WHERE workspace_id = $1 ORDER BY name", workspace_id)
    return [_provider(r) for r in rows]
