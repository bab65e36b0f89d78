"""Signed delivery of committed events: verification, fan-out, retries, outages, 410, Retry-After."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
from standardwebhooks import Webhook

from groundwork.platform.outbox.relay import OutboxRelay
from groundwork.worker import outbox_relay
from tests.conftest import Workspace, idem
from tests.integration.webhooks.conftest import (
    Receiver,
    create_endpoint,
    delivery_of,
    emit,
    wait_until,
)

ENVELOPE_KEYS = [
    "event_id",
    "type",
    "event_version",
    "occurred_at",
    "workspace_id",
    "resource",
    "actor",
    "payload",
    "source",
]


async def test_every_delivery_verifies_with_standardwebhooks(
    client: httpx.AsyncClient,
    workspace: Workspace,
    relay: OutboxRelay,
    receivers: Callable[[], Awaitable[Receiver]],
) -> None:
    key = await workspace.key(admin=True)
    receiver = await receivers()
    endpoint = await create_endpoint(
        client, workspace, key, receiver.url, ["work_item_enhancement.*", "notification.created"]
    )
    assert endpoint["secret"].startswith("whsec_")
    sent = [
        await emit(workspace, "work_item_enhancement.queued", {"run_id": "wie_1", "requested_actions": ["design"]}),
        await emit(workspace, "notification.created", {"notification_id": "notification_1", "status": "unread"}),
        await emit(workspace, "work_item_enhancement.completed", {"run_id": "wie_1", "draft_count": 2}),
    ]
    requests = await receiver.wait_for(3)
    verifier = Webhook(endpoint["secret"])
    by_id: dict[str, dict[str, Any]] = {}
    for request in requests:
        event = verifier.verify(request.body, request.headers)
        assert list(json.loads(request.body)) == ENVELOPE_KEYS
        assert request.headers["webhook-id"] == event["event_id"]
        assert request.headers["user-agent"].startswith("Groundwork-Webhooks/")
        assert request.headers["content-type"] == "application/json"
        assert request.headers["webhook-signature"].startswith("v1,")
        by_id[event["event_id"]] = event
    assert set(by_id) == set(sent)
    queued = by_id[sent[0]]
    assert queued["type"] == "work_item_enhancement.queued" and queued["event_version"] == 1
    assert queued["workspace_id"] == workspace.id
    assert queued["payload"] == {"run_id": "wie_1", "requested_actions": ["design"]}
    assert queued["actor"] == {"id": workspace.principals["admin"]}
    assert queued["resource"]["type"] == "work_item_enhancement" and queued["source"] is None
    assert queued["occurred_at"].endswith("Z")

    async def all_succeeded() -> bool:
        deliveries = await delivery_of(client, workspace, key, endpoint["id"])
        return len(deliveries) == 3 and all(d["status"] == "succeeded" for d in deliveries)

    await wait_until(all_succeeded, what="three succeeded deliveries")
    [first, *_] = await delivery_of(client, workspace, key, endpoint["id"])
    assert first["id"].startswith("whd_") and first["attemptCount"] == 1
    assert first["temporal"]["workflowId"] == f"whd_{first['eventId']}_{endpoint['id']}"
    [attempt] = first["attempts"]
    assert attempt["statusCode"] == 200 and attempt["outcome"] == "succeeded" and attempt["latencyMs"] > 0
    assert attempt["response"] == {"body": "answered 200", "truncated": False}


async def test_an_event_reaches_every_subscribed_endpoint_and_no_other(
    client: httpx.AsyncClient,
    workspace: Workspace,
    relay: OutboxRelay,
    receivers: Callable[[], Awaitable[Receiver]],
) -> None:
    from groundwork.persistence.repositories.tenancy import workspaces as tenancy

    key = await workspace.key(admin=True)
    exact, prefix, other_type, disabled, foreign = [await receivers() for _ in range(5)]
    e_exact = await create_endpoint(client, workspace, key, exact.url, ["work_item_enhancement.queued"])
    e_prefix = await create_endpoint(client, workspace, key, prefix.url, ["work_item_enhancement.*"])
    e_other = await create_endpoint(client, workspace, key, other_type.url, ["notification.*"])
    e_disabled = await create_endpoint(client, workspace, key, disabled.url, ["work_item_enhancement.*"])
    patched = await client.patch(
        f"/api/v1/webhook-endpoints/{e_disabled['id']}",
        json={"enabled": False},
        headers=workspace.headers(key),
    )
    assert patched.json()["data"]["disabledReason"] == "manual"
    # The same subscription in another workspace.
    ws2 = await tenancy.create_workspace(f"{workspace.slug}-b", "Other")
    other = Workspace(ws2.id, ws2.slug)
    other_key = await other.key(admin=True)
    await create_endpoint(client, other, other_key, foreign.url, ["work_item_enhancement.*"])

    queued = await emit(workspace, "work_item_enhancement.queued")
    completed = await emit(workspace, "work_item_enhancement.completed")
    created = await emit(workspace, "notification.created")
    await exact.wait_for(1)
    await prefix.wait_for(2)
    await other_type.wait_for(1)
    await relay.run_once()  # everything is dispatched: the deliveries below are all there will be
    assert [r.headers["webhook-id"] for r in exact.requests] == [queued]
    assert sorted(r.headers["webhook-id"] for r in prefix.requests) == sorted([queued, completed])
    assert [r.headers["webhook-id"] for r in other_type.requests] == [created]
    assert disabled.requests == [] and foreign.requests == []
    for endpoint, count in ((e_exact, 1), (e_prefix, 2), (e_other, 1), (e_disabled, 0)):
        assert len(await delivery_of(client, workspace, key, endpoint["id"])) == count


async def test_500_twice_then_200_delivers_on_the_third_attempt_with_one_webhook_id(
    client: httpx.AsyncClient,
    workspace: Workspace,
    relay: OutboxRelay,
    receivers: Callable[[], Awaitable[Receiver]],
) -> None:
    key = await workspace.key(admin=True)
    receiver = await receivers()
    receiver.answer(500, 500)
    endpoint = await create_endpoint(client, workspace, key, receiver.url, ["notification.*"])
    event_id = await emit(workspace, "notification.updated", {"notification_id": "n1", "version": 2})
    requests = await receiver.wait_for(3)
    verifier = Webhook(endpoint["secret"])
    assert [r.headers["webhook-id"] for r in requests] == [event_id] * 3
    assert len({r.body for r in requests}) == 1  # the same bytes every time
    for request in requests:
        verifier.verify(request.body, request.headers)
    assert requests[1].at - requests[0].at >= 0.2 * 0.99  # the schedule's second slot

    async def succeeded() -> bool:
        deliveries = await delivery_of(client, workspace, key, endpoint["id"])
        return deliveries[0]["status"] == "succeeded"

    await wait_until(succeeded, what="success")
    [delivery] = await delivery_of(client, workspace, key, endpoint["id"])
    assert delivery["attemptCount"] == 3 and delivery["lastStatusCode"] == 200
    assert [a["statusCode"] for a in delivery["attempts"]] == [500, 500, 200]
    assert [a["number"] for a in delivery["attempts"]] == [1, 2, 3]
    assert delivery["attempts"][0]["response"]["body"] == "answered 500"
    assert delivery["nextAttemptAt"] is None and delivery["completedAt"] is not None
    fetched = await client.get(f"/api/v1/webhook-endpoints/{endpoint['id']}", headers=workspace.headers(key))
    assert fetched.json()["data"]["failingSince"] is None  # the success ended the failure streak
    assert "secret" not in fetched.json()["data"]


async def test_a_receiver_that_was_down_receives_everything_once_it_is_back(
    client: httpx.AsyncClient,
    workspace: Workspace,
    worker: Any,
    temporal_client: Any,
    webhook_settings: Any,
    receivers: Callable[[], Awaitable[Receiver]],
) -> None:
    import asyncio
    import dataclasses

    key = await workspace.key(admin=True)
    receiver = await receivers()
    endpoint = await create_endpoint(client, workspace, key, receiver.url, ["context_engine.*"])
    await receiver.stop()  # the port is now closed: connection refused
    settings = dataclasses.replace(webhook_settings, webhook_schedule=(0, 0.3, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5))
    relay = outbox_relay(temporal_client, settings)
    sent = [
        await emit(workspace, "context_engine.contribution_persisted", {"subject_id": f"prj_{i}"}) for i in range(8)
    ]
    assert await relay.run_once() == 8

    async def all_failed_once() -> bool:
        deliveries = await delivery_of(client, workspace, key, endpoint["id"])
        return len(deliveries) == 8 and all(d["attemptCount"] >= 1 for d in deliveries)

    await wait_until(all_failed_once, what="first attempts against the closed port")
    await asyncio.sleep(0.4)
    await receiver.start()  # same port, back up
    await receiver.wait_for(8)

    async def all_succeeded() -> bool:
        deliveries = await delivery_of(client, workspace, key, endpoint["id"])
        return all(d["status"] == "succeeded" for d in deliveries)

    await wait_until(all_succeeded, what="every delivery to succeed")
    received = [r.headers["webhook-id"] for r in receiver.requests]
    assert set(received) == set(sent)  # nothing lost, nothing that was not sent
    verifier = Webhook(endpoint["secret"])
    for request in receiver.requests:  # any duplicate is the same event under the same webhook-id
        assert verifier.verify(request.body, request.headers)["event_id"] == request.headers["webhook-id"]
    deliveries = await delivery_of(client, workspace, key, endpoint["id"])
    assert any(d["attempts"][0]["error"] and "ConnectError" in d["attempts"][0]["error"] for d in deliveries)


async def test_410_disables_the_endpoint(
    client: httpx.AsyncClient,
    workspace: Workspace,
    relay: OutboxRelay,
    receivers: Callable[[], Awaitable[Receiver]],
) -> None:
    key = await workspace.key(admin=True)
    receiver = await receivers()
    receiver.answer(410)
    endpoint = await create_endpoint(client, workspace, key, receiver.url, ["notification.*"])
    await emit(workspace, "notification.created")
    await receiver.wait_for(1)

    async def disabled() -> bool:
        response = await client.get(f"/api/v1/webhook-endpoints/{endpoint['id']}", headers=workspace.headers(key))
        return response.json()["data"]["enabled"] is False

    await wait_until(disabled, what="the endpoint to be disabled")
    data = (await client.get(f"/api/v1/webhook-endpoints/{endpoint['id']}", headers=workspace.headers(key))).json()[
        "data"
    ]
    assert data["disabledReason"] == "gone" and data["disabledAt"] is not None
    [delivery] = await delivery_of(client, workspace, key, endpoint["id"])
    assert delivery["status"] == "failed" and delivery["failureReason"] == "endpoint_gone"
    assert delivery["attemptCount"] == 1  # no retry after 410

    await emit(workspace, "notification.created")
    await relay.run_once()
    assert len(await delivery_of(client, workspace, key, endpoint["id"])) == 1  # nothing for a disabled endpoint
    assert len(receiver.requests) == 1
    for path in (
        f"/api/v1/webhook-endpoints/{endpoint['id']}/test",
        f"/api/v1/webhook-deliveries/{delivery['id']}/redeliver",
    ):
        refused = await client.post(path, headers=workspace.headers(key, **idem()))
        assert refused.status_code == 409 and refused.json()["code"] == "endpoint_disabled"

    enabled = await client.patch(
        f"/api/v1/webhook-endpoints/{endpoint['id']}", json={"enabled": True}, headers=workspace.headers(key)
    )
    assert enabled.status_code == 200
    assert enabled.json()["data"]["enabled"] is True and enabled.json()["data"]["disabledReason"] is None


async def test_retry_after_on_429_sets_the_next_attempt(
    client: httpx.AsyncClient,
    workspace: Workspace,
    relay: OutboxRelay,
    receivers: Callable[[], Awaitable[Receiver]],
) -> None:
    key = await workspace.key(admin=True)
    receiver = await receivers()
    receiver.answer(429, headers={"Retry-After": "1"})
    endpoint = await create_endpoint(client, workspace, key, receiver.url, ["notification.*"])
    await emit(workspace, "notification.acknowledged")
    first, second = await receiver.wait_for(2)
    assert second.at - first.at >= 0.99  # not the 0.2 s of the schedule
    [delivery] = await delivery_of(client, workspace, key, endpoint["id"])
    assert delivery["attempts"][0]["retryAfterSeconds"] == 1.0


async def test_exhausted_schedule_fails_the_delivery_and_five_failing_days_disable_the_endpoint(
    client: httpx.AsyncClient,
    workspace: Workspace,
    relay: OutboxRelay,
    receivers: Callable[[], Awaitable[Receiver]],
) -> None:
    from groundwork.persistence import db

    key = await workspace.key(admin=True)
    receiver = await receivers()
    receiver.default_status = 500
    endpoint = await create_endpoint(client, workspace, key, receiver.url, ["notification.*"])
    await emit(workspace, "notification.created")
    await receiver.wait_for(4)

    async def failed() -> bool:
        return (await delivery_of(client, workspace, key, endpoint["id"]))[0]["status"] == "failed"

    await wait_until(failed, what="the delivery to fail")
    [delivery] = await delivery_of(client, workspace, key, endpoint["id"])
    assert delivery["failureReason"] == "exhausted" and delivery["attemptCount"] == 4
    data = (await client.get(f"/api/v1/webhook-endpoints/{endpoint['id']}", headers=workspace.headers(key))).json()[
        "data"
    ]
    assert data["enabled"] is True and data["consecutiveFailures"] == 1 and data["failingSince"] is not None

    # The streak began five days and a minute ago: the next failed attempt disables the endpoint.
    await db.execute(
        "UPDATE webhook_endpoints SET failing_since = now() - interval '5 days 1 minute' WHERE id = $1",
        endpoint["id"],
    )
    await emit(workspace, "notification.created")
    await receiver.wait_for(5)

    async def disabled() -> bool:
        response = await client.get(f"/api/v1/webhook-endpoints/{endpoint['id']}", headers=workspace.headers(key))
        return response.json()["data"]["enabled"] is False

    await wait_until(disabled, what="the failing endpoint to be disabled")
    data = (await client.get(f"/api/v1/webhook-endpoints/{endpoint['id']}", headers=workspace.headers(key))).json()[
        "data"
    ]
    assert data["disabledReason"] == "failing"

    async def second_failed() -> bool:
        deliveries = await delivery_of(client, workspace, key, endpoint["id"])
        return deliveries[0]["status"] == "failed"

    await wait_until(second_failed, what="the pending delivery to stop")
    latest = (await delivery_of(client, workspace, key, endpoint["id"]))[0]
    assert latest["failureReason"] == "endpoint_disabled" and latest["attemptCount"] == 1
    assert len(receiver.requests) == 5
