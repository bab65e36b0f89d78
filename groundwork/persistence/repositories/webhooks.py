"""Webhook endpoints, deliveries and attempts, and the relay's claims on the outbox."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from asyncpg import Record

from groundwork.domain.ids import new_id
from groundwork.domain.webhooks import (
    EndpointOwner,
    delivery_status_after,
    delivery_workflow_id,
    disable_reason_after_failure,
    endpoint_may_receive,
    subscribes,
)
from groundwork.persistence import db
from groundwork.persistence.repositories.platform.outbox import ClaimedEventRow

# What the relay and the API need to start a delivery workflow.
_START_COLUMNS = "id, workflow_id, generation, workspace_id, endpoint_id, event_id, event_type"


# ---------------------------------------------------------------------------------------------- endpoints


async def count_endpoints(workspace_id: str) -> int:
    """How many endpoints a workspace has."""
    row = await db.fetchrow("SELECT count(*) AS n FROM webhook_endpoints WHERE workspace_id = $1", workspace_id)
    return int(row["n"]) if row else 0


async def insert_endpoint(
    *,
    endpoint_id: str,
    workspace_id: str,
    url: str,
    description: str,
    event_types: list[str],
    sealed_secret: str,
    created_by: str,
) -> dict[str, Any]:
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
    return dict(row)


async def get_endpoint(
    workspace_id: str, endpoint_id: str, *, owner_id: str | None = None, for_update: bool = False
) -> dict[str, Any] | None:
    """The endpoint of the workspace with this id (created by `owner_id`, if given); `for_update` locks it."""
    lock = " FOR UPDATE" if for_update else ""
    row = await db.fetchrow(
        "SELECT * FROM webhook_endpoints WHERE id = $1 AND workspace_id = $2"
        f" AND ($3::text IS NULL OR created_by = $3){lock}",
        endpoint_id,
        workspace_id,
        owner_id,
    )
    return dict(row) if row else None


async def list_endpoints(
    workspace_id: str, *, owner_id: str | None, after_id: str | None, limit: int
) -> list[dict[str, Any]]:
    """Endpoints of a workspace (created by `owner_id`, if given), newest first, after `after_id`."""
    rows = await db.fetch(
        "SELECT * FROM webhook_endpoints WHERE workspace_id = $1 AND ($2::text IS NULL OR created_by = $2)"
        " AND ($3::text IS NULL OR id < $3) ORDER BY id DESC LIMIT $4",
        workspace_id,
        owner_id,
        after_id,
        limit,
    )
    return [dict(r) for r in rows]


async def update_endpoint(
    endpoint_id: str, *, url: str, description: str, event_types: list[str], enabled: bool
) -> dict[str, Any]:
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
    return dict(row)


async def delete_endpoint(workspace_id: str, endpoint_id: str, *, owner_id: str | None = None) -> bool:
    """Delete an endpoint (created by `owner_id`, if given) with its deliveries; False if there was none."""
    status = await db.execute(
        "DELETE FROM webhook_endpoints WHERE id = $1 AND workspace_id = $2 AND ($3::text IS NULL OR created_by = $3)",
        endpoint_id,
        workspace_id,
        owner_id,
    )
    return status.endswith(" 1")


async def rotate_secret(endpoint_id: str, new_secret: str, overlap_seconds: float) -> dict[str, Any]:
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
    return dict(row)


@dataclass(frozen=True)
class StoredSecrets:
    """An endpoint's stored (sealed) secrets: current, previous, and older ones still in their overlap."""

    secret: str
    previous_secret: str | None
    older_secrets: list[dict[str, Any]]


async def endpoint_secrets_page(after_id: str, limit: int, *, legacy_only: bool) -> list[dict[str, Any]]:
    """Endpoints (id order, after `after_id`) with their stored secrets; `legacy_only`: those holding a `whsec_`."""
    rows = await db.fetch(
        """
        SELECT id, secret, previous_secret, older_secrets FROM webhook_endpoints
        WHERE id > $1 AND (NOT $3 OR secret LIKE 'whsec\_%' OR previous_secret LIKE 'whsec\_%'
                           OR older_secrets::text LIKE '%whsec\_%')
        ORDER BY id LIMIT $2
        """,
        after_id,
        limit,
        legacy_only,
    )
    return [{**dict(r), "older_secrets": json.loads(r["older_secrets"])} for r in rows]


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


# ---------------------------------------------------------------------------------------------- the relay


