"""Webhook deliveries: created by the relay's claims and by the API's commands, read with their attempts."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from asyncpg import Record

from groundwork.domain.ids import new_id
from groundwork.domain.webhooks import EndpointOwner, delivery_workflow_id, endpoint_may_receive, subscribes
from groundwork.persistence import db
from groundwork.persistence.repositories.platform.outbox import ClaimedEventRow

# What the relay and the API need to start a delivery workflow.
_START_COLUMNS = "id, workflow_id, generation, workspace_id, endpoint_id, event_id, event_type"


@dataclass(frozen=True, slots=True)
class DeliveryStartRow:
    """What starting a delivery's workflow needs."""

    id: str
    workflow_id: str
    generation: int
    workspace_id: str
    endpoint_id: str
    event_id: str
    event_type: str


@dataclass(frozen=True, slots=True)
class AttemptRow:
    """One attempt of a delivery: what the receiver answered, or why there was no answer."""

    id: int
    delivery_id: str
    generation: int
    slot: int
    number: int
    attempted_at: datetime
    status_code: int | None
    latency_ms: float
    response_body: str | None
    response_truncated: bool
    error: str | None
    outcome: str
    retry_after_seconds: float | None


@dataclass(frozen=True, slots=True)
class DeliveryRow:
    """A delivery of one event to one endpoint, with its attempts in order."""

    id: str
    workflow_id: str
    workspace_id: str
    endpoint_id: str
    event_id: str
    event_type: str
    status: str
    failure_reason: str | None
    generation: int
    attempt_count: int
    last_status_code: int | None
    last_attempt_at: datetime | None
    next_attempt_at: datetime | None
    start_requested_at: datetime
    workflow_started_at: datetime | None
    workflow_run_id: str | None
    completed_at: datetime | None
    created_at: datetime
    updated_at: datetime
    attempts: list[AttemptRow]


@dataclass(frozen=True, slots=True)
class LockedDeliveryRow:
    """A delivery held for a redelivery decision, with whether its endpoint is enabled."""

    id: str
    endpoint_id: str
    event_id: str
    status: str
    generation: int
    endpoint_enabled: bool


def _start(row: Record) -> DeliveryStartRow:
    return DeliveryStartRow(
        id=row["id"],
        workflow_id=row["workflow_id"],
        generation=row["generation"],
        workspace_id=row["workspace_id"],
        endpoint_id=row["endpoint_id"],
        event_id=row["event_id"],
        event_type=row["event_type"],
    )


# ---------------------------------------------------------------------------------------------- the relay


async def create_deliveries(events: list[ClaimedEventRow]) -> list[DeliveryStartRow]:
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
    return [_start(r) for r in rows]


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


async def claim_unstarted(grace_seconds: float, limit: int) -> list[DeliveryStartRow]:
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
    return [_start(r) for r in rows]


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
) -> DeliveryStartRow:
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
    return _start(row)


async def lock_delivery(
    workspace_id: str, delivery_id: str, *, owner_id: str | None = None
) -> LockedDeliveryRow | None:
    """The delivery (to an endpoint created by `owner_id`, if given) with its endpoint's `enabled`, locked."""
    row = await db.fetchrow(
        "SELECT d.*, e.enabled AS endpoint_enabled FROM webhook_deliveries d"
        " JOIN webhook_endpoints e ON e.id = d.endpoint_id"
        " WHERE d.id = $1 AND d.workspace_id = $2 AND ($3::text IS NULL OR e.created_by = $3) FOR UPDATE OF d",
        delivery_id,
        workspace_id,
        owner_id,
    )
    if row is None:
        return None
    return LockedDeliveryRow(
        id=row["id"],
        endpoint_id=row["endpoint_id"],
        event_id=row["event_id"],
        status=row["status"],
        generation=row["generation"],
        endpoint_enabled=row["endpoint_enabled"],
    )


async def reopen_delivery(delivery_id: str, generation: int, workflow_id: str) -> DeliveryStartRow:
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
    return _start(row)


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


# ---------------------------------------------------------------------------------------------- reads


def _attempt(row: Record) -> AttemptRow:
    return AttemptRow(
        id=row["id"],
        delivery_id=row["delivery_id"],
        generation=row["generation"],
        slot=row["slot"],
        number=row["number"],
        attempted_at=row["attempted_at"],
        status_code=row["status_code"],
        latency_ms=row["latency_ms"],
        response_body=row["response_body"],
        response_truncated=row["response_truncated"],
        error=row["error"],
        outcome=row["outcome"],
        retry_after_seconds=row["retry_after_seconds"],
    )


def _delivery(row: Record, attempts: list[AttemptRow]) -> DeliveryRow:
    return DeliveryRow(
        id=row["id"],
        workflow_id=row["workflow_id"],
        workspace_id=row["workspace_id"],
        endpoint_id=row["endpoint_id"],
        event_id=row["event_id"],
        event_type=row["event_type"],
        status=row["status"],
        failure_reason=row["failure_reason"],
        generation=row["generation"],
        attempt_count=row["attempt_count"],
        last_status_code=row["last_status_code"],
        last_attempt_at=row["last_attempt_at"],
        next_attempt_at=row["next_attempt_at"],
        start_requested_at=row["start_requested_at"],
        workflow_started_at=row["workflow_started_at"],
        workflow_run_id=row["workflow_run_id"],
        completed_at=row["completed_at"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        attempts=attempts,
    )


async def _with_attempts(rows: list[Record]) -> list[DeliveryRow]:
    if not rows:
        return []
    attempts = await db.fetch(
        "SELECT * FROM webhook_delivery_attempts WHERE delivery_id = ANY($1::text[]) ORDER BY number",
        [r["id"] for r in rows],
    )
    by_delivery: dict[str, list[AttemptRow]] = {r["id"]: [] for r in rows}
    for attempt in attempts:
        by_delivery[attempt["delivery_id"]].append(_attempt(attempt))
    return [_delivery(r, by_delivery[r["id"]]) for r in rows]


async def get_delivery(workspace_id: str, delivery_id: str, *, owner_id: str | None = None) -> DeliveryRow | None:
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
) -> list[DeliveryRow]:
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
