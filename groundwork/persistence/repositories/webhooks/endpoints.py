"""Webhook endpoints: their settings, their signing secrets (sealed) and the per-workspace limit's lock."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from asyncpg import Record

from groundwork.persistence import db


@dataclass(frozen=True, slots=True)
class EndpointRow:
    """An endpoint's settings and failure history, with its stored (sealed) current and previous secrets."""

    id: str
    workspace_id: str
    url: str
    description: str
    event_types: list[str]
    secret: str
    previous_secret: str | None
    previous_secret_expires_at: datetime | None
    enabled: bool
    disabled_reason: str | None
    disabled_at: datetime | None
    failing_since: datetime | None
    consecutive_failures: int
    created_by: str | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class StoredSecrets:
    """An endpoint's stored (sealed) secrets: current, previous, and older ones still in their overlap."""

    secret: str
    previous_secret: str | None
    older_secrets: list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class EndpointSecretsRow:
    """An endpoint's id with its stored secrets."""

    id: str
    secrets: StoredSecrets


def _endpoint(row: Record) -> EndpointRow:
    return EndpointRow(
        id=row["id"],
        workspace_id=row["workspace_id"],
        url=row["url"],
        description=row["description"],
        event_types=row["event_types"],
        secret=row["secret"],
        previous_secret=row["previous_secret"],
        previous_secret_expires_at=row["previous_secret_expires_at"],
        enabled=row["enabled"],
        disabled_reason=row["disabled_reason"],
        disabled_at=row["disabled_at"],
        failing_since=row["failing_since"],
        consecutive_failures=row["consecutive_failures"],
        created_by=row["created_by"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


async def count_endpoints(workspace_id: str) -> int:
    """How many endpoints a workspace has."""
    row = await db.fetchrow("SELECT count(*) AS n FROM webhook_endpoints WHERE workspace_id = $1", workspace_id)
    return int(row["n"]) if row else 0


async def lock_workspace_endpoints(workspace_id: str) -> None:
    """Serialise endpoint creation in one workspace until the transaction ends (keeps the limit exact)."""
    await db.execute("SELECT pg_advisory_xact_lock(hashtext('webhook_endpoints:' || $1))", workspace_id)


async def insert_endpoint(
    *,
    endpoint_id: str,
    workspace_id: str,
    url: str,
    description: str,
    event_types: list[str],
    sealed_secret: str,
    created_by: str,
) -> EndpointRow:
    """Insert an enabled endpoint owned by `created_by`, with its signing secret already sealed."""
    row = await db.fetchrow(
        "INSERT INTO webhook_endpoints (id, workspace_id, url, description, event_types, secret, created_by)"
        " VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *",
        endpoint_id,
        workspace_id,
        url,
        description,
        event_types,
        sealed_secret,
        created_by,
    )
    assert row is not None
    return _endpoint(row)


async def get_endpoint(
    workspace_id: str, endpoint_id: str, *, owner_id: str | None = None, for_update: bool = False
) -> EndpointRow | None:
    """The endpoint of the workspace with this id (created by `owner_id`, if given); `for_update` locks it."""
    lock = " FOR UPDATE" if for_update else ""
    row = await db.fetchrow(
        "SELECT * FROM webhook_endpoints WHERE id = $1 AND workspace_id = $2"
        f" AND ($3::text IS NULL OR created_by = $3){lock}",
        endpoint_id,
        workspace_id,
        owner_id,
    )
    return _endpoint(row) if row else None


async def list_endpoints(
    workspace_id: str, *, owner_id: str | None, after_id: str | None, limit: int
) -> list[EndpointRow]:
    """Endpoints of a workspace (created by `owner_id`, if given), newest first, after `after_id`."""
    rows = await db.fetch(
        "SELECT * FROM webhook_endpoints WHERE workspace_id = $1 AND ($2::text IS NULL OR created_by = $2)"
        " AND ($3::text IS NULL OR id < $3) ORDER BY id DESC LIMIT $4",
        workspace_id,
        owner_id,
        after_id,
        limit,
    )
    return [_endpoint(r) for r in rows]


async def update_endpoint(
    endpoint_id: str, *, url: str, description: str, event_types: list[str], enabled: bool
) -> EndpointRow:
    """Write an endpoint's settings; disabling records `manual`, enabling clears the failure history."""
    # Every right-hand side reads the row as it was, so `enabled` there is the old value.
    row = await db.fetchrow(
        """
        UPDATE webhook_endpoints SET url = $2, description = $3, event_types = $4, enabled = $5,
            disabled_reason = CASE WHEN $5 THEN NULL WHEN enabled THEN 'manual' ELSE disabled_reason END,
            disabled_at = CASE WHEN $5 THEN NULL WHEN enabled THEN clock_timestamp() ELSE disabled_at END,
            failing_since = CASE WHEN $5 AND NOT enabled THEN NULL ELSE failing_since END,
            consecutive_failures = CASE WHEN $5 AND NOT enabled THEN 0 ELSE consecutive_failures END,
            updated_at = clock_timestamp()
        WHERE id = $1 RETURNING *
        """,
        endpoint_id,
        url,
        description,
        event_types,
        enabled,
    )
    assert row is not None
    return _endpoint(row)


async def delete_endpoint(workspace_id: str, endpoint_id: str, *, owner_id: str | None = None) -> bool:
    """Delete an endpoint (created by `owner_id`, if given) with its deliveries; False if there was none."""
    status = await db.execute(
        "DELETE FROM webhook_endpoints WHERE id = $1 AND workspace_id = $2 AND ($3::text IS NULL OR created_by = $3)",
        endpoint_id,
        workspace_id,
        owner_id,
    )
    return status.endswith(" 1")


# ---------------------------------------------------------------------------------------------- secrets


async def rotate_secret(endpoint_id: str, new_secret: str, overlap_seconds: float) -> EndpointRow:
    """Make `new_secret` (sealed) current; the current one keeps signing for `overlap_seconds`."""
    row = await db.fetchrow(
        """
        UPDATE webhook_endpoints SET
            older_secrets = coalesce((
                SELECT jsonb_agg(kept) FROM (
                    SELECT value AS kept FROM jsonb_array_elements(older_secrets)
                    WHERE (value->>'expires_at')::timestamptz > clock_timestamp()
                    UNION ALL
                    SELECT jsonb_build_object('secret', previous_secret, 'expires_at', previous_secret_expires_at)
                    WHERE previous_secret IS NOT NULL AND previous_secret_expires_at > clock_timestamp()
                ) still_signing), '[]'::jsonb),
            previous_secret = secret, secret = $2,
            previous_secret_expires_at = clock_timestamp() + make_interval(secs => $3),
            updated_at = clock_timestamp()
        WHERE id = $1 RETURNING *
        """,
        endpoint_id,
        new_secret,
        overlap_seconds,
    )
    assert row is not None
    return _endpoint(row)


async def endpoint_secrets_page(after_id: str, limit: int, *, legacy_only: bool) -> list[EndpointSecretsRow]:
    """Endpoints (id order, after `after_id`) with their stored secrets; `legacy_only`: those holding a `whsec_`."""
    rows = await db.fetch(
        """
        SELECT id, secret, previous_secret, older_secrets FROM webhook_endpoints
        WHERE id > $1 AND (NOT $3 OR secret LIKE 'whsec\\_%' OR previous_secret LIKE 'whsec\\_%'
                           OR older_secrets::text LIKE '%whsec\\_%')
        ORDER BY id LIMIT $2
        """,
        after_id,
        limit,
        legacy_only,
    )
    return [
        EndpointSecretsRow(
            id=r["id"],
            secrets=StoredSecrets(
                secret=r["secret"], previous_secret=r["previous_secret"], older_secrets=json.loads(r["older_secrets"])
            ),
        )
        for r in rows
    ]


async def replace_secrets(endpoint_id: str, old: StoredSecrets, new: StoredSecrets) -> bool:
    """Swap an endpoint's stored secrets if they are still `old` (a rotation in between wins)."""
    status = await db.execute(
        """
        UPDATE webhook_endpoints SET secret = $5, previous_secret = $6, older_secrets = $7::jsonb
        WHERE id = $1 AND secret = $2 AND previous_secret IS NOT DISTINCT FROM $3 AND older_secrets = $4::jsonb
        """,
        endpoint_id,
        old.secret,
        old.previous_secret,
        json.dumps(old.older_secrets),
        new.secret,
        new.previous_secret,
        json.dumps(new.older_secrets),
    )
    return status.endswith(" 1")
