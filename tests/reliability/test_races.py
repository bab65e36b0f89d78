"""Races on the real stack: 20 callers at once, one outcome.

Each test fires its requests from 20 separate HTTP clients (20 connections) at one API, waits for
every answer, then checks what a user can see afterwards: who won, what the losers were told, and
that the effect (a version bump, a run, a workflow, an audit record, an event, a secret) exists once.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
from standardwebhooks import Webhook

from groundwork.persistence.repositories import outbox
from groundwork.services.outbox_relay import OutboxRelay
from tests.conftest import Workspace, idem
from tests.integration.enhancement.conftest import create_run
from tests.integration.notifications.conftest import People, command
from tests.integration.webhooks.conftest import Receiver, create_endpoint, emit

RACERS = 20
ALL_ACTIONS = [
    "requirements",
    "description",
    "design",
    "implementation_plan",
    "acceptance_criteria",
    "test_plan",
    "estimate",
    "risk_check",
]


@asynccontextmanager
async def clients(api_url: str, count: int = RACERS) -> AsyncIterator[list[httpx.AsyncClient]]:
    """`count` independent HTTP clients (one connection each), so the requests really overlap at the server."""
    opened = [httpx.AsyncClient(base_url=api_url, timeout=60) for _ in range(count)]
    try:
        yield opened
    finally:
        await asyncio.gather(*(c.aclose() for c in opened))


async def race(
    api_url: str, call: Callable[[httpx.AsyncClient, int], Awaitable[httpx.Response]]
) -> list[httpx.Response]:
    """Send RACERS calls at once, each on its own connection; every answer, in call order."""
    async with clients(api_url) as pool:
        return list(await asyncio.gather(*(call(c, n) for n, c in enumerate(pool))))


async def poll(check: Callable[[], Awaitable[Any]], *, timeout: float = 30.0) -> Any:
    """Poll `check` until it returns something truthy (bounded; tolerant of a loaded machine)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        value = await check()
        if value or asyncio.get_running_loop().time() > deadline:
            return value
        await asyncio.sleep(0.1)


