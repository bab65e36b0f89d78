"""The outbox: domain events written in the transaction of the change they describe."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import msgspec

from groundwork.domain.ids import new_id
from groundwork.persistence import db


@dataclass(frozen=True, slots=True)
class OutboxEventRow:
    """An event as stored, its payload and source decoded."""

    id: int
    event_id: str
    type: str
    event_version: int
    workspace_id: str
    resource_type: str
    resource_id: str
    actor_id: str | None
    payload: dict[str, Any]
    source: dict[str, Any] | None
    occurred_at: datetime
    dispatched_at: datetime | None
    project_id: str | None
    private_to: str | None


# A Struct rather than a dataclass, as on every hot path: the relay builds one per claimed event, and a
# frozen dataclass costs several times as much to build.
class ClaimedEventRow(msgspec.Struct, frozen=True, gc=False):
    """An undispatched event as the relay hands it to its consumers."""

    id: int
    event_id: str
    type: str
    workspace_id: str
    resource_type: str
    resource_id: str
    actor_id: str | None
    payload: dict[str, Any]
    occurred_at: datetime
    project_id: str | None
    private_to: str | None


async def append_event(
    *,
    type: str,
    workspace_id: str,
    resource_type: str,
    resource_id: str,
    actor_id: str | None,
    payload: dict[str, Any],
    occurred_at: datetime,
    project_id: str | None,
    private_to: str | None = None,
    source: dict[str, Any] | None = None,
) -> str:
    """Insert one event (call inside the change's transaction); returns its `evt_` id.

    `project_id` is the project the event is about (None: it is in none) and `private_to` the one
    principal who may see it when it is personal: the relay delivers it only to endpoints whose
    owner may see it (`domain.webhooks.endpoint_may_receive`).
    """
    event_id = new_id("evt")
    await db.execute(
        "INSERT INTO outbox (event_id, type, workspace_id, resource_type, resource_id, actor_id,"
        " payload, source, occurred_at, project_id, private_to)"
        " VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb, $9, $10, $11)",
        event_id,
        type,
        workspace_id,
        resource_type,
        resource_id,
        actor_id,
        json.dumps(payload),
        json.dumps(source) if source is not None else None,
        occurred_at,
        project_id,
        private_to,
    )
    return event_id


async def append_events(events: list[dict[str, Any]]) -> list[str]:
    """Insert many events in one statement, in the order given (call inside the change's transaction); returns
    their ids.

    Each event is a dict with the keyword arguments of `append_event` (`project_id` is required).
    """
    if not events:
        return []
    ids = [new_id("evt") for _ in events]
    await db.execute(
        "INSERT INTO outbox (event_id, type, workspace_id, resource_type, resource_id, actor_id, payload, source,"
        " occurred_at, project_id, private_to) SELECT e.id, e.type, e.ws, e.rtype, e.rid, e.actor, e.payload::jsonb,"
        " e.source::jsonb, e.at, e.project, e.private_to"
        " FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],"
        " $8::text[], $9::timestamptz[], $10::text[], $11::text[]) WITH ORDINALITY"
        " AS e(id, type, ws, rtype, rid, actor, payload, source, at, project, private_to, position)"
        " ORDER BY e.position",  # the outbox's order (its id) is the order given
        ids,
        [e["type"] for e in events],
        [e["workspace_id"] for e in events],
        [e["resource_type"] for e in events],
        [e["resource_id"] for e in events],
        [e.get("actor_id") for e in events],
        [json.dumps(e["payload"]) for e in events],
        [json.dumps(e["source"]) if e.get("source") is not None else None for e in events],
        [e["occurred_at"] for e in events],
        [e["project_id"] for e in events],
        [e.get("private_to") for e in events],
    )
    return ids


async def events_for_workspace(workspace_id: str) -> list[OutboxEventRow]:
    """Every event of a workspace in commit order (tests and operators)."""
    rows = await db.fetch("SELECT * FROM outbox WHERE workspace_id = $1 ORDER BY id", workspace_id)
    return [
        OutboxEventRow(
            id=r["id"],
            event_id=r["event_id"],
            type=r["type"],
            event_version=r["event_version"],
            workspace_id=r["workspace_id"],
            resource_type=r["resource_type"],
            resource_id=r["resource_id"],
            actor_id=r["actor_id"],
            payload=json.loads(r["payload"]),
            source=json.loads(r["source"]) if r["source"] else None,
            occurred_at=r["occurred_at"],
            dispatched_at=r["dispatched_at"],
            project_id=r["project_id"],
            private_to=r["private_to"],
        )
        for r in rows
    ]


ClaimedEvents = Callable[[list[ClaimedEventRow]], Awaitable[None]]

# msgspec's decoder, not json.loads: every claimed event's payload is decoded here, most of them for no consumer
# that reads it, and this one takes a third of the time for the same values.
_decode_payload = msgspec.json.Decoder().decode


async def claim_batch(limit: int, *, on_claimed: ClaimedEvents) -> int:
    """Claim undispatched events (SKIP LOCKED), hand them to `on_claimed` and mark them dispatched.

    `on_claimed(events)` runs inside the claim's transaction (each consumer writes what the events cause:
    webhook deliveries, notifications), so whatever it writes commits with `dispatched_at` or not at all.
    Returns how many events were claimed.
    """
    async with db.transaction():
        events = await db.fetch(
            "SELECT id, event_id, type, workspace_id, resource_type, resource_id, actor_id, payload, occurred_at,"
            " project_id, private_to FROM outbox WHERE dispatched_at IS NULL ORDER BY id LIMIT $1"
            " FOR UPDATE SKIP LOCKED",
            limit,
        )
        if not events:
            return 0
        await on_claimed(
            [
                ClaimedEventRow(
                    id=e["id"],
                    event_id=e["event_id"],
                    type=e["type"],
                    workspace_id=e["workspace_id"],
                    resource_type=e["resource_type"],
                    resource_id=e["resource_id"],
                    actor_id=e["actor_id"],
                    payload=_decode_payload(e["payload"]),
                    occurred_at=e["occurred_at"],
                    project_id=e["project_id"],
                    private_to=e["private_to"],
                )
                for e in events
            ]
        )
        await db.execute(
            "UPDATE outbox SET dispatched_at = clock_timestamp() WHERE id = ANY($1::bigint[])",
            [e["id"] for e in events],
        )
        return len(events)
