"""Webhook delivery attempts: what one attempt needs, recording it with its consequences, and the operators'
tail of attempts."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from groundwork.domain.webhooks import delivery_status_after, disable_reason_after_failure
from groundwork.persistence import db
from groundwork.persistence.repositories.webhooks.deliveries import fail_pending_deliveries


@dataclass(frozen=True, slots=True)
class AttemptContextRow:
    """Everything one attempt needs: the delivery, its endpoint (with its stored secrets) and its event, decoded."""

    id: str
    generation: int
    status: str
    workspace_id: str
    endpoint_id: str
    url: str
    enabled: bool
    secret: str
    previous_secret: str | None
    previous_secret_expires_at: datetime | None
    older_live_secrets: list[str]
    event_id: str
    type: str
    event_version: int
    occurred_at: datetime
    resource_type: str
    resource_id: str
    actor_id: str | None
    payload: dict[str, Any]
    source: dict[str, Any] | None
    now: datetime


@dataclass(frozen=True, slots=True)
class AttemptTailRow:
    """An attempt as operators follow it, with its delivery, endpoint and workspace (its slug)."""

    id: int
    attempted_at: datetime
    number: int
    status_code: int | None
    latency_ms: float
    error: str | None
    outcome: str
    delivery_id: str
    status: str
    event_id: str
    event_type: str
    next_attempt_at: datetime | None
    endpoint_id: str
    url: str
    workspace: str


async def attempt_context(delivery_id: str) -> AttemptContextRow | None:
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
    return AttemptContextRow(
        id=row["id"],
        generation=row["generation"],
        status=row["status"],
        workspace_id=row["workspace_id"],
        endpoint_id=row["endpoint_id"],
        url=row["url"],
        enabled=row["enabled"],
        secret=row["secret"],
        previous_secret=row["previous_secret"],
        previous_secret_expires_at=row["previous_secret_expires_at"],
        older_live_secrets=row["older_live_secrets"],
        event_id=row["event_id"],
        type=row["type"],
        event_version=row["event_version"],
        occurred_at=row["occurred_at"],
        resource_type=row["resource_type"],
        resource_id=row["resource_id"],
        actor_id=row["actor_id"],
        payload=json.loads(row["payload"]),
        source=json.loads(row["source"]) if row["source"] else None,
        now=row["now"],
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


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
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
        # The endpoint's row is locked before the delivery's, as disabling an endpoint (its PATCH, or another
        # attempt's failure) locks the endpoint and then its pending deliveries: locked the other way round,
        # the two deadlock. A failure may change the endpoint (FOR UPDATE); a success only keeps it from
        # changing under it (FOR KEY SHARE, which successes to one endpoint share with each other).
        lock = "FOR KEY SHARE OF e" if record.succeeded else "FOR UPDATE OF e"
        owner = await db.fetchrow(
            "SELECT e.id FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id"
            f" WHERE d.id = $1 {lock}",
            record.delivery_id,
        )
        if owner is None:
            return None
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
) -> list[AttemptTailRow]:
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
    return [
        AttemptTailRow(
            id=r["id"],
            attempted_at=r["attempted_at"],
            number=r["number"],
            status_code=r["status_code"],
            latency_ms=r["latency_ms"],
            error=r["error"],
            outcome=r["outcome"],
            delivery_id=r["delivery_id"],
            status=r["status"],
            event_id=r["event_id"],
            event_type=r["event_type"],
            next_attempt_at=r["next_attempt_at"],
            endpoint_id=r["endpoint_id"],
            url=r["url"],
            workspace=r["workspace"],
        )
        for r in rows
    ]


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
