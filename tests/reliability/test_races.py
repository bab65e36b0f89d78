"""Races on the real stack: 20 callers at once, one outcome.

Each test fires its requests from 20 separate HTTP clients (20 connections) at one API, waits for
every answer, then checks what a user can see afterwards: who won, what the losers were told, and
that the effect (a version bump, a run, a workflow, an audit record, an event, a secret) exists once.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
from standardwebhooks import Webhook

from groundwork.persistence.repositories.platform import outbox
from tests.conftest import Workspace, idem, mcp_session, tool_json
from tests.integration.enhancement.conftest import create_run
from tests.integration.notifications.conftest import People, command
from tests.integration.webhooks.conftest import Receiver, create_endpoint

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


async def eligible_drafts(
    client: httpx.AsyncClient, workspace: Workspace, key: str, work_item_id: str
) -> list[tuple[str, str]]:
    """(run id, draft id) of RACERS eligible drafts, one run each over the same work item."""
    drafts: list[tuple[str, str]] = []
    for _ in range(RACERS):
        run = (await create_run(client, workspace, key, work_item_id, ["estimate"])).json()["data"]
        drafts += [(run["id"], d["id"]) for d in run["drafts"] if d["applyEligible"]]
    assert len(drafts) == RACERS
    return drafts


async def test_twenty_concurrent_applies_with_one_version_one_wins_nineteen_get_target_version_mismatch(
    api_url: str, client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    key = await workspace.key("owner", admin=True)
    drafts = await eligible_drafts(client, workspace, key, work_item["id"])

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
        if e.type == "work_item_enhancement.applied" and e.payload["target_id"] == work_item["id"]
    ]
    assert len(applied) == 1 and applied[0].payload["run_id"] == winner["id"]


async def test_twenty_applies_over_rest_graphql_and_mcp_at_once_change_the_work_item_once(
    api_url: str, client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    """The one version guard holds across transports: 12 REST, 4 GraphQL and 4 MCP applies race."""
    key = await workspace.key("owner", admin=True)
    drafts = await eligible_drafts(client, workspace, key, work_item["id"])
    version = work_item["version"]
    mutation = """mutation ($input: ApplyWorkItemEnhancementDraftsInput!) {
      applyWorkItemEnhancementDrafts(input: $input) { ok errors { code } run { id } } }"""

    async def over_rest(http: httpx.AsyncClient, run_id: str, draft_id: str) -> tuple[str, str | None]:
        answer = await http.post(
            f"/api/v1/work-item-enhancements/{run_id}/apply",
            json={"draft_ids": [draft_id], "expected_target_version": version, "confirm": True},
            headers=workspace.headers(key, **idem()),
        )
        if answer.status_code == 200:
            return "won", run_id
        assert answer.status_code == 409, answer.text
        return answer.json()["code"], None

    async def over_graphql(http: httpx.AsyncClient, run_id: str, draft_id: str) -> tuple[str, str | None]:
        input_ = {
            "runId": run_id,
            "draftIds": [draft_id],
            "expectedTargetVersion": version,
            "confirm": True,
            "idempotencyKey": uuid.uuid4().hex,
        }
        answer = await http.post(
            "/graphql", json={"query": mutation, "variables": {"input": input_}}, headers=workspace.headers(key)
        )
        payload = answer.json()["data"]["applyWorkItemEnhancementDrafts"]
        return ("won", run_id) if payload["ok"] else (payload["errors"][0]["code"], None)

    async def over_mcp(run_id: str, draft_id: str) -> tuple[str, str | None]:
        async with mcp_session(api_url, key) as session:
            result = await session.call_tool(
                "apply_drafts",
                {
                    "run_id": run_id,
                    "draft_ids": [draft_id],
                    "expected_target_version": version,
                    "confirm": True,
                    "idempotency_key": uuid.uuid4().hex,
                },
            )
        if not result.is_error:
            return "won", run_id
        text = result.content[0].text
        return json.loads(text[text.index("{") :])["code"], None

    async with clients(api_url, 16) as pool:
        outcomes = await asyncio.gather(
            *(over_rest(http, *drafts[n]) for n, http in enumerate(pool[:12])),
            *(over_graphql(http, *drafts[12 + n]) for n, http in enumerate(pool[12:])),
            *(over_mcp(*drafts[16 + n]) for n in range(4)),
        )
    assert sorted(outcome for outcome, _ in outcomes) == ["target_version_mismatch"] * (RACERS - 1) + ["won"], outcomes
    [winner] = [run_id for outcome, run_id in outcomes if outcome == "won"]
    item = (await client.get(f"/api/v1/work-items/{work_item['id']}", headers=workspace.headers(key))).json()["data"]
    changed = [name for name, value in item["fields"].items() if value != work_item["fields"].get(name)]
    assert len(changed) == 1, changed
    applied = [
        e
        for e in await outbox.events_for_workspace(workspace.id)
        if e.type == "work_item_enhancement.applied" and e.payload["target_id"] == work_item["id"]
    ]
    assert len(applied) == 1 and applied[0].payload["run_id"] == winner


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
    events = [e.type for e in await outbox.events_for_workspace(people.workspace.id) if e.resource_id == created["id"]]
    assert events.count("notification.acknowledged") == 1, events


async def test_twenty_acknowledges_over_rest_graphql_and_mcp_at_once_bump_the_version_once(
    api_url: str, client: httpx.AsyncClient, people: People, notify: Callable[..., Awaitable[dict[str, Any]]]
) -> None:
    """The one lifecycle rule holds across transports: REST commands and GraphQL and MCP proposal applies race."""
    created = await notify()
    assert (await command(client, people, people.bob, created["id"], "read", expected_version=1)).status_code == 200
    bob = people.headers(people.bob)
    draft = (
        """mutation ($input: DraftNotificationChangeInput!) { draftNotificationChange(input: $input) { id valid } }"""
    )
    apply = """mutation ($input: ApplyNotificationChangeInput!) {
      applyNotificationChange(input: $input) { ok notification { version } operation { id } errors { code } } }"""
    proposals = []
    for _ in range(10):  # each GraphQL or MCP racer applies a proposal of its own, drafted at version 2
        input_ = {"notificationId": created["id"], "requestedOutcome": "acknowledged", "expectedVersion": 2}
        made = await client.post("/graphql", json={"query": draft, "variables": {"input": input_}}, headers=bob)
        assert made.json()["data"]["draftNotificationChange"]["valid"] is True, made.text
        proposals.append(made.json()["data"]["draftNotificationChange"]["id"])

    async def over_rest(http: httpx.AsyncClient) -> tuple[str, str | None]:
        answer = await command(http, people, people.bob, created["id"], "acknowledge", expected_version=2, confirm=True)
        body = answer.json()
        return ("won", body["data"]["operation_id"]) if answer.status_code == 200 else (body["code"], None)

    async def over_graphql(http: httpx.AsyncClient, proposal: str) -> tuple[str, str | None]:
        input_ = {"proposalId": proposal, "expectedVersion": 2, "idempotencyKey": uuid.uuid4().hex, "confirm": True}
        answer = await http.post("/graphql", json={"query": apply, "variables": {"input": input_}}, headers=bob)
        payload = answer.json()["data"]["applyNotificationChange"]
        return ("won", payload["operation"]["id"]) if payload["ok"] else (payload["errors"][0]["code"], None)

    async def over_mcp(proposal: str) -> tuple[str, str | None]:
        async with mcp_session(api_url, people.bob.key) as session:
            result = await session.call_tool(
                "apply_notifications_messaging_change",
                {"proposal_id": proposal, "expected_version": 2, "idempotency_key": uuid.uuid4().hex, "confirm": True},
            )
        if not result.is_error:
            return "won", tool_json(result)["operation"]["id"]
        text = result.content[0].text
        return json.loads(text[text.index("{") :])["code"], None

    async with clients(api_url, 15) as pool:
        outcomes = await asyncio.gather(
            *(over_rest(http) for http in pool[:10]),
            *(over_graphql(http, proposal) for http, proposal in zip(pool[10:], proposals[:5], strict=True)),
            *(over_mcp(proposal) for proposal in proposals[5:]),
        )
    results = [outcome for outcome, _ in outcomes]
    assert sorted(results) == ["version_conflict"] * (RACERS - 1) + ["won"], outcomes
    [operation] = [op for outcome, op in outcomes if outcome == "won"]
    detail = (await client.get(f"/api/v1/notifications/{created['id']}", headers=bob)).json()["data"]
    assert (detail["status"], detail["version"], len(detail["history"])) == ("acknowledged", 3, 2)
    [move] = [h for h in detail["history"] if h["to"] == "acknowledged"]
    assert move["operationId"] == operation
    events = [e.type for e in await outbox.events_for_workspace(people.workspace.id) if e.resource_id == created["id"]]
    assert events.count("notification.acknowledged") == 1, events


async def test_concurrent_secret_rotations_lose_no_secret_within_its_overlap(
    api_url: str,
    client: httpx.AsyncClient,
    workspace: Workspace,
    worker: Any,
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

    # One delivery after the storm (the endpoint's test event, sent straight to it): every secret that was
    # current at some point still verifies it.
    sent = await client.post(
        f"/api/v1/webhook-endpoints/{endpoint['id']}/test", headers=workspace.headers(key, **idem())
    )
    assert sent.status_code == 202, sent.text
    # Late in a full session this one delivery has taken 16-18 s and once over 30 (alone: under a second);
    # the wait is for that latency, not part of what the test proves. The cause is being looked into.
    [request] = await receiver.wait_for(1, timeout=90)
    assert len(request.headers["webhook-signature"].split(" ")) == RACERS + 1
    for secret in issued:
        Webhook(secret).verify(request.body, request.headers)