async def create_deliveries(events: list[ClaimedEventRow]) -> list[dict[str, Any]]:
    """Create the deliveries of claimed outbox events (call inside the claim's transaction).

    An event goes to each enabled endpoint that subscribes to it and whose owner may see what it is
    about now; a disabled endpoint gets nothing (its events are not kept for later). Returns the
    deliveries created now (a delivery that already existed, because an earlier relay got this far and
    crashed before its commit, is not returned).
    """
    endpoints = await db.fetch(
        "SELECT e.id, e.workspace_id, e.event_types, e.created_by, coalesce(p.is_admin, false) AS owner_is_admin"
        " FROM webhook_endpoints e"
        " LEFT JOIN principals p ON p.id = e.created_by AND p.workspace_id = e.workspace_id"
        " WHERE e.enabled AND e.workspace_id = ANY($1::text[])",
        list({e.workspace_id for e in events}),
    )
    subscribed = [
        (event, endpoint)
        for event in events
        for endpoint in endpoints
        if endpoint["workspace_id"] == event.workspace_id and subscribes(endpoint["event_types"], event.type)
    ]
    owners = await _endpoint_owners(subscribed)
    pairs = [
        (event, endpoint)
        for event, endpoint in subscribed
        if endpoint_may_receive(
            owners[endpoint["id"]],
            event_type=event.type,
            project_id=event.project_id,
            private_to=event.private_to,
        )
    ]
    if not pairs:
        return []
    rows = await db.fetch(
        f"""
        INSERT INTO webhook_deliveries
            (id, workflow_id, workspace_id, endpoint_id, event_id, event_type)
        SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[])
        ON CONFLICT (event_id, endpoint_id) DO NOTHING
        RETURNING {_START_COLUMNS}
        """,
        [new_id("whd") for _ in pairs],
        [delivery_workflow_id(ev.event_id, ep["id"]) for ev, ep in pairs],
        [ev.workspace_id for ev, _ in pairs],
        [ep["id"] for _, ep in pairs],
        [ev.event_id for ev, _ in pairs],
        [ev.type for ev, _ in pairs],
    )
    return [dict(r) for r in rows]


async def _endpoint_owners(subscribed: list[tuple[ClaimedEventRow, Record]]) -> dict[str, EndpointOwner]:
    """What each endpoint's owner may see now: admin or not, and its permissions on the events' projects."""
    members = {ep["created_by"] for _, ep in subscribed if ep["created_by"] and not ep["owner_is_admin"]}
    projects = {ev.project_id for ev, _ in subscribed if ev.project_id}
    permissions: dict[str, dict[str, frozenset[str]]] = {}
    if members and projects:
        rows = await db.fetch(
            "SELECT m.principal_id, m.project_id, r.permissions FROM memberships m JOIN roles r ON r.name = m.role"
            " WHERE m.principal_id = ANY($1::text[]) AND m.project_id = ANY($2::text[])",
            list(members),
            list(projects),
        )
        for row in rows:
            permissions.setdefault(row["principal_id"], {})[row["project_id"]] = frozenset(row["permissions"])
    return {
        ep["id"]: EndpointOwner(ep["created_by"], ep["owner_is_admin"], permissions.get(ep["created_by"] or "", {}))
        for _, ep in subscribed
    }


async def claim_unstarted(grace_seconds: float, limit: int) -> list[dict[str, Any]]:
    """Deliveries whose workflow is not known to be started `grace_seconds` after it was asked for.

    The claim pushes `start_requested_at` forward and commits at once, so no lock is held while the
    workflows start and another relay does not take the same rows.
    """
    rows = await db.fetch(
        f"""
        UPDATE webhook_deliveries SET start_requested_at = clock_timestamp()
        WHERE id IN (
            SELECT id FROM webhook_deliveries
            WHERE workflow_started_at IS NULL
              AND start_requested_at <= clock_timestamp() - make_interval(secs => $1)
            ORDER BY start_requested_at LIMIT $2 FOR UPDATE SKIP LOCKED)
        RETURNING {_START_COLUMNS}
        """,
        grace_seconds,
        limit,
    )
    return [dict(r) for r in rows]


async def mark_started(started: list[tuple[str, int, str | None]]) -> None:
    """Record (delivery id, generation, run id) of started workflows; a newer generation is left alone."""
    if not started:
        return
    await db.execute(
        """
        UPDATE webhook_deliveries d SET workflow_started_at = clock_timestamp(),
            workflow_run_id = coalesce(s.run_id, d.workflow_run_id)
        FROM unnest($1::text[], $2::int[], $3::text[]) AS s(id, generation, run_id)
        WHERE d.id = s.id AND d.generation = s.generation
        """,
        [s[0] for s in started],
        [s[1] for s in started],
        [s[2] for s in started],
    )


