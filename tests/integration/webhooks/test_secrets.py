"""Signing secrets at rest: sealed under GROUNDWORK_SECRET_KEY, in endpoint rows and in replayable answers."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable

import httpx
from standardwebhooks import Webhook

from groundwork.config import Settings
from groundwork.persistence import db
from groundwork.platform.outbox.relay import OutboxRelay
from groundwork.platform.secrets.keyring import KeyRing
from groundwork.services.webhooks.secrets import open_webhook_secret
from tests.conftest import Workspace, idem, serving
from tests.integration.webhooks.conftest import Receiver, create_endpoint, delivery_of, emit

BASE = "/api/v1/webhook-endpoints"


def groundwork(dsn: str, *args: str, secret_key: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DATABASE_URL": dsn}
    if secret_key is not None:
        env["GROUNDWORK_SECRET_KEY"] = secret_key
    return subprocess.run(
        [sys.executable, "-m", "groundwork.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


async def _dump(workspace: Workspace) -> str:
    """Everything the database holds about the workspace's endpoints and stored answers, as text."""
    endpoints = await db.fetch(
        "SELECT row_to_json(e)::text AS row FROM webhook_endpoints e WHERE workspace_id = $1", workspace.id
    )
    answers = await db.fetch(
        "SELECT encode(i.response_body, 'escape') AS body, i.response_headers::text AS headers FROM idempotency_keys i"
        " JOIN api_keys k ON k.id = i.api_key_id JOIN principals p ON p.id = k.principal_id WHERE p.workspace_id = $1",
        workspace.id,
    )
    return "\n".join([*(r["row"] for r in endpoints), *(f"{r['body']} {r['headers']}" for r in answers)])


async def test_a_database_dump_holds_no_usable_signing_secret(
    client: httpx.AsyncClient,
    workspace: Workspace,
    relay: OutboxRelay,
    receivers: Callable[[], Awaitable[Receiver]],
) -> None:
    key = await workspace.key(admin=True)
    receiver = await receivers()
    create_key = idem()
    created = await client.post(
        BASE,
        json={"url": receiver.url, "event_types": ["notification.*"]},
        headers=workspace.headers(key, **create_key),
    )
    assert created.status_code == 201, created.text
    endpoint = created.json()["data"]
    secrets = [endpoint["secret"]]
    for _ in range(2):  # current, previous and an older one all live in the row
        rotated = await client.post(f"{BASE}/{endpoint['id']}/rotate-secret", headers=workspace.headers(key, **idem()))
        secrets.append(rotated.json()["data"]["secret"])

    dump = await _dump(workspace)
    assert "whsec_" not in dump and "gwsealed1:" in dump
    for secret in secrets:
        assert secret.removeprefix("whsec_") not in dump

    # The sealed answer replays byte for byte, secret included.
    replayed = await client.post(
        BASE,
        json={"url": receiver.url, "event_types": ["notification.*"]},
        headers=workspace.headers(key, **create_key),
    )
    assert replayed.headers["idempotent-replayed"] == "true"
    assert replayed.content == created.content

    # And every live secret still signs.
    await emit(workspace, "notification.created")
    [request] = await receiver.wait_for(1)
    for secret in secrets:
        Webhook(secret).verify(request.body, request.headers)


async def test_a_secret_stored_before_sealing_keeps_signing_and_migrate_seals_it(
    client: httpx.AsyncClient,
    workspace: Workspace,
    database: str,
    relay: OutboxRelay,
    receivers: Callable[[], Awaitable[Receiver]],
) -> None:
    key = await workspace.key(admin=True)
    receiver = await receivers()
    endpoint = await create_endpoint(client, workspace, key, receiver.url, ["notification.*"])
    # As a row written before this release holds it: the secret as issued.
    await db.execute("UPDATE webhook_endpoints SET secret = $2 WHERE id = $1", endpoint["id"], endpoint["secret"])
    await emit(workspace, "notification.created")
    [request] = await receiver.wait_for(1)
    Webhook(endpoint["secret"]).verify(request.body, request.headers)

    done = groundwork(database, "migrate")
    assert done.returncode == 0, done.stderr
    assert "sealed the signing secrets of 1 webhook endpoint(s)" in done.stderr
    row = await db.fetchrow("SELECT secret FROM webhook_endpoints WHERE id = $1", endpoint["id"])
    assert row is not None and row["secret"].startswith("gwsealed1:")
    await emit(workspace, "notification.created")
    [_, again] = await receiver.wait_for(2)
    Webhook(endpoint["secret"]).verify(again.body, again.headers)
    assert "sealed" not in groundwork(database, "migrate").stderr  # nothing left to seal


