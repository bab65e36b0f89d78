"""A request whose change committed but whose answer was never stored (the API died in between): the
retry with the same Idempotency-Key gets the one result, and nothing is created or rotated twice."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from groundwork.persistence import db
from tests.conftest import Workspace, lose_the_answer


@dataclass(frozen=True)
class Case:
    """One state-changing POST: how to set it up, its path and body, and what to count afterwards."""

    path: Callable[[dict[str, Any]], str]
    body: Callable[[Workspace, dict[str, Any]], dict[str, Any]]
    count_sql: str  # $1: workspace id
    setup: Callable[[httpx.AsyncClient, Workspace, str], Awaitable[dict[str, Any]]] | None = None


async def _thread(client: httpx.AsyncClient, workspace: Workspace, key: str) -> dict[str, Any]:
    await workspace.key("maya", memberships={"ALPHA": "contributor"})
    other = workspace.principals["maya"]
    response = await client.post(
        "/api/v1/messages",
        json={"title": "Rotation", "participant_ids": [other], "body": "First."},
        headers=workspace.headers(key, **{"Idempotency-Key": uuid.uuid4().hex}),
    )
    assert response.status_code == 201, response.text
    return {"thread": response.json()["data"]["id"], "other": other}


async def _endpoint(client: httpx.AsyncClient, workspace: Workspace, key: str) -> dict[str, Any]:
    # A closed loopback port: a test event's attempts fail at once instead of waiting on DNS.
    response = await client.post(
        "/api/v1/webhook-endpoints",
        json={"url": "http://127.0.0.1:9/gw", "event_types": ["notification.*"]},
        headers=workspace.headers(key, **{"Idempotency-Key": uuid.uuid4().hex}),
    )
    assert response.status_code == 201, response.text
    return {"endpoint": response.json()["data"]["id"]}


async def _maya(client: httpx.AsyncClient, workspace: Workspace, key: str) -> dict[str, Any]:
    await workspace.key("maya", memberships={"ALPHA": "contributor"})
    return {"other": workspace.principals["maya"]}


CASES = {
    "work item": Case(
        path=lambda ids: "/api/v1/work-items",
        body=lambda ws, ids: {"project_id": ws.projects["ALPHA"], "title": "Rotate the PSP keys"},
        count_sql="SELECT count(*) AS n FROM work_items WHERE workspace_id = $1",
    ),
    "webhook endpoint": Case(
        path=lambda ids: "/api/v1/webhook-endpoints",
        body=lambda ws, ids: {"url": "https://hooks.example.com/gw", "event_types": ["notification.*"]},
        count_sql="SELECT count(*) AS n FROM webhook_endpoints WHERE workspace_id = $1",
    ),
    "thread": Case(
        path=lambda ids: "/api/v1/messages",
        body=lambda ws, ids: {"title": "Rotation", "participant_ids": [ids["other"]], "body": "Shall we?"},
        count_sql="SELECT count(*) AS n FROM message_threads WHERE workspace_id = $1",
        setup=_maya,
    ),
    "message": Case(
        path=lambda ids: f"/api/v1/messages/{ids['thread']}/messages",
        body=lambda ws, ids: {"body": "Tomorrow at nine."},
        count_sql="SELECT count(*) AS n FROM messages m JOIN message_threads t ON t.id = m.thread_id"
        " WHERE t.workspace_id = $1",
        setup=_thread,
    ),
    "connected app": Case(
        path=lambda ids: "/api/v1/connected-apps",
        body=lambda ws, ids: {
            "name": "Desk",
            "kind": "assistant",
            "direction": "read",
            "provenance": "desk",
            "conflict": "reject",
        },
        count_sql="SELECT count(*) AS n FROM connected_apps WHERE workspace_id = $1",
    ),
    "test event": Case(
        path=lambda ids: f"/api/v1/webhook-endpoints/{ids['endpoint']}/test",
        body=lambda ws, ids: {},
        count_sql="SELECT count(*) AS n FROM webhook_deliveries WHERE workspace_id = $1",
        setup=_endpoint,
    ),
    "secret rotation": Case(
        path=lambda ids: f"/api/v1/webhook-endpoints/{ids['endpoint']}/rotate-secret",
        body=lambda ws, ids: {},
        # Every rotation moves the replaced secret into the overlap: one rotation, one previous secret.
        count_sql="SELECT count(previous_secret) AS n FROM webhook_endpoints WHERE workspace_id = $1",
        setup=_endpoint,
    ),
}


async def _count(sql: str, workspace: Workspace) -> int:
    row = await db.fetchrow(sql, workspace.id)
    assert row is not None
    return int(row["n"])


@pytest.mark.parametrize("name", list(CASES))
async def test_a_retry_after_a_lost_answer_gets_the_one_result_and_changes_nothing_twice(
    client: httpx.AsyncClient, workspace: Workspace, name: str
) -> None:
    case = CASES[name]
    key = await workspace.key("admin", admin=True)
    ids = await case.setup(client, workspace, key) if case.setup is not None else {}
    idempotency_key = uuid.uuid4().hex
    headers = workspace.headers(key, **{"Idempotency-Key": idempotency_key})
    path, body = case.path(ids), case.body(workspace, ids)

    first = await client.post(path, json=body, headers=headers)
    assert first.status_code in (200, 201, 202), first.text
    before = await _count(case.count_sql, workspace)
    await lose_the_answer(idempotency_key)

    retried = await client.post(path, json=body, headers=headers)
    assert retried.status_code == first.status_code, retried.text
    assert "idempotent-replayed" not in retried.headers  # answered afresh, from what the first attempt did
    assert retried.json()["data"]["id"] == first.json()["data"]["id"]
    if "secret" in first.json()["data"]:  # the secret issued once is the secret answered again
        assert retried.json()["data"]["secret"] == first.json()["data"]["secret"]
    assert await _count(case.count_sql, workspace) == before
    # And the retry's answer is now stored: a third attempt is a byte-for-byte replay.
    third = await client.post(path, json=body, headers=headers)
    assert third.headers["idempotent-replayed"] == "true" and third.content == retried.content


async def test_a_new_request_under_an_expired_key_creates_afresh(
    client: httpx.AsyncClient, workspace: Workspace
) -> None:
    key = await workspace.key("admin", admin=True)
    idempotency_key = uuid.uuid4().hex
    headers = workspace.headers(key, **{"Idempotency-Key": idempotency_key})
    body = {"project_id": workspace.projects["ALPHA"], "title": "First"}
    first = await client.post("/api/v1/work-items", json=body, headers=headers)
    await db.execute(
        "UPDATE idempotency_keys SET expires_at = clock_timestamp() - interval '1 second' WHERE key = $1",
        idempotency_key,
    )
    again = await client.post("/api/v1/work-items", json=body, headers=headers)
    assert again.status_code == 201 and again.json()["data"]["id"] != first.json()["data"]["id"]


async def test_an_answer_that_cannot_be_stored_is_still_delivered_whole_and_a_retry_creates_nothing_twice(
    client: httpx.AsyncClient, workspace: Workspace
) -> None:
    key = await workspace.key("admin", admin=True)
    idempotency_key = uuid.uuid4().hex
    headers = workspace.headers(key, **{"Idempotency-Key": idempotency_key})
    body = {"project_id": workspace.projects["ALPHA"], "title": "Answered while the store failed"}
    # The database refuses to store this request's answer, as it does when it goes away right after the commit.
    function = f"refuse_answer_{idempotency_key}"
    await db.execute(
        f"CREATE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS"
        " $$ BEGIN RAISE EXCEPTION 'answers cannot be stored now'; END $$"
    )
    await db.execute(
        f"CREATE TRIGGER {function} BEFORE UPDATE ON idempotency_keys FOR EACH ROW"
        f" WHEN (NEW.key = '{idempotency_key}' AND NEW.response_status IS NOT NULL) EXECUTE FUNCTION {function}()"
    )
    try:
        first = await client.post("/api/v1/work-items", json=body, headers=headers)
    finally:
        await db.execute(f"DROP TRIGGER {function} ON idempotency_keys")
        await db.execute(f"DROP FUNCTION {function}()")

    # The client got the whole answer (the connection was not cut after the status line) ...
    assert first.status_code == 201, first.text
    created = first.json()["data"]
    assert created["title"] == body["title"]
    stored = await db.fetchrow("SELECT response_status FROM idempotency_keys WHERE key = $1", idempotency_key)
    assert stored is not None and stored["response_status"] is None  # ... though nothing was stored
    before = await _count("SELECT count(*) AS n FROM work_items WHERE workspace_id = $1", workspace)

    # Once the claim is abandoned, the retry answers the one work item instead of creating a second.
    await lose_the_answer(idempotency_key)
    retried = await client.post("/api/v1/work-items", json=body, headers=headers)
    assert retried.status_code == 201 and retried.json()["data"]["id"] == created["id"]
    assert await _count("SELECT count(*) AS n FROM work_items WHERE workspace_id = $1", workspace) == before