# ---------------------------------------------------------------------------------------------- API commands


async def insert_test_delivery(
    *, workspace_id: str, endpoint_id: str, actor_id: str, payload: dict[str, Any], occurred_at: datetime
) -> dict[str, Any]:
    """Write a `webhook.test` event (already dispatched: it goes to one endpoint only) and its delivery."""
    event_id = new_id("evt")
    await db.execute(
        "INSERT INTO outbox (event_id, type, workspace_id, resource_type, resource_id, actor_id, payload,"
        " occurred_at, dispatched_at) VALUES ($1, 'webhook.test', $2, 'webhook_endpoint', $3, $4, $5::jsonb,"
        " $6, clock_timestamp())",
        event_id,
        workspace_id,
        endpoint_id,
        actor_id,
        json.dumps(payload),
        occurred_at,
    )
    row = await db.fetchrow(
        f"INSERT INTO webhook_deliveries (id, workflow_id, workspace_id, endpoint_id, event_id, event_type)"
        f" VALUES ($1, $2, $3, $4, $5, 'webhook.test') RETURNING {_START_COLUMNS}",
        new_id("whd"),
        delivery_workflow_id(event_id, endpoint_id),
        workspace_id,
        endpoint_id,
        event_id,
    )
    assert row is not None
    return dict(row)


async def lock_delivery(workspace_id: str, delivery_id: str, *, owner_id: str | None = None) -> dict[str, Any] | None:
    """The delivery (to an endpoint created by `owner_id`, if given) with its endpoint's `enabled`, locked."""
    row = await db.fetchrow(
        "SELECT d.*, e.enabled AS endpoint_enabled FROM webhook_deliveries d"
        " JOIN webhook_endpoints e ON e.id = d.endpoint_id"
        " WHERE d.id = $1 AND d.workspace_id = $2 AND ($3::text IS NULL OR e.created_by = $3) FOR UPDATE OF d",
        delivery_id,
        workspace_id,
        owner_id,
    )
    return dict(row) if row else None


async def reopen_delivery(delivery_id: str, generation: int, workflow_id: str) -> dict[str, Any]:
    """Start generation `generation` of a finished delivery, with its own workflow id: pending, to be started."""
    row = await db.fetchrow(
        f"""
        UPDATE webhook_deliveries SET status = 'pending', failure_reason = NULL, generation = $2,
            workflow_id = $3, workflow_run_id = NULL, next_attempt_at = NULL, completed_at = NULL,
            start_requested_at = clock_timestamp(), workflow_started_at = NULL, updated_at = clock_timestamp()
        WHERE id = $1 RETURNING {_START_COLUMNS}
        """,
        delivery_id,
        generation,
        workflow_id,
    )
    assert row is not None
    return dict(row)


# ---------------------------------------------------------------------------------------------- reads


async def _with_attempts(rows: list[Any]) -> list[dict[str, Any]]:
    deliveries = [dict(r) for r in rows]
    if not deliveries:
        return deliveries
    attempts = await db.fetch(
        "SELECT * FROM webhook_delivery_attempts WHERE delivery_id = ANY($1::text[]) ORDER BY number",
        [d["id"] for d in deliveries],
    )
    by_delivery: dict[str, list[dict[str, Any]]] = {d["id"]: [] for d in deliveries}
    for attempt in attempts:
        by_delivery[attempt["delivery_id"]].append(dict(attempt))
    for delivery in deliveries:
        delivery["attempts"] = by_delivery[delivery["id"]]
    return deliveries


async def get_delivery(workspace_id: str, delivery_id: str, *, owner_id: str | None = None) -> dict[str, Any] | None:
    """A delivery of the workspace (to an endpoint created by `owner_id`, if given) with its attempts."""
    row = await db.fetchrow(
        "SELECT d.* FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id"
        " WHERE d.id = $1 AND d.workspace_id = $2 AND ($3::text IS NULL OR e.created_by = $3)",
        delivery_id,
        workspace_id,
        owner_id,
    )
    found = await _with_attempts([row] if row else [])
    return found[0] if found else None


