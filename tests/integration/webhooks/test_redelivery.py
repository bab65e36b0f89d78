"""Redelivery always ends in a new attempt, whatever still runs of the delivery's earlier generations."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from groundwork.config import Settings
from groundwork.domain.tenancy.principals import Principal
from groundwork.platform.outbox.relay import OutboxRelay
from groundwork.platform.temporal.client import TemporalConnection, release_connection, use_connection
from groundwork.services.webhooks import endpoints as service
from groundwork.worker import outbox_relay
from tests.conftest import Workspace, free_port, idem
from tests.integration.webhooks.conftest import Receiver, create_endpoint, delivery_of, emit, wait_until

BASE = "/api/v1/webhook-endpoints"


async def _sleeping_delivery(
    client: httpx.AsyncClient,
    workspace: Workspace,
    key: str,
    receiver: Receiver,
    temporal_client: Any,
    webhook_settings: Settings,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """An endpoint whose delivery failed once and whose workflow now sleeps a minute before retrying."""
    receiver.default_status = 503
    endpoint = await create_endpoint(client, workspace, key, receiver.url, ["notification.*"])
    await emit(workspace, "notification.created")
    slow = dataclasses.replace(webhook_settings, webhook_schedule=(0, 60))
    await outbox_relay(temporal_client, slow).run_once()
    await receiver.wait_for(1)

    async def attempted() -> bool:
        return (await delivery_of(client, workspace, key, endpoint["id"]))[0]["attemptCount"] == 1

    await wait_until(attempted, what="the first attempt to be recorded")
    [delivery] = await delivery_of(client, workspace, key, endpoint["id"])
    assert delivery["status"] == "pending"
    return endpoint, delivery


async def _disable_then_enable(client: httpx.AsyncClient, workspace: Workspace, key: str, endpoint_id: str) -> None:
    for enabled in (False, True):
        patched = await client.patch(f"{BASE}/{endpoint_id}", json={"enabled": enabled}, headers=workspace.headers(key))
        assert patched.status_code == 200, patched.text


async def test_a_redelivery_whose_start_failed_is_started_by_the_sweep_not_lost_to_the_sleeping_run(
    client: httpx.AsyncClient,
    workspace: Workspace,
    relay: OutboxRelay,
    temporal_client: Any,
    webhook_settings: Settings,
    settings: Settings,
    receivers: Callable[[], Awaitable[Receiver]],
) -> None:
    key = await workspace.key(admin=True)
    receiver = await receivers()
    endpoint, delivery = await _sleeping_delivery(client, workspace, key, receiver, temporal_client, webhook_settings)
    # Disabling fails the pending delivery at once; its workflow keeps sleeping towards its next slot.
    await _disable_then_enable(client, workspace, key, endpoint["id"])
    failed = (await client.get(f"/api/v1/webhook-deliveries/{delivery['id']}", headers=workspace.headers(key))).json()
    assert failed["data"]["status"] == "failed" and failed["data"]["failureReason"] == "endpoint_disabled"

    # Redeliver while Temporal cannot be reached: the new generation is recorded, its workflow not started.
    receiver.default_status = 200
    unreachable = TemporalConnection(dataclasses.replace(settings, temporal_address=f"127.0.0.1:{free_port()}"))
    token = use_connection(unreachable)
    try:
        principal = Principal(workspace.principals["admin"], workspace.id, "admin", "user", True, "key", frozenset())
        reopened = await service.redeliver(principal, delivery["id"])
    finally:
        release_connection(token)
    assert reopened.status == "pending" and reopened.generation == 1

    # The relay's sweep starts it; the run of generation 0 still sleeping must not stand in for it.
    requests = await receiver.wait_for(2, timeout=15)
    assert requests[1].headers["webhook-id"] == requests[0].headers["webhook-id"]

    async def redelivered() -> bool:
        data = (
            await client.get(f"/api/v1/webhook-deliveries/{delivery['id']}", headers=workspace.headers(key))
        ).json()["data"]
        return bool(data["status"] == "succeeded")

    await wait_until(redelivered, what="the redelivery to succeed")
    data = (await client.get(f"/api/v1/webhook-deliveries/{delivery['id']}", headers=workspace.headers(key))).json()[
        "data"
    ]
    assert [(a["number"], a["redelivery"], a["statusCode"]) for a in data["attempts"]] == [(1, 0, 503), (2, 1, 200)]
    assert data["temporal"]["workflowId"].endswith("_r1")

    # And every further redelivery works too.
    again = await client.post(
        f"/api/v1/webhook-deliveries/{delivery['id']}/redeliver", headers=workspace.headers(key, **idem())
    )
    assert again.status_code == 202, again.text
    await receiver.wait_for(3)


async def test_redelivery_after_a_disable_during_a_sleep_sends_a_new_attempt_at_once(
    client: httpx.AsyncClient,
    workspace: Workspace,
    relay: OutboxRelay,
    temporal_client: Any,
    webhook_settings: Settings,
    receivers: Callable[[], Awaitable[Receiver]],
) -> None:
    key = await workspace.key(admin=True)
    receiver = await receivers()
    endpoint, delivery = await _sleeping_delivery(client, workspace, key, receiver, temporal_client, webhook_settings)
    await _disable_then_enable(client, workspace, key, endpoint["id"])
    receiver.default_status = 200
    for expected in (2, 3):  # redeliver twice: each one a new attempt
        response = await client.post(
            f"/api/v1/webhook-deliveries/{delivery['id']}/redeliver", headers=workspace.headers(key, **idem())
        )
        assert response.status_code == 202, response.text
        await receiver.wait_for(expected, timeout=15)

        async def settled() -> bool:
            got = await client.get(f"/api/v1/webhook-deliveries/{delivery['id']}", headers=workspace.headers(key))
            return bool(got.json()["data"]["status"] == "succeeded")

        await wait_until(settled, what="the redelivery to succeed")
    assert len(receiver.requests) == 3
