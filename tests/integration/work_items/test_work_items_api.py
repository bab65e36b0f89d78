"""Canonical work items: shape, the version guard, change history and listing."""

from __future__ import annotations

import asyncio

import httpx

from groundwork.domain.work_items import FIELD_NAMES, parse_version
from tests.conftest import Workspace, idem


async def _create(client: httpx.AsyncClient, workspace: Workspace, key: str, **body: object) -> dict:
    payload = {"project_id": workspace.projects["ALPHA"], "title": "Add SSO login", **body}
    response = await client.post("/api/v1/work-items", json=payload, headers=workspace.headers(key, **idem()))
    assert response.status_code == 201, response.text
    return response.json()["data"]


async def test_created_item_has_the_canonical_shape(client: httpx.AsyncClient, workspace: Workspace) -> None:
    key = await workspace.key(admin=True)
    item = await _create(
        client,
        workspace,
        key,
        status="todo",
        sprint="S1",
        fields={"description": "Users sign in with SAML.", "estimate": 5},
    )
    assert item["key"] == "ALPHA-1" and item["projectId"] == workspace.projects["ALPHA"]
    assert list(item["fields"]) == list(FIELD_NAMES)
    assert item["fields"]["description"] == "Users sign in with SAML." and item["fields"]["estimate"] == 5
    assert item["fields"]["risks"] is None
    assert item["version"].endswith("Z") and len(item["version"]) == len("2026-11-22T01:27:24.123456Z")
    fetched = await client.get(f"/api/v1/work-items/{item['id']}", headers=workspace.headers(key))
    assert fetched.json()["data"] == item


async def test_patch_with_current_version_changes_fields_and_bumps_version(
    client: httpx.AsyncClient, workspace: Workspace
) -> None:
    key = await workspace.key(admin=True)
    item = await _create(client, workspace, key, fields={"description": "Old"})
    response = await client.patch(
        f"/api/v1/work-items/{item['id']}",
        json={
            "expected_version": item["version"],
            "fields": {"acceptance_criteria": "Given..."},
            "status": "todo",
        },
        headers=workspace.headers(key),
    )
    assert response.status_code == 200, response.text
    updated = response.json()["data"]
    assert updated["fields"]["description"] == "Old" and updated["fields"]["acceptance_criteria"] == "Given..."
    assert updated["status"] == "todo"
    assert parse_version(updated["version"]) > parse_version(item["version"])


async def test_patch_with_stale_version_is_409_and_changes_nothing(
    client: httpx.AsyncClient, workspace: Workspace
) -> None:
    key = await workspace.key(admin=True)
    item = await _create(client, workspace, key, fields={"description": "Original"})
    first = await client.patch(
        f"/api/v1/work-items/{item['id']}",
        json={"expected_version": item["version"], "title": "Renamed"},
        headers=workspace.headers(key),
    )
    assert first.status_code == 200
    stale = await client.patch(
        f"/api/v1/work-items/{item['id']}",
        json={"expected_version": item["version"], "fields": {"description": "Clobber"}},
        headers=workspace.headers(key),
    )
    assert stale.status_code == 409
    assert stale.json()["code"] == "version_conflict"
    assert stale.json()["current_version"] == first.json()["data"]["version"]
    now = (await client.get(f"/api/v1/work-items/{item['id']}", headers=workspace.headers(key))).json()["data"]
    assert now["fields"]["description"] == "Original" and now["title"] == "Renamed"
    assert now["version"] == first.json()["data"]["version"]


async def test_version_accepts_any_utc_spelling(client: httpx.AsyncClient, workspace: Workspace) -> None:
    key = await workspace.key(admin=True)
    item = await _create(client, workspace, key)
    spelled = item["version"].replace("Z", "+00:00")
    response = await client.patch(
        f"/api/v1/work-items/{item['id']}",
        json={"expected_version": spelled, "sprint": None},
        headers=workspace.headers(key),
    )
    assert response.status_code == 200
    bad = await client.patch(
        f"/api/v1/work-items/{item['id']}",
        json={"expected_version": "yesterday", "title": "x"},
        headers=workspace.headers(key),
    )
    assert bad.status_code == 422 and bad.json()["errors"][0]["path"] == "expected_version"


async def test_patch_without_expected_version_is_400(client: httpx.AsyncClient, workspace: Workspace) -> None:
    key = await workspace.key(admin=True)
    item = await _create(client, workspace, key)
    response = await client.patch(
        f"/api/v1/work-items/{item['id']}", json={"title": "x"}, headers=workspace.headers(key)
    )
    assert response.status_code == 400 and response.json()["code"] == "invalid_request"


async def test_concurrent_patches_with_one_version_exactly_one_wins(api_url: str, workspace: Workspace) -> None:
    key = await workspace.key(admin=True)
    async with httpx.AsyncClient(base_url=api_url) as client:
        item = await _create(client, workspace, key)
    clients = [httpx.AsyncClient(base_url=api_url) for _ in range(5)]
    try:
        responses = await asyncio.gather(
            *(
                c.patch(
                    f"/api/v1/work-items/{item['id']}",
                    json={"expected_version": item["version"], "title": f"T{i}"},
                    headers=workspace.headers(key),
                )
                for i, c in enumerate(clients)
            )
        )
    finally:
        await asyncio.gather(*(c.aclose() for c in clients))
    assert sorted(r.status_code for r in responses) == [200, 409, 409, 409, 409]


async def test_history_records_actor_source_and_changes(client: httpx.AsyncClient, workspace: Workspace) -> None:
    key = await workspace.key("maria", admin=True)
    item = await _create(client, workspace, key, fields={"description": "v1"})
    await client.patch(
        f"/api/v1/work-items/{item['id']}",
        json={"expected_version": item["version"], "fields": {"description": "v2"}},
        headers=workspace.headers(key),
    )
    history = (await client.get(f"/api/v1/work-items/{item['id']}/history", headers=workspace.headers(key))).json()
    created, changed = history["data"]
    assert created["source"] == "rest" and created["actorId"] == workspace.principals["maria"]
    assert changed["changes"] == {"description": {"from": "v1", "to": "v2"}}
    assert changed["versionBefore"] == item["version"]


async def test_list_is_newest_first_paginated_and_filtered(client: httpx.AsyncClient, workspace: Workspace) -> None:
    key = await workspace.key(admin=True)
    created = [
        await _create(client, workspace, key, title=f"Item {i}", status="todo" if i % 2 else "done") for i in range(5)
    ]
    seen: list[str] = []
    cursor = None
    while True:
        params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        page = (await client.get("/api/v1/work-items", params=params, headers=workspace.headers(key))).json()
        seen += [i["id"] for i in page["data"]]
        if not page["page"]["hasMore"]:
            assert page["page"]["nextCursor"] is None
            break
        cursor = page["page"]["nextCursor"]
    assert seen == [i["id"] for i in reversed(created)]
    todo = (await client.get("/api/v1/work-items", params={"status": "todo"}, headers=workspace.headers(key))).json()
    assert {i["title"] for i in todo["data"]} == {"Item 1", "Item 3"}


async def test_unknown_watcher_is_rejected(client: httpx.AsyncClient, workspace: Workspace) -> None:
    key = await workspace.key(admin=True)
    response = await client.post(
        "/api/v1/work-items",
        json={"project_id": workspace.projects["ALPHA"], "title": "x", "watchers": ["prn_nobody"]},
        headers=workspace.headers(key, **idem()),
    )
    assert response.status_code == 422 and response.json()["errors"][0]["path"] == "watchers"