async def list_deliveries(
    endpoint_id: str, *, status: str | None, event_type: str | None, after_id: str | None, limit: int
) -> list[dict[str, Any]]:
    """Deliveries to an endpoint with their attempts, newest first, after the keyset cursor `after_id`."""
    rows = await db.fetch(
        """
        SELECT * FROM webhook_deliveries
        WHERE endpoint_id = $1 AND ($2::text IS NULL OR status = $2) AND ($3::text IS NULL OR event_type = $3)
          AND ($4::text IS NULL OR id < $4)
        ORDER BY id DESC LIMIT $5
        """,
        endpoint_id,
        status,
        event_type,
        after_id,
        limit,
    )
    return await _with_attempts(rows)


# ---------------------------------------------------------------------------------------------- attempts


async def attempt_context(delivery_id: str) -> dict[str, Any] | None:
    """Everything one attempt needs: the delivery, its endpoint (with secrets) and its event."""
    row = await db.fetchrow(
        """
        SELECT d.id, d.generation, d.status, d.workspace_id, d.endpoint_id,
               e.url, e.enabled, e.secret, e.previous_secret, e.previous_secret_expires_at,
               (SELECT coalesce(array_agg(value->>'secret'), '{}') FROM jsonb_array_elements(e.older_secrets)
                WHERE (value->>'expires_at')::timestamptz > clock_timestamp()) AS older_live_secrets,
               o.event_id, o.type, o.event_version, o.occurred_at, o.resource_type, o.resource_id,
               o.actor_id, o.payload, o.source, clock_timestamp() AS now
        FROM webhook_deliveries d
        JOIN webhook_endpoints e ON e.id = d.endpoint_id
        JOIN outbox o ON o.event_id = d.event_id
        WHERE d.id = $1
        """,
        delivery_id,
    )
    if row is None:
        return None
    context = dict(row)
    context["payload"] = json.loads(context["payload"])
    context["source"] = json.loads(context["source"]) if context["source"] else None
    return context


async def fail_pending_deliveries(endpoint_id: str) -> None:
    """Finish every pending delivery of a just-disabled endpoint as `failed` (`endpoint_disabled`).

    Their workflows may still sleep towards a next slot: they end without sending when they wake, and a
    redelivery runs a workflow of its own, so none of them stands in the way.
    """
    await db.execute(
        "UPDATE webhook_deliveries SET status = 'failed', failure_reason = 'endpoint_disabled',"
        " next_attempt_at = NULL, completed_at = coalesce(completed_at, clock_timestamp()),"
        " updated_at = clock_timestamp() WHERE endpoint_id = $1 AND status = 'pending'",
        endpoint_id,
    )


async def fail_undeliverable(delivery_id: str, generation: int, reason: str) -> None:
    """Finish a pending delivery as `failed` without an attempt (its endpoint was disabled meanwhile)."""
    await db.execute(
        "UPDATE webhook_deliveries SET status = 'failed', failure_reason = $3, next_attempt_at = NULL,"
        " completed_at = clock_timestamp(), updated_at = clock_timestamp()"
        " WHERE id = $1 AND generation = $2 AND status = 'pending'",
        delivery_id,
        generation,
        reason,
    )


@dataclass(frozen=True)
class AttemptRecord:
    """One attempt as observed: what the receiver answered, or why there was no answer."""

    delivery_id: str
    generation: int
    slot: int
    final: bool
    attempted_at: datetime
    status_code: int | None
    latency_ms: float
    response_body: str | None
    response_truncated: bool
    error: str | None
    succeeded: bool
    gone: bool
    retry_after_seconds: float | None
    next_delay_seconds: float | None
    disable_after_seconds: float


@dataclass(frozen=True)
class AttemptOutcome:
    """Where the delivery and its endpoint stand after an attempt was recorded."""

    delivery_status: str
    number: int
    endpoint_disabled_now: str | None  # the reason, when this attempt disabled the endpoint


EndpointDisabled = Callable[[str, str, str], Awaitable[None]]