async def test_twenty_concurrent_applies_with_one_version_one_wins_nineteen_get_target_version_mismatch(
    api_url: str, client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    key = await workspace.key("owner", admin=True)
    # Three runs over the same work item give 24 distinct eligible drafts: each racer applies its own.
    drafts: list[tuple[str, str]] = []
    for _ in range(3):
        run = (await create_run(client, workspace, key, work_item["id"], ALL_ACTIONS)).json()["data"]
        drafts += [(run["id"], d["id"]) for d in run["drafts"] if d["applyEligible"]]
    assert len(drafts) >= RACERS

    async def apply(http: httpx.AsyncClient, n: int) -> httpx.Response:
        run_id, draft_id = drafts[n]
        return await http.post(
            f"/api/v1/work-item-enhancements/{run_id}/apply",
            json={"draft_ids": [draft_id], "expected_target_version": work_item["version"], "confirm": True},
            headers=workspace.headers(key, **idem()),
        )

    answers = await race(api_url, apply)
    statuses = sorted(a.status_code for a in answers)
    assert statuses == [200] + [409] * (RACERS - 1), [a.text for a in answers]
    losers = [a.json() for a in answers if a.status_code == 409]
    assert {body["code"] for body in losers} == {"target_version_mismatch"}
    [winner] = [a.json()["data"] for a in answers if a.status_code == 200]

    item = (await client.get(f"/api/v1/work-items/{work_item['id']}", headers=workspace.headers(key))).json()["data"]
    assert item["version"] != work_item["version"]
    assert {body["current_version"] for body in losers} == {item["version"]}
    changed = [name for name, value in item["fields"].items() if value != work_item["fields"].get(name)]
    assert len(changed) == 1, changed  # one draft's field, written once
    history = (
        await client.get(f"/api/v1/work-items/{work_item['id']}/history", headers=workspace.headers(key))
    ).json()["data"]
    assert len(history) == 2, history  # created, then the one apply
    applied = [
        e
        for e in await outbox.events_for_workspace(workspace.id)
        if e["type"] == "work_item_enhancement.applied" and e["payload"]["target_id"] == work_item["id"]
    ]
    assert len(applied) == 1 and applied[0]["payload"]["run_id"] == winner["id"]


async def test_twenty_concurrent_creates_with_one_idempotency_key_make_one_run_and_one_workflow(
    api_url: str,
    client: httpx.AsyncClient,
    workspace: Workspace,
    work_item: dict[str, Any],
    worker: Any,
    temporal_client: Any,
) -> None:
    key = await workspace.key("owner", admin=True)
    headers = workspace.headers(key, **{"Idempotency-Key": f"race-{uuid.uuid4().hex}"})
    body = {"target": {"type": "work_item", "id": work_item["id"]}, "actions": ["estimate"], "confirm": True}

    async def create(http: httpx.AsyncClient, n: int) -> httpx.Response:
        return await http.post("/api/v1/work-item-enhancements?wait=20", json=body, headers=headers)

    answers = await race(api_url, create)
    done = [a for a in answers if a.status_code in (201, 202)]
    busy = [a for a in answers if a.status_code == 409]
    assert len(done) + len(busy) == RACERS, [a.text for a in answers]
    assert {a.json()["code"] for a in busy} <= {"idempotency_key_in_use"}
    assert len([a for a in done if a.headers.get("idempotent-replayed") != "true"]) == 1
    run_ids = {a.json()["data"]["id"] for a in done}
    assert len(run_ids) == 1
    # The client retries until the one answer is stored: it is replayed, byte for byte, never a second run.
    replay = await client.post("/api/v1/work-item-enhancements?wait=20", json=body, headers=headers)
    assert replay.status_code == 201 and replay.headers["idempotent-replayed"] == "true"
    assert replay.json()["data"]["id"] in run_ids

    listed = (
        await client.get(
            "/api/v1/work-item-enhancements", params={"target_id": work_item["id"]}, headers=workspace.headers(key)
        )
    ).json()["data"]
    assert [r["id"] for r in listed] == list(run_ids)
    query = f"GroundworkTarget = '{work_item['id']}' AND WorkflowType = 'EnhancementRunWorkflow'"

    async def counted() -> int:
        return int((await temporal_client.count_workflows(query)).count)

    assert await poll(counted) == 1
    workflows = [w.id async for w in temporal_client.list_workflows(query)]
    assert workflows == list(run_ids)


async def test_twenty_concurrent_acknowledges_bump_the_version_once_with_one_audit_record_and_one_event(
    api_url: str, client: httpx.AsyncClient, people: People, notify: Callable[..., Awaitable[dict[str, Any]]]
) -> None:
    created = await notify()
    assert (await command(client, people, people.bob, created["id"], "read", expected_version=1)).status_code == 200

    async def acknowledge(http: httpx.AsyncClient, n: int) -> httpx.Response:
        return await command(
            http,
            people,
            people.bob,
            created["id"],
            "acknowledge",
            expected_version=2,
            reason=f"racer {n}",
            confirm=True,
        )

    answers = await race(api_url, acknowledge)
    assert sorted(a.status_code for a in answers) == [200] + [409] * (RACERS - 1), [a.text for a in answers]
    losers = [a.json() for a in answers if a.status_code == 409]
    assert {body["code"] for body in losers} == {"version_conflict"}
    assert {body["current_version"] for body in losers} == {3}
    [winner] = [a.json()["data"] for a in answers if a.status_code == 200]
    assert (winner["status"], winner["version"]) == ("acknowledged", 3)

    detail = (await client.get(f"/api/v1/notifications/{created['id']}", headers=people.headers(people.bob))).json()[
        "data"
    ]
    assert (detail["status"], detail["version"]) == ("acknowledged", 3)
    moves = [h for h in detail["history"] if h["to"] == "acknowledged"]
    assert len(detail["history"]) == 2 and len(moves) == 1, detail["history"]
    assert moves[0]["operationId"] == winner["operation_id"]
    events = [
        e["type"] for e in await outbox.events_for_workspace(people.workspace.id) if e["resource_id"] == created["id"]
    ]
    assert events.count("notification.acknowledged") == 1, events


async def test_concurrent_secret_rotations_lose_no_secret_within_its_overlap(
    api_url: str,
    client: httpx.AsyncClient,
    workspace: Workspace,
    relay: OutboxRelay,
    receivers: Callable[[], Awaitable[Receiver]],
) -> None:
    key = await workspace.key(admin=True)
    receiver = await receivers()
    endpoint = await create_endpoint(client, workspace, key, receiver.url, ["notification.*"])
    url = f"/api/v1/webhook-endpoints/{endpoint['id']}/rotate-secret"

    async def rotate(http: httpx.AsyncClient, n: int) -> httpx.Response:
        return await http.post(url, headers=workspace.headers(key, **idem()))

    answers = await race(api_url, rotate)
    assert [a.status_code for a in answers] == [200] * RACERS, [a.text for a in answers]
    issued = [endpoint["secret"]] + [a.json()["data"]["secret"] for a in answers]
    assert len(set(issued)) == RACERS + 1

    # One delivery after the storm: every secret that was current at some point still verifies it.
    await emit(workspace, "notification.created")
    [request] = await receiver.wait_for(1, timeout=30)
    assert len(request.headers["webhook-signature"].split(" ")) == RACERS + 1
    for secret in issued:
        Webhook(secret).verify(request.body, request.headers)