async def test_reseal_moves_every_secret_under_a_new_first_key(
    client: httpx.AsyncClient, workspace: Workspace, database: str, settings: Settings
) -> None:
    key = await workspace.key(admin=True)
    endpoint = await create_endpoint(client, workspace, key, "https://hooks.example.com/gw", ["notification.*"])
    old = os.environ["GROUNDWORK_SECRET_KEY"]
    new = KeyRing.generate_text()
    try:
        done = groundwork(database, "secrets", "reseal", secret_key=f"{new},{old}")
        assert done.returncode == 0, done.stderr
        assert "resealed under the current key" in done.stderr
        row = await db.fetchrow("SELECT secret FROM webhook_endpoints WHERE id = $1", endpoint["id"])
        assert row is not None
        # Only the new key is needed now: the old one can leave the ring.
        assert open_webhook_secret(KeyRing.parse(new), endpoint["id"], row["secret"]) == endpoint["secret"]
    finally:
        # Put everything back under the session's key (the rest of the suite runs with it alone).
        restored = groundwork(database, "secrets", "reseal", secret_key=f"{old},{new}")
        assert restored.returncode == 0, restored.stderr


async def test_without_a_key_ring_no_secret_is_issued(settings: Settings, workspace: Workspace) -> None:
    key = await workspace.key(admin=True)
    async with (
        serving(dataclasses.replace(settings, secret_key=None)) as url,
        httpx.AsyncClient(base_url=url, timeout=30) as http,
    ):
        response = await http.post(
            BASE,
            json={"url": "https://hooks.example.com/gw", "event_types": ["notification.*"]},
            headers=workspace.headers(key, **idem()),
        )
    assert response.status_code == 503 and response.json()["code"] == "service_unavailable"
    assert "GROUNDWORK_SECRET_KEY" in response.json()["detail"]
    row = await db.fetchrow("SELECT count(*) AS n FROM webhook_endpoints WHERE workspace_id = $1", workspace.id)
    assert row is not None and row["n"] == 0


async def test_a_secret_no_key_opens_sends_nothing_and_the_delivery_waits_for_the_key(
    client: httpx.AsyncClient,
    workspace: Workspace,
    relay: OutboxRelay,
    receivers: Callable[[], Awaitable[Receiver]],
) -> None:
    from groundwork.services.webhooks.secrets import seal_webhook_secret

    key = await workspace.key(admin=True)
    receiver = await receivers()
    endpoint = await create_endpoint(client, workspace, key, receiver.url, ["notification.*"])
    good = await db.fetchrow("SELECT secret FROM webhook_endpoints WHERE id = $1", endpoint["id"])
    assert good is not None
    foreign = seal_webhook_secret(KeyRing.parse(KeyRing.generate_text()), endpoint["id"], endpoint["secret"])
    await db.execute("UPDATE webhook_endpoints SET secret = $2 WHERE id = $1", endpoint["id"], foreign)
    await emit(workspace, "notification.created")
    await asyncio.sleep(1.5)
    assert receiver.requests == []  # never unsigned, never signed wrongly
    [delivery] = await delivery_of(client, workspace, key, endpoint["id"])
    assert delivery["status"] == "pending" and delivery["attempts"] == []
    await db.execute("UPDATE webhook_endpoints SET secret = $2 WHERE id = $1", endpoint["id"], good["secret"])
    [request] = await receiver.wait_for(1, timeout=15)  # the attempt is retried until the key opens it
    Webhook(endpoint["secret"]).verify(request.body, request.headers)
