"""Endpoint management over REST: validation, tenancy, secrets and rotation, test events, redelivery."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from groundwork.domain.errors import ValidationFailed
from groundwork.persistence import db
from groundwork.persistence.repositories.platform import outbox
from groundwork.platform.outbox.relay import OutboxRelay
from groundwork.worker import outbox_relay
from tests.conftest import Workspace, idem
from tests.integration.webhooks.conftest import Receiver, create_endpoint, delivery_of, emit, wait_until

BASE = "/api/v1/webhook-endpoints"


async def test_create_shows_the_secret_once_and_reads_never_show_it(
    client: httpx.AsyncClient, workspace: Workspace
) -> None:
    key = await workspace.key(admin=True)
    created = await create_endpoint(
        client,
        workspace,
        key,
        "https://hooks.example.com/groundwork",
        ["work_item_enhancement.*", "notification.created", "notification.created"],
        description="CI bot",
    )
    assert created["id"].startswith("whe_") and created["secret"].startswith("whsec_")
    assert created["eventTypes"] == ["work_item_enhancement.*", "notification.created"]  # duplicates dropped
    assert created["enabled"] is True and created["description"] == "CI bot"
    assert created["createdAt"].endswith("Z")
    one = await client.get(f"{BASE}/{created['id']}", headers=workspace.headers(key))
    assert one.status_code == 200 and "secret" not in one.json()["data"]
    listing = await client.get(BASE, headers=workspace.headers(key))
    assert listing.json()["page"] == {"nextCursor": None, "hasMore": False, "next_cursor": None, "has_more": False}
    assert [e["id"] for e in listing.json()["data"]] == [created["id"]]
    assert created["secret"] not in listing.text


@pytest.mark.parametrize(
    ("body", "status", "path"),
    [
        ({"url": "ftp://example.com/x", "event_types": ["notification.*"]}, 422, "url"),
        ({"url": "not a url", "event_types": ["notification.*"]}, 422, "url"),
        ({"url": "https://user:pw@example.com/x", "event_types": ["notification.*"]}, 422, "url"),
        ({"url": "https://example.com/" + "x" * 2100, "event_types": ["notification.*"]}, 422, "url"),
        ({"url": "https://example.com/x", "event_types": []}, 422, "event_types"),
        ({"url": "https://example.com/x", "event_types": ["notification.deleted"]}, 422, "event_types[0]"),
        ({"url": "https://example.com/x", "event_types": ["notification.*", "*"]}, 422, "event_types[1]"),
        ({"url": "https://example.com/x", "event_types": ["webhook.test"]}, 422, "event_types[0]"),
        ({"url": "https://example.com/x", "event_types": ["a"], "secret": "mine"}, 400, None),
        ({"url": "https://example.com/x", "event_types": "notification.*"}, 400, None),
        (
            {"url": "https://example.com/x", "event_types": ["notification.*"], "description": "d" * 501},
            422,
            None,
        ),
    ],
)
async def test_bad_endpoint_input_is_refused_with_a_clear_error(
    client: httpx.AsyncClient, workspace: Workspace, body: dict, status: int, path: str | None
) -> None:
    key = await workspace.key(admin=True)
    response = await client.post(BASE, json=body, headers=workspace.headers(key, **idem()))
    assert response.status_code == status, response.text
    problem = response.json()
    assert problem["code"] == ("validation_failed" if status == 422 else "invalid_request")
    if path:
        assert problem["errors"][0]["path"] == path


async def test_private_targets_are_refused_unless_allowed(database: str) -> None:
    from groundwork.services.webhooks.endpoints import check_url

    for url in (
        "http://127.0.0.1:8080/hook",
        "http://localhost/hook",
        "http://10.1.2.3/hook",
        "http://192.168.0.10/hook",
        "http://169.254.169.254/latest/meta-data",
        "http://[::1]/hook",
        "http://[::ffff:127.0.0.1]/hook",
        "http://0.0.0.0/hook",
    ):
        with pytest.raises(ValidationFailed) as refused:
            await check_url(url, allow_private=False)
        assert refused.value.errors[0].path == "url"
        await check_url(url, allow_private=True)
    await check_url("https://93.184.215.14/hook", allow_private=False)


async def test_scope_idempotency_and_tenancy(client: httpx.AsyncClient, workspace: Workspace) -> None:
    from groundwork.persistence.repositories.tenancy import workspaces as tenancy

    reader = await workspace.key("reader", ["work-items:read"])
    body = {"url": "https://example.com/x", "event_types": ["notification.*"]}
    denied = await client.post(BASE, json=body, headers=workspace.headers(reader, **idem()))
    assert denied.status_code == 403 and denied.json()["required_scope"] == "webhooks:manage"
    assert (await client.get(BASE, headers=workspace.headers(reader))).status_code == 403

    key = await workspace.key(admin=True)
    missing = await client.post(BASE, json=body, headers=workspace.headers(key))
    assert missing.status_code == 400 and missing.json()["code"] == "idempotency_key_required"
    headers = workspace.headers(key, **idem())
    first = await client.post(BASE, json=body, headers=headers)
    replay = await client.post(BASE, json=body, headers=headers)
    for _ in range(100):  # the first answer is stored just after it is sent: "in use" means retry
        if replay.status_code != 409:
            break
        assert replay.json()["code"] == "idempotency_key_in_use"
        await asyncio.sleep(0.05)
        replay = await client.post(BASE, json=body, headers=headers)
    assert replay.headers["Idempotent-Replayed"] == "true" and replay.json() == first.json()
    assert len((await client.get(BASE, headers=workspace.headers(key))).json()["data"]) == 1

    ws2 = await tenancy.create_workspace(f"{workspace.slug}-x", "Other")
    other = Workspace(ws2.id, ws2.slug)
    other_key = await other.key(admin=True)
    endpoint_id = first.json()["data"]["id"]
    for method, path in (
        ("GET", f"{BASE}/{endpoint_id}"),
        ("PATCH", f"{BASE}/{endpoint_id}"),
        ("DELETE", f"{BASE}/{endpoint_id}"),
        ("GET", f"{BASE}/{endpoint_id}/deliveries"),
        ("POST", f"{BASE}/{endpoint_id}/rotate-secret"),
        ("POST", f"{BASE}/{endpoint_id}/test"),
        ("GET", "/api/v1/webhook-deliveries/whd_01JD0000000000000000000000"),
        ("POST", "/api/v1/webhook-deliveries/whd_01JD0000000000000000000000/redeliver"),
    ):
        response = await client.request(
            method,
            path,
            json={} if method == "PATCH" else None,
            headers=other.headers(other_key, **idem()),
        )
        assert response.status_code == 404, (method, path, response.text)
        assert response.json()["code"] == "not_found"
    assert (await client.get(f"{BASE}/{endpoint_id}", headers=workspace.headers(key))).status_code == 200


async def test_patch_delete_and_list_pagination(client: httpx.AsyncClient, workspace: Workspace) -> None:
    key = await workspace.key(admin=True)
    ids = [
        (await create_endpoint(client, workspace, key, f"https://example.com/{i}", ["notification.*"]))["id"]
        for i in range(3)
    ]
    page1 = (await client.get(f"{BASE}?limit=2", headers=workspace.headers(key))).json()
    assert [e["id"] for e in page1["data"]] == ids[::-1][:2] and page1["page"]["hasMore"] is True
    page2 = (
        await client.get(f"{BASE}?limit=2&cursor={page1['page']['nextCursor']}", headers=workspace.headers(key))
    ).json()
    assert [e["id"] for e in page2["data"]] == [ids[0]] and page2["page"]["hasMore"] is False
    bad = await client.get(f"{BASE}?cursor=nope", headers=workspace.headers(key))
    assert bad.status_code == 400

    patched = await client.patch(
        f"{BASE}/{ids[0]}",
        json={"url": "https://example.org/new", "event_types": ["context_engine.*"], "description": "moved"},
        headers=workspace.headers(key),
    )
    assert patched.status_code == 200, patched.text
    data = patched.json()["data"]
    assert (data["url"], data["eventTypes"], data["description"]) == (
        "https://example.org/new",
        ["context_engine.*"],
        "moved",
    )
    bad_patch = await client.patch(f"{BASE}/{ids[0]}", json={"event_types": ["nope.*"]}, headers=workspace.headers(key))
    assert bad_patch.status_code == 422
    unknown_field = await client.patch(f"{BASE}/{ids[0]}", json={"secret": "x"}, headers=workspace.headers(key))
    assert unknown_field.status_code == 400
    assert (await client.delete(f"{BASE}/{ids[0]}", headers=workspace.headers(key))).status_code == 204
    assert (await client.delete(f"{BASE}/{ids[0]}", headers=workspace.headers(key))).status_code == 404
    assert (await client.get(f"{BASE}/{ids[0]}", headers=workspace.headers(key))).status_code == 404
    bad_filter = await client.get(f"{BASE}/{ids[1]}/deliveries?status=lost", headers=workspace.headers(key))
    assert bad_filter.status_code == 422 and bad_filter.json()["errors"][0]["path"] == "status"


async def test_test_event_goes_to_that_endpoint_only(
    client: httpx.AsyncClient,
    workspace: Workspace,
    worker: object,
    receivers: Callable[[], Awaitable[Receiver]],
) -> None:
    key = await workspace.key(admin=True)
    target, bystander = await receivers(), await receivers()
    endpoint = await create_endpoint(client, workspace, key, target.url, ["notification.created"])
    await create_endpoint(client, workspace, key, bystander.url, ["notification.*"])
    response = await client.post(f"{BASE}/{endpoint['id']}/test", headers=workspace.headers(key, **idem()))
    assert response.status_code == 202, response.text
    delivery = response.json()["data"]
    assert delivery["eventType"] == "webhook.test" and delivery["endpointId"] == endpoint["id"]
    [request] = await target.wait_for(1)
    event = Webhook(endpoint["secret"]).verify(request.body, request.headers)
    assert event["type"] == "webhook.test" and event["payload"]["endpoint_id"] == endpoint["id"]
    assert event["resource"] == {"type": "webhook_endpoint", "id": endpoint["id"]}
    assert event["actor"] == {"id": workspace.principals["admin"]}
    assert bystander.requests == []


async def test_redeliver_sends_the_same_event_again(
    client: httpx.AsyncClient,
    workspace: Workspace,
    relay: OutboxRelay,
    temporal_client: Any,
    receivers: Callable[[], Awaitable[Receiver]],
) -> None:
    key = await workspace.key(admin=True)
    receiver = await receivers()
    endpoint = await create_endpoint(client, workspace, key, receiver.url, ["work_item_enhancement.*"])
    event_id = await emit(workspace, "work_item_enhancement.applied", {"run_id": "wie_9"})
    await receiver.wait_for(1)

    async def finished() -> bool:
        return (await delivery_of(client, workspace, key, endpoint["id"]))[0]["status"] == "succeeded"

    await wait_until(finished, what="the first delivery")
    [delivery] = await delivery_of(client, workspace, key, endpoint["id"])
    response = await client.post(
        f"/api/v1/webhook-deliveries/{delivery['id']}/redeliver", headers=workspace.headers(key, **idem())
    )
    assert response.status_code == 202, response.text
    assert response.json()["data"]["redeliveries"] == 1
    first, second = await receiver.wait_for(2)
    assert first.headers["webhook-id"] == second.headers["webhook-id"] == event_id
    assert first.body == second.body
    Webhook(endpoint["secret"]).verify(second.body, second.headers)

    async def redelivered() -> bool:
        fetched = await client.get(f"/api/v1/webhook-deliveries/{delivery['id']}", headers=workspace.headers(key))
        return fetched.json()["data"]["status"] == "succeeded" and fetched.json()["data"]["attemptCount"] == 2

    await wait_until(redelivered, what="the redelivery to be recorded")
    data = (await client.get(f"/api/v1/webhook-deliveries/{delivery['id']}", headers=workspace.headers(key))).json()[
        "data"
    ]
    assert [(a["number"], a["redelivery"]) for a in data["attempts"]] == [(1, 0), (2, 1)]
    # Each generation is its own workflow: the redelivery's id is the first one's with `_r1`.
    first_id = delivery["temporal"]["workflowId"]
    assert data["temporal"]["workflowId"] == f"{first_id}_r1"
    for workflow_id in (first_id, f"{first_id}_r1"):
        runs = [w async for w in temporal_client.list_workflows(f"WorkflowId = '{workflow_id}'")]
        assert len(runs) == 1, workflow_id


async def test_redeliver_is_refused_while_a_delivery_is_still_retrying(
    client: httpx.AsyncClient,
    workspace: Workspace,
    worker: object,
    temporal_client: Any,
    webhook_settings: Any,
    receivers: Callable[[], Awaitable[Receiver]],
) -> None:
    import dataclasses

    key = await workspace.key(admin=True)
    receiver = await receivers()
    receiver.default_status = 503
    endpoint = await create_endpoint(client, workspace, key, receiver.url, ["notification.*"])
    slow = dataclasses.replace(webhook_settings, webhook_schedule=(0, 60))
    await emit(workspace, "notification.created")
    await outbox_relay(temporal_client, slow).run_once()
    await receiver.wait_for(1)

    async def attempted() -> bool:
        return (await delivery_of(client, workspace, key, endpoint["id"]))[0]["attemptCount"] == 1

    await wait_until(attempted, what="the first attempt to be recorded")
    [delivery] = await delivery_of(client, workspace, key, endpoint["id"])
    assert delivery["status"] == "pending" and delivery["nextAttemptAt"] is not None
    response = await client.post(
        f"/api/v1/webhook-deliveries/{delivery['id']}/redeliver", headers=workspace.headers(key, **idem())
    )
    assert response.status_code == 409 and response.json()["code"] == "delivery_in_progress"
    # Deleting the endpoint ends its deliveries; the sleeping workflow finds nothing left to send.
    assert (await client.delete(f"{BASE}/{endpoint['id']}", headers=workspace.headers(key))).status_code == 204


async def test_rotation_keeps_both_secrets_signing_for_the_overlap(
    client: httpx.AsyncClient,
    workspace: Workspace,
    relay: OutboxRelay,
    receivers: Callable[[], Awaitable[Receiver]],
) -> None:
    key = await workspace.key(admin=True)
    receiver = await receivers()
    endpoint = await create_endpoint(client, workspace, key, receiver.url, ["notification.*"])
    rotated = await client.post(f"{BASE}/{endpoint['id']}/rotate-secret", headers=workspace.headers(key, **idem()))
    assert rotated.status_code == 200, rotated.text
    new_secret = rotated.json()["data"]["secret"]
    assert new_secret.startswith("whsec_") and new_secret != endpoint["secret"]
    assert rotated.json()["data"]["previousSecretExpiresAt"] is not None

    await emit(workspace, "notification.created")
    [request] = await receiver.wait_for(1)
    assert len(request.headers["webhook-signature"].split(" ")) == 2
    Webhook(endpoint["secret"]).verify(request.body, request.headers)
    Webhook(new_secret).verify(request.body, request.headers)

    # After the overlap only the new secret signs.
    await db.execute(
        "UPDATE webhook_endpoints SET previous_secret_expires_at = now() - interval '1 second' WHERE id = $1",
        endpoint["id"],
    )
    await emit(workspace, "notification.created")
    _, later = await receiver.wait_for(2)
    Webhook(new_secret).verify(later.body, later.headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(endpoint["secret"]).verify(later.body, later.headers)


async def test_rotating_twice_keeps_every_secret_signing_for_its_own_overlap(
    client: httpx.AsyncClient,
    workspace: Workspace,
    relay: OutboxRelay,
    receivers: Callable[[], Awaitable[Receiver]],
) -> None:
    key = await workspace.key(admin=True)
    receiver = await receivers()
    endpoint = await create_endpoint(client, workspace, key, receiver.url, ["notification.*"])
    secrets = [endpoint["secret"]]
    for _ in range(2):
        rotated = await client.post(f"{BASE}/{endpoint['id']}/rotate-secret", headers=workspace.headers(key, **idem()))
        secrets.append(rotated.json()["data"]["secret"])
    await emit(workspace, "notification.created")
    [request] = await receiver.wait_for(1)
    assert len(request.headers["webhook-signature"].split(" ")) == 3
    for secret in secrets:
        Webhook(secret).verify(request.body, request.headers)


async def test_reads_never_produce_events(
    client: httpx.AsyncClient,
    workspace: Workspace,
    relay: OutboxRelay,
    receivers: Callable[[], Awaitable[Receiver]],
) -> None:
    key = await workspace.key(admin=True)
    receiver = await receivers()
    endpoint = await create_endpoint(client, workspace, key, receiver.url, ["notification.*"])
    await emit(workspace, "notification.created")
    await receiver.wait_for(1)
    [delivery] = await delivery_of(client, workspace, key, endpoint["id"])
    before = await outbox.events_for_workspace(workspace.id)
    for path in (
        BASE,
        f"{BASE}?limit=1",
        f"{BASE}/{endpoint['id']}",
        f"{BASE}/{endpoint['id']}/deliveries",
        f"{BASE}/{endpoint['id']}/deliveries?status=succeeded&event_type=notification.created",
        f"/api/v1/webhook-deliveries/{delivery['id']}",
    ):
        assert (await client.get(path, headers=workspace.headers(key))).status_code == 200
    await relay.run_once()
    assert await outbox.events_for_workspace(workspace.id) == before
    assert len(receiver.requests) == 1


async def test_unknown_ids_are_404(client: httpx.AsyncClient, workspace: Workspace) -> None:
    key = await workspace.key(admin=True)
    missing = f"whe_{uuid.uuid4().hex}"
    assert (await client.get(f"{BASE}/{missing}", headers=workspace.headers(key))).status_code == 404
    response = await client.post(f"{BASE}/{missing}/test", headers=workspace.headers(key, **idem()))
    assert response.status_code == 404