async def record_attempt(
    record: AttemptRecord, *, on_endpoint_disabled: EndpointDisabled | None = None
) -> AttemptOutcome | None:
    """Record an attempt and its consequences in one transaction; None if the delivery is gone or stale.

    A retried activity records the same (delivery, generation, slot) again: the row is overwritten.
    `on_endpoint_disabled(workspace_id, endpoint_id, reason)` runs inside the transaction when this
    attempt disables the endpoint.
    """
    async with db.transaction():
        delivery = await db.fetchrow(
            "SELECT id, workspace_id, endpoint_id, generation, status, attempt_count FROM webhook_deliveries"
            " WHERE id = $1 FOR UPDATE",
            record.delivery_id,
        )
        if delivery is None or delivery["generation"] != record.generation:
            return None
        existing = await db.fetchrow(
            "SELECT number FROM webhook_delivery_attempts WHERE delivery_id = $1 AND generation = $2 AND slot = $3",
            record.delivery_id,
            record.generation,
            record.slot,
        )
        number = existing["number"] if existing else delivery["attempt_count"] + 1
        await db.execute(
            """
            INSERT INTO webhook_delivery_attempts (delivery_id, generation, slot, number, attempted_at,
                status_code, latency_ms, response_body, response_truncated, error, outcome,
                retry_after_seconds)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
            ON CONFLICT (delivery_id, generation, slot) DO UPDATE SET attempted_at = EXCLUDED.attempted_at,
                status_code = EXCLUDED.status_code, latency_ms = EXCLUDED.latency_ms,
                response_body = EXCLUDED.response_body, response_truncated = EXCLUDED.response_truncated,
                error = EXCLUDED.error, outcome = EXCLUDED.outcome,
                retry_after_seconds = EXCLUDED.retry_after_seconds
            """,
            record.delivery_id,
            record.generation,
            record.slot,
            number,
            record.attempted_at,
            record.status_code,
            record.latency_ms,
            record.response_body,
            record.response_truncated,
            record.error,
            "succeeded" if record.succeeded else "failed",
            record.retry_after_seconds,
        )
        status, reason = delivery_status_after(
            current=delivery["status"], succeeded=record.succeeded, gone=record.gone, final=record.final
        )
        next_delay = None
        if status == "pending" and record.next_delay_seconds is not None:
            next_delay = max(record.next_delay_seconds, record.retry_after_seconds or 0.0)
        await db.execute(
            """
            UPDATE webhook_deliveries SET attempt_count = greatest(attempt_count, $2), last_status_code = $3,
                last_attempt_at = $4::timestamptz, status = $5::text,
                failure_reason = coalesce($6::text, failure_reason),
                next_attempt_at = CASE WHEN $7::float8 IS NULL THEN NULL
                                       ELSE $4::timestamptz + make_interval(secs => $7::float8) END,
                completed_at = CASE WHEN $5::text = 'pending' THEN NULL
                                    ELSE coalesce(completed_at, clock_timestamp()) END,
                updated_at = clock_timestamp()
            WHERE id = $1
            """,
            record.delivery_id,
            number,
            record.status_code,
            record.attempted_at,
            status,
            reason,
            next_delay,
        )
        disabled = await _endpoint_after_attempt(delivery["endpoint_id"], record, exhausted=(reason == "exhausted"))
        if disabled is not None:
            # A disabled endpoint gets nothing more: finish its pending deliveries now (this one included),
            # so none waits hours for its next slot only to fail then, and redeliver is open at once.
            await fail_pending_deliveries(delivery["endpoint_id"])
            if status == "pending":
                status = "failed"
            if on_endpoint_disabled is not None:
                await on_endpoint_disabled(delivery["workspace_id"], delivery["endpoint_id"], disabled)
        return AttemptOutcome(status, number, disabled)


async def _endpoint_after_attempt(endpoint_id: str, record: AttemptRecord, *, exhausted: bool) -> str | None:
    if record.succeeded:
        await db.execute(
            "UPDATE webhook_endpoints SET failing_since = NULL, consecutive_failures = 0"
            " WHERE id = $1 AND (failing_since IS NOT NULL OR consecutive_failures <> 0)",
            endpoint_id,
        )
        return None
    endpoint = await db.fetchrow(
        "SELECT enabled, failing_since FROM webhook_endpoints WHERE id = $1 FOR UPDATE", endpoint_id
    )
    if endpoint is None:
        return None
    failing_since = endpoint["failing_since"] or record.attempted_at
    reason = disable_reason_after_failure(
        enabled=endpoint["enabled"],
        gone=record.gone,
        failing_since=failing_since,
        attempted_at=record.attempted_at,
        disable_after_seconds=record.disable_after_seconds,
    )
    await db.execute(
        """
        UPDATE webhook_endpoints SET failing_since = $2, consecutive_failures = consecutive_failures + $3,
            enabled = enabled AND $4::text IS NULL,
            disabled_reason = coalesce($4, disabled_reason),
            disabled_at = CASE WHEN $4::text IS NULL THEN disabled_at ELSE clock_timestamp() END,
            updated_at = clock_timestamp()
        WHERE id = $1
        """,
        endpoint_id,
        failing_since,
        1 if exhausted else 0,
        reason,
    )
    return reason


