"""Idempotency-Key on state-changing POSTs: required, replayed byte for byte, bound to one request."""

from __future__ import annotations

import asyncio
import uuid

import httpx

from groundwork.persistence import db
from tests.conftest import Workspace


async def _count_items(workspace: Workspace) -> int:
    row = await db.fetchrow("SELECT count(*) AS n FROM work_items WHERE workspace_id = $1", workspace.id)
    assert row is not None
    return int(row["n"])


async def test_post_without_key_is_400_and_creates_nothing(client: httpx.AsyncClient, workspace: Workspace) -> None:
    key = await workspace.key(admin=True)
    response = await client.post(
        "/api/v1/work-items",
        json={"project_id": workspace.projects["ALPHA"], "title": "x"},
        headers=workspace.headers(key),
    )
    assert response.status_code == 400 and response.json()["code"] == "idempotency_key_required"
    assert await _count_items(workspace) == 0


async def test_replay_returns_the_same_bytes_and_creates_once(client: httpx.AsyncClient, workspace: Workspace) -> None:
    key = await workspace.key(admin=True)
    body = {"project_id": workspace.projects["ALPHA"], "title": "Once only"}
    headers = workspace.headers(key, **{"Idempotency-Key": "create-once"})
    first = await client.post("/api/v1/work-items", json=body, headers=headers)
    second = await client.post("/api/v1/work-items", json=body, headers=headers)
    assert first.status_code == second.status_code == 201
    assert second.content == first.content
    assert second.headers["idempotent-replayed"] == "true"
    assert "idempotent-replayed" not in first.headers
    assert await _count_items(workspace) == 1


async def test_same_key_with_a_different_body_is_422(client: httpx.AsyncClient, workspace: Workspace) -> None:
    key = await workspace.key(admin=True)
    headers = workspace.headers(key, **{"Idempotency-Key": "k1"})
    await client.post(
        "/api/v1/work-items", json={"project_id": workspace.projects["ALPHA"], "title": "A"}, headers=headers
    )
    other = await client.post(
        "/api/v1/work-items", json={"project_id": workspace.projects["ALPHA"], "title": "B"}, headers=headers
    )
    assert other.status_code == 422 and other.json()["code"] == "idempotency_key_reused"
    assert await _count_items(workspace) == 1


async def test_key_equivalent_json_bodies_are_the_same_request(client: httpx.AsyncClient, workspace: Workspace) -> None:
    key = await workspace.key(admin=True)
    headers = workspace.headers(key, **{"Idempotency-Key": "spacing", "content-type": "application/json"})
    project = workspace.projects["ALPHA"]
    first = await client.post(
        "/api/v1/work-items", content=f'{{"project_id":"{project}","title":"T"}}', headers=headers
    )
    second = await client.post(
        "/api/v1/work-items", content=f'{{ "title": "T",  "project_id": "{project}" }}', headers=headers
    )
    assert second.headers.get("idempotent-replayed") == "true" and second.content == first.content


async def test_keys_are_scoped_per_api_key(client: httpx.AsyncClient, workspace: Workspace) -> None:
    one = await workspace.key("one", admin=True)
    two = await workspace.key("two", admin=True)
    body = {"project_id": workspace.projects["ALPHA"], "title": "Shared key string"}
    a = await client.post("/api/v1/work-items", json=body, headers=workspace.headers(one, **{"Idempotency-Key": "s"}))
    b = await client.post("/api/v1/work-items", json=body, headers=workspace.headers(two, **{"Idempotency-Key": "s"}))
    assert a.status_code == b.status_code == 201 and a.json()["data"]["id"] != b.json()["data"]["id"]


async def test_concurrent_requests_with_one_key_produce_one_effect(api_url: str, workspace: Workspace) -> None:
    key = await workspace.key(admin=True)
    body = {"project_id": workspace.projects["ALPHA"], "title": "Raced"}
    headers = workspace.headers(key, **{"Idempotency-Key": f"race-{uuid.uuid4().hex}"})
    # Separate connections, so the requests really run side by side in the server.
    clients = [httpx.AsyncClient(base_url=api_url) for _ in range(8)]
    try:
        responses = await asyncio.gather(*(c.post("/api/v1/work-items", json=body, headers=headers) for c in clients))
    finally:
        await asyncio.gather(*(c.aclose() for c in clients))
    statuses = sorted(r.status_code for r in responses)
    assert set(statuses) <= {201, 409}, statuses
    assert statuses.count(201) >= 1
    created_ids = {r.json()["data"]["id"] for r in responses if r.status_code == 201}
    assert len(created_ids) == 1
    for conflict in (r for r in responses if r.status_code == 409):
        assert conflict.json()["code"] == "idempotency_key_in_use"
    assert await _count_items(workspace) == 1


async def test_in_flight_key_answers_409(client: httpx.AsyncClient, workspace: Workspace) -> None:
    from groundwork.domain.idempotency import fingerprint
    from groundwork.persistence.repositories.platform import idempotency

    key = await workspace.key(admin=True)
    from groundwork.services.tenancy.api_keys import list_keys

    [record] = await list_keys(workspace.slug)
    body = b'{"project_id":"p","title":"t"}'
    claim = await idempotency.claim(record.id, "held", fingerprint("POST", "/api/v1/work-items", body))
    assert claim.claimed
    response = await client.post(
        "/api/v1/work-items",
        content=body,
        headers=workspace.headers(key, **{"Idempotency-Key": "held", "content-type": "application/json"}),
    )
    assert response.status_code == 409 and response.json()["code"] == "idempotency_key_in_use"


async def test_server_errors_are_not_stored_so_the_key_can_be_retried(
    client: httpx.AsyncClient, workspace: Workspace, monkeypatch
) -> None:
    from groundwork.services.work_items import items as work_items

    key = await workspace.key(admin=True)
    headers = workspace.headers(key, **{"Idempotency-Key": "flaky"})
    body = {"project_id": workspace.projects["ALPHA"], "title": "Eventually"}
    original = work_items.create_work_item

    async def broken(*args, **kwargs):
        raise RuntimeError("database fell over")

    monkeypatch.setattr(work_items, "create_work_item", broken)
    failed = await client.post("/api/v1/work-items", json=body, headers=headers)
    assert failed.status_code == 500 and failed.json()["code"] == "internal_error"
    monkeypatch.setattr(work_items, "create_work_item", original)
    retried = await client.post("/api/v1/work-items", json=body, headers=headers)
    assert retried.status_code == 201 and "idempotent-replayed" not in retried.headers
    assert await _count_items(workspace) == 1


async def test_expired_records_are_purged_and_the_key_is_usable_again(
    client: httpx.AsyncClient, workspace: Workspace
) -> None:
    from groundwork.activities.maintenance import purge_expired_idempotency_keys

    key = await workspace.key(admin=True)
    headers = workspace.headers(key, **{"Idempotency-Key": "old"})
    body = {"project_id": workspace.projects["ALPHA"], "title": "Day one"}
    assert (await client.post("/api/v1/work-items", json=body, headers=headers)).status_code == 201
    await db.execute("UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = 'old'")
    assert await purge_expired_idempotency_keys() >= 1
    again = await client.post("/api/v1/work-items", json=body, headers=headers)
    assert again.status_code == 201 and "idempotent-replayed" not in again.headers
    assert await _count_items(workspace) == 2
