"""The outbox relay: NOTIFY wake-up, several relays at once, and restarts at every point of a pass."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from groundwork.persistence import db
from groundwork.persistence.repositories.platform import outbox
from groundwork.persistence.repositories.webhooks import deliveries as repo
from groundwork.platform.outbox.relay import OutboxRelay
from groundwork.services.webhooks.deliveries import WebhookDeliveries
from groundwork.worker import outbox_relay
from tests.conftest import Workspace
from tests.integration.webhooks.conftest import Receiver, create_endpoint, delivery_of, emit, wait_until


async def _runs(temporal_client: Any, workflow_id: str) -> int:
    return len([w async for w in temporal_client.list_workflows(f"WorkflowId = '{workflow_id}'")])


async def test_notify_wakes_the_relay_without_waiting_for_a_sweep(
    client: httpx.AsyncClient,
    workspace: Workspace,
    worker: Any,
    temporal_client: Any,
    webhook_settings: Any,
    receivers: Callable[[], Awaitable[Receiver]],
) -> None:
    key = await workspace.key(admin=True)
    receiver = await receivers()
    await create_endpoint(client, workspace, key, receiver.url, ["notification.*"])
    relay = outbox_relay(temporal_client, webhook_settings, sweep_seconds=60)
    stop = asyncio.Event()
    task = asyncio.create_task(relay.run(stop))
    try:
        await asyncio.sleep(0.3)  # past the first pass: from now on only a notification wakes it
        started = time.monotonic()
        await emit(workspace, "notification.created")
        await receiver.wait_for(1, timeout=5)
        assert time.monotonic() - started < 5
    finally:
        stop.set()
        await task


async def test_relay_restarted_mid_flight_starts_no_second_workflow(
    client: httpx.AsyncClient,
    workspace: Workspace,
    worker: Any,
    temporal_client: Any,
    webhook_settings: Any,
    receivers: Callable[[], Awaitable[Receiver]],
) -> None:
    key = await workspace.key(admin=True)
    receiver = await receivers()
    endpoint = await create_endpoint(client, workspace, key, receiver.url, ["notification.*"])
    first = outbox_relay(temporal_client, webhook_settings, restart_grace_seconds=0)
    await emit(workspace, "notification.created")
    assert await first.run_once() == 1
    await receiver.wait_for(1)

    async def delivered() -> bool:
        return (await delivery_of(client, workspace, key, endpoint["id"]))[0]["status"] == "succeeded"

    await wait_until(delivered, what="the delivery")
    [delivery] = await delivery_of(client, workspace, key, endpoint["id"])
    workflow_id = delivery["temporal"]["workflowId"]

    # The relay died after starting the workflow but before recording it, and before its claim of
    # the event committed: the event is undispatched again and the delivery looks unstarted.
    await db.execute("UPDATE outbox SET dispatched_at = NULL WHERE event_id = $1", delivery["eventId"])
    await db.execute(
        "UPDATE webhook_deliveries SET workflow_started_at = NULL,"
        " start_requested_at = now() - interval '1 minute' WHERE id = $1",
        delivery["id"],
    )
    restarted = outbox_relay(temporal_client, webhook_settings, restart_grace_seconds=0)
    await restarted.run_once()
    await restarted.run_once()
    await asyncio.sleep(0.5)
    assert await _runs(temporal_client, workflow_id) == 1
    assert len(receiver.requests) == 1
    [after] = await delivery_of(client, workspace, key, endpoint["id"])
    assert after["attemptCount"] == 1 and after["status"] == "succeeded"


async def test_a_claim_committed_without_its_start_is_started_by_the_next_sweep(
    client: httpx.AsyncClient,
    workspace: Workspace,
    worker: Any,
    temporal_client: Any,
    webhook_settings: Any,
    receivers: Callable[[], Awaitable[Receiver]],
) -> None:
    key = await workspace.key(admin=True)
    receiver = await receivers()
    endpoint = await create_endpoint(client, workspace, key, receiver.url, ["notification.*"])
    event_id = await emit(workspace, "notification.created")
    # A relay claims the event (deliveries created, event dispatched) and dies before starting anything.
    deliveries = WebhookDeliveries(lambda: temporal_client, webhook_settings)
    claimed = await outbox.claim_batch(1000, on_claimed=deliveries.consume)
    created = deliveries.created
    assert claimed >= 1 and [d.event_id for d in created if d.endpoint_id == endpoint["id"]] == [event_id]
    patient = outbox_relay(temporal_client, webhook_settings, restart_grace_seconds=3600)
    await patient.run_once()
    assert receiver.requests == []  # within the grace period: it may still be starting elsewhere
    survivor = outbox_relay(temporal_client, webhook_settings, restart_grace_seconds=0)
    assert await survivor.run_once() >= 1
    [request] = await receiver.wait_for(1)
    assert request.headers["webhook-id"] == event_id


async def test_several_relays_at_once_start_each_delivery_once(
    client: httpx.AsyncClient,
    workspace: Workspace,
    worker: Any,
    temporal_client: Any,
    webhook_settings: Any,
    receivers: Callable[[], Awaitable[Receiver]],
) -> None:
    key = await workspace.key(admin=True)
    receiver = await receivers()
    endpoint = await create_endpoint(client, workspace, key, receiver.url, ["work_item_enhancement.*"])
    sent = [await emit(workspace, "work_item_enhancement.draft_created", {"i": i}) for i in range(30)]
    relays = [outbox_relay(temporal_client, webhook_settings, batch_size=5) for _ in range(3)]
    counts = await asyncio.gather(*(r.run_once() for r in relays))
    assert sum(counts) == 30
    await receiver.wait_for(30)
    await asyncio.sleep(0.3)
    assert sorted(r.headers["webhook-id"] for r in receiver.requests) == sorted(sent)
    deliveries = await repo.list_deliveries(endpoint["id"], status=None, event_type=None, after_id=None, limit=100)
    assert len(deliveries) == 30


async def test_deliveries_are_searchable_in_temporal_by_endpoint_type_and_status(
    client: httpx.AsyncClient,
    workspace: Workspace,
    relay: OutboxRelay,
    temporal_client: Any,
    receivers: Callable[[], Awaitable[Receiver]],
) -> None:
    key = await workspace.key(admin=True)
    receiver = await receivers()
    endpoint = await create_endpoint(client, workspace, key, receiver.url, ["context_engine.*"])
    await emit(workspace, "context_engine.merge_decided")
    await receiver.wait_for(1)
    query = (
        f"GroundworkEndpoint = '{endpoint['id']}' AND GroundworkEventType = 'context_engine.merge_decided'"
        " AND GroundworkDeliveryStatus = 'succeeded'"
    )

    async def visible() -> bool:
        return len([w async for w in temporal_client.list_workflows(query)]) == 1

    await wait_until(visible, what="the delivery in Temporal visibility")


async def test_a_running_relay_looks_for_stranded_deliveries_once_per_grace_period_and_still_starts_them(
    client: httpx.AsyncClient,
    workspace: Workspace,
    worker: Any,
    temporal_client: Any,
    webhook_settings: Any,
    receivers: Callable[[], Awaitable[Receiver]],
    monkeypatch: Any,
) -> None:
    key = await workspace.key(admin=True)
    receiver = await receivers()
    await create_endpoint(client, workspace, key, receiver.url, ["notification.*"])
    stranded_event = await emit(workspace, "notification.created")
    # Claimed by a relay that died before starting anything.
    await outbox.claim_batch(1000, on_claimed=WebhookDeliveries(lambda: temporal_client, webhook_settings).consume)
    looks = 0
    claim_unstarted = repo.claim_unstarted

    async def counted(*args: Any) -> Any:  # the real statement, counted
        nonlocal looks
        looks += 1
        return await claim_unstarted(*args)

    monkeypatch.setattr(repo, "claim_unstarted", counted)
    relay = outbox_relay(temporal_client, webhook_settings, restart_grace_seconds=1.0, sweep_seconds=60)
    stop = asyncio.Event()
    task = asyncio.create_task(relay.run(stop))
    try:
        sent = []
        for _ in range(25):  # 25 notifications in 2.5 s: the relay passes about as often
            sent.append(await emit(workspace, "notification.created"))
            await asyncio.sleep(0.1)
        await receiver.wait_for(26, timeout=20)
        assert sorted(r.headers["webhook-id"] for r in receiver.requests) == sorted([stranded_event, *sent])
        assert 2 <= looks <= 4, looks  # at the first pass, then once a grace period (2.5 s / 1 s)
    finally:
        stop.set()
        await task