# ---------------------------------------------------------------------------------------------- operators


async def last_attempt_id() -> int:
    """The id of the newest attempt (0 if none), where `tail` starts following."""
    row = await db.fetchrow("SELECT coalesce(max(id), 0) AS id FROM webhook_delivery_attempts")
    return int(row["id"]) if row else 0


async def attempts_after(
    after_id: int, *, workspace_slug: str | None, endpoint_id: str | None, limit: int
) -> list[dict[str, Any]]:
    """Attempts newer than `after_id`, oldest first, with their delivery, endpoint and workspace."""
    rows = await db.fetch(
        """
        SELECT a.id, a.attempted_at, a.number, a.status_code, a.latency_ms, a.error, a.outcome,
               d.id AS delivery_id, d.status, d.event_id, d.event_type, d.next_attempt_at,
               e.id AS endpoint_id, e.url, w.slug AS workspace
        FROM webhook_delivery_attempts a
        JOIN webhook_deliveries d ON d.id = a.delivery_id
        JOIN webhook_endpoints e ON e.id = d.endpoint_id
        JOIN workspaces w ON w.id = d.workspace_id
        WHERE a.id > $1 AND ($2::text IS NULL OR w.slug = $2) AND ($3::text IS NULL OR e.id = $3)
        ORDER BY a.id LIMIT $4
        """,
        after_id,
        workspace_slug,
        endpoint_id,
        limit,
    )
    return [dict(r) for r in rows]


async def recent_attempt_ids(count: int, *, workspace_slug: str | None, endpoint_id: str | None) -> int:
    """The attempt id after which the last `count` matching attempts come (for `tail -n`)."""
    row = await db.fetchrow(
        """
        SELECT coalesce(min(id) - 1, 0) AS id FROM (
            SELECT a.id FROM webhook_delivery_attempts a
            JOIN webhook_deliveries d ON d.id = a.delivery_id
            JOIN workspaces w ON w.id = d.workspace_id
            WHERE ($2::text IS NULL OR w.slug = $2) AND ($3::text IS NULL OR d.endpoint_id = $3)
            ORDER BY a.id DESC LIMIT $1) AS recent
        """,
        count,
        workspace_slug,
        endpoint_id,
    )
    return int(row["id"]) if row else 0


async def lock_workspace_endpoints(workspace_id: str) -> None:
    """Serialise endpoint creation in one workspace until the transaction ends (keeps the limit exact)."""
    await db.execute("SELECT pg_advisory_xact_lock(hashtext('webhook_endpoints:' || $1))", workspace_id)


# ---------------------------------------------------------------------------------------------- retention


def _deleted(status: str) -> int:
    return int(status.split()[-1])


async def purge_attempts(older_than_days: float, limit: int) -> int:
    """Delete up to `limit` attempts older than the window, of deliveries no longer pending."""
    status = await db.execute(
        """
        DELETE FROM webhook_delivery_attempts WHERE id IN (
            SELECT a.id FROM webhook_delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
            WHERE a.attempted_at < clock_timestamp() - make_interval(secs => $1 * 86400.0) AND d.status <> 'pending'
            LIMIT $2)
        """,
        older_than_days,
        limit,
    )
    return _deleted(status)


async def purge_deliveries(older_than_days: float, limit: int) -> int:
    """Delete up to `limit` deliveries finished longer ago than the window (their attempts go with them)."""
    status = await db.execute(
        """
        DELETE FROM webhook_deliveries WHERE id IN (
            SELECT id FROM webhook_deliveries
            WHERE status <> 'pending' AND completed_at < clock_timestamp() - make_interval(secs => $1 * 86400.0)
            LIMIT $2)
        """,
        older_than_days,
        limit,
    )
    return _deleted(status)


async def purge_outbox(older_than_days: float, limit: int) -> int:
    """Delete up to `limit` events dispatched longer ago than the window that no delivery refers to any more."""
    status = await db.execute(
        """
        DELETE FROM outbox WHERE id IN (
            SELECT o.id FROM outbox o
            WHERE o.dispatched_at < clock_timestamp() - make_interval(secs => $1 * 86400.0)
              AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = o.event_id)
            LIMIT $2)
        """,
        older_than_days,
        limit,
    )
    return _deleted(status)
