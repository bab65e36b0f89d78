"""GraphQL and MCP: drafts change nothing, applies need confirmation, the lifecycle holds, inboxes stay private."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest

from tests.conftest import mcp_session, tool_json
from tests.integration.notifications.conftest import People, command, start_thread

Notify = Callable[..., Awaitable[dict[str, Any]]]

DRAFT = """
mutation ($input: DraftNotificationChangeInput!) {
  draftNotificationChange(input: $input) {
    ok errors { code message }
    id notificationId command fromStatus toStatus expectedVersion valid
    validationErrors { code message path } conflicts exactCommand
  }
}
"""
APPLY = """
mutation ($input: ApplyNotificationChangeInput!) {
  applyNotificationChange(input: $input) {
    ok idempotencyReplayed auditReference
    notification { id status version history { via from: fromStatus to: toStatus auditReference } }
    operation { id kind command via notificationIds auditReferences }
    errors { code message details }
  }
}
"""
LIST = """
query ($filter: NotificationFilter, $pagination: PaginationInput) {
  notificationList(filter: $filter, pagination: $pagination) {
    totalCount unreadCount
    nodes { id status version allowedActions { id requiresConfirmation } source { kind externalId } }
    edges { cursor node { id } } pageInfo { hasNextPage endCursor }
  }
}
"""


async def _graphql(client: httpx.AsyncClient, key_headers: dict[str, str], query: str, **variables: Any) -> Any:
    response = await client.post("/graphql", json={"query": query, "variables": variables}, headers=key_headers)
    assert response.status_code == 200, response.text
    return response.json()


async def _state(client: httpx.AsyncClient, people: People, notification_id: str) -> tuple[str, int, int]:
    data = (await client.get(f"/api/v1/notifications/{notification_id}", headers=people.headers(people.bob))).json()[
        "data"
    ]
    return data["status"], data["version"], len(data["history"])


async def test_graphql_draft_changes_nothing_and_apply_runs_the_move_once(
    client: httpx.AsyncClient, people: People, notify: Notify
) -> None:
    created = await notify()
    headers = people.headers(people.bob)
    draft = (
        await _graphql(
            client,
            headers,
            DRAFT,
            input={"notificationId": created["id"], "requestedOutcome": "read", "expectedVersion": 1, "reason": "seen"},
        )
    )["data"]["draftNotificationChange"]
    assert draft["valid"] is True and draft["command"] == "read" and draft["conflicts"] == []
    assert draft["exactCommand"]["rest"]["path"] == f"/api/v1/notifications/{created['id']}/read"
    assert await _state(client, people, created["id"]) == ("unread", 1, 0)
    unconfirmed = (
        await _graphql(
            client,
            headers,
            APPLY,
            input={"proposalId": draft["id"], "expectedVersion": 1, "idempotencyKey": uuid.uuid4().hex},
        )
    )["data"]["applyNotificationChange"]
    assert unconfirmed["ok"] is False and unconfirmed["errors"][0]["code"] == "confirmation_required"
    assert await _state(client, people, created["id"]) == ("unread", 1, 0)
    key = uuid.uuid4().hex
    variables = {"proposalId": draft["id"], "expectedVersion": 1, "idempotencyKey": key, "confirm": True}
    applied = (await _graphql(client, headers, APPLY, input=variables))["data"]["applyNotificationChange"]
    assert applied["ok"] is True and applied["idempotencyReplayed"] is False
    assert (applied["notification"]["status"], applied["notification"]["version"]) == ("read", 2)
    assert applied["notification"]["history"][0]["via"] == "graphql"
    assert applied["auditReference"] == applied["notification"]["history"][0]["auditReference"]
    assert applied["operation"]["kind"] == "notification_command" and applied["operation"]["via"] == "graphql"
    replay = (await _graphql(client, headers, APPLY, input=variables))["data"]["applyNotificationChange"]
    assert replay["idempotencyReplayed"] is True and replay["auditReference"] == applied["auditReference"]
    assert await _state(client, people, created["id"]) == ("read", 2, 1)
    again = (await _graphql(client, headers, APPLY, input={**variables, "idempotencyKey": uuid.uuid4().hex}))["data"][
        "applyNotificationChange"
    ]
    assert again["ok"] is False and again["errors"][0]["code"] == "proposal_already_applied"


# Every (current status, requested outcome) pair: exactly the table's three moves are allowed.
_REACH = {
    "unread": [],
    "read": ["read"],
    "acknowledged": ["read", "acknowledge"],
    "dismissed": ["read", "acknowledge", "dismiss"],
}
_ALLOWED = {("unread", "read"), ("read", "acknowledged"), ("acknowledged", "dismissed")}
MATRIX = [
    (_REACH[status], outcome, (status, outcome) in _ALLOWED)
    for status in _REACH
    for outcome in ("read", "acknowledged", "dismissed")
]


@pytest.mark.parametrize(("moves", "outcome", "ok"), MATRIX)
async def test_graphql_apply_allows_exactly_the_table_s_moves(
    client: httpx.AsyncClient, people: People, notify: Notify, moves: list[str], outcome: str, ok: bool
) -> None:
    created = await notify()
    for version, name in enumerate(moves, start=1):
        assert (
            await command(client, people, people.bob, created["id"], name, expected_version=version, confirm=True)
        ).status_code == 200
    version = len(moves) + 1
    headers = people.headers(people.bob)
    draft = (
        await _graphql(
            client,
            headers,
            DRAFT,
            input={"notificationId": created["id"], "requestedOutcome": outcome, "expectedVersion": version},
        )
    )["data"]["draftNotificationChange"]
    assert draft["valid"] is ok
    if not ok:
        assert [c["code"] for c in draft["conflicts"]] == ["invalid_transition"]
    applied = (
        await _graphql(
            client,
            headers,
            APPLY,
            input={
                "proposalId": draft["id"],
                "expectedVersion": version,
                "idempotencyKey": uuid.uuid4().hex,
                "confirm": True,
            },
        )
    )["data"]["applyNotificationChange"]
    assert applied["ok"] is ok
    if ok:
        assert applied["notification"]["status"] == outcome and applied["notification"]["version"] == version + 1
    else:
        assert applied["errors"][0]["code"] == "invalid_transition"
        assert (await _state(client, people, created["id"]))[1] == version


@pytest.mark.parametrize(("moves", "outcome", "ok"), MATRIX)
async def test_mcp_apply_allows_exactly_the_table_s_moves(
    api_url: str, client: httpx.AsyncClient, people: People, notify: Notify, moves: list[str], outcome: str, ok: bool
) -> None:
    created = await notify()
    for version, name in enumerate(moves, start=1):
        assert (
            await command(client, people, people.bob, created["id"], name, expected_version=version, confirm=True)
        ).status_code == 200
    version = len(moves) + 1
    async with mcp_session(api_url, people.bob.key) as session:
        draft = tool_json(
            await session.call_tool(
                "draft_notifications_messaging_change",
                {"notification_id": created["id"], "requested_outcome": outcome, "expected_version": version},
            )
        )["data"]
        assert draft["valid"] is ok
        applied = await session.call_tool(
            "apply_notifications_messaging_change",
            {
                "proposal_id": draft["id"],
                "expected_version": version,
                "idempotency_key": uuid.uuid4().hex,
                "confirm": True,
            },
        )
    if ok:
        assert not applied.is_error
        result = tool_json(applied)["data"]
        assert (result["status"], result["version"]) == (outcome, version + 1)
        assert result["history"][-1]["via"] == "mcp"
    else:
        assert applied.is_error and '"invalid_transition"' in applied.content[0].text
        _, current, moves_recorded = await _state(client, people, created["id"])
        assert (current, moves_recorded) == (version, len(moves))


async def test_graphql_apply_with_a_stale_version_is_version_conflict(
    client: httpx.AsyncClient, people: People, notify: Notify
) -> None:
    created = await notify()
    headers = people.headers(people.bob)
    draft = (
        await _graphql(
            client,
            headers,
            DRAFT,
            input={"notificationId": created["id"], "requestedOutcome": "read", "expectedVersion": 1},
        )
    )["data"]["draftNotificationChange"]
    assert (await command(client, people, people.bob, created["id"], "read", expected_version=1)).status_code == 200
    stale = (
        await _graphql(
            client,
            headers,
            APPLY,
            input={
                "proposalId": draft["id"],
                "expectedVersion": 1,
                "idempotencyKey": uuid.uuid4().hex,
                "confirm": True,
            },
        )
    )["data"]["applyNotificationChange"]
    assert stale["ok"] is False and stale["errors"][0]["code"] == "version_conflict"
    assert stale["errors"][0]["details"]["current_version"] == 2


async def test_graphql_list_matches_rest_and_counts(client: httpx.AsyncClient, people: People, notify: Notify) -> None:
    made = [await notify(body=f"n{i}") for i in range(3)]
    result = (await _graphql(client, people.headers(people.bob), LIST, pagination={"first": 2}))["data"][
        "notificationList"
    ]
    assert result["totalCount"] == 3 and result["unreadCount"] == 3
    assert [n["id"] for n in result["nodes"]] == [made[2]["id"], made[1]["id"]]
    assert result["pageInfo"]["hasNextPage"] is True
    assert result["nodes"][0]["source"] == {"kind": "messages", "externalId": made[2]["source"]["externalId"]}
    after = (
        await _graphql(
            client, people.headers(people.bob), LIST, pagination={"first": 2, "after": result["pageInfo"]["endCursor"]}
        )
    )["data"]["notificationList"]
    assert [n["id"] for n in after["nodes"]] == [made[0]["id"]]


async def test_mcp_draft_changes_nothing_apply_needs_confirmation_and_runs_once(
    api_url: str, client: httpx.AsyncClient, people: People, notify: Notify
) -> None:
    created = await notify()
    assert (await command(client, people, people.bob, created["id"], "read", expected_version=1)).status_code == 200
    async with mcp_session(api_url, people.bob.key) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert tools["get_notifications_messaging"].annotations.read_only_hint is True
        assert tools["apply_notifications_messaging_change"].annotations.destructive_hint is True
        assert tools["draft_notifications_messaging_change"].annotations.destructive_hint is False
        read = tool_json(await session.call_tool("get_notifications_messaging", {"resource_id": created["id"]}))
        assert read["data"]["version"] == 2 and read["allowedActions"][0]["id"] == "acknowledge"
        assert read["provenance"]["source"]["kind"] == "messages"
        draft = tool_json(
            await session.call_tool(
                "draft_notifications_messaging_change",
                {"notification_id": created["id"], "requested_outcome": "acknowledged", "expected_version": 2},
            )
        )["data"]
        assert draft["valid"] is True and draft["exactCommand"]["rest"]["body"]["confirm"] is True
        assert await _state(client, people, created["id"]) == ("read", 2, 1)
        key = uuid.uuid4().hex
        refused = await session.call_tool(
            "apply_notifications_messaging_change",
            {"proposal_id": draft["id"], "expected_version": 2, "idempotency_key": key, "confirm": False},
        )
        assert refused.is_error and '"confirmation_required"' in refused.content[0].text
        assert await _state(client, people, created["id"]) == ("read", 2, 1)
        arguments = {
            "proposal_id": draft["id"],
            "expected_version": 2,
            "idempotency_key": uuid.uuid4().hex,
            "confirm": True,
        }
        applied = tool_json(await session.call_tool("apply_notifications_messaging_change", arguments))
        assert applied["data"]["status"] == "acknowledged" and applied["data"]["version"] == 3
        assert applied["auditReference"].startswith("aud_") and applied["operation"]["via"] == "mcp"
        replayed = tool_json(await session.call_tool("apply_notifications_messaging_change", arguments))
        assert replayed["idempotencyReplayed"] is True and replayed["auditReference"] == applied["auditReference"]
    assert await _state(client, people, created["id"]) == ("acknowledged", 3, 2)


async def test_mcp_forbidden_move_and_stale_version_change_nothing(
    api_url: str, client: httpx.AsyncClient, people: People, notify: Notify
) -> None:
    created = await notify()
    async with mcp_session(api_url, people.bob.key) as session:
        draft = tool_json(
            await session.call_tool(
                "draft_notifications_messaging_change",
                {"notification_id": created["id"], "requested_outcome": "dismissed", "expected_version": 1},
            )
        )["data"]
        assert draft["valid"] is False and draft["conflicts"][0]["code"] == "invalid_transition"
        forbidden = await session.call_tool(
            "apply_notifications_messaging_change",
            {"proposal_id": draft["id"], "expected_version": 1, "idempotency_key": uuid.uuid4().hex, "confirm": True},
        )
        assert forbidden.is_error and '"invalid_transition"' in forbidden.content[0].text
        stale_draft = tool_json(
            await session.call_tool(
                "draft_notifications_messaging_change",
                {"notification_id": created["id"], "requested_outcome": "read", "expected_version": 7},
            )
        )["data"]
        assert stale_draft["conflicts"][0] == {
            "code": "version_conflict",
            "message": "The notification is at version 1, not 7.",
            "currentVersion": 1,
            "expectedVersion": 7,
        }
        stale = await session.call_tool(
            "apply_notifications_messaging_change",
            {
                "proposal_id": stale_draft["id"],
                "expected_version": 7,
                "idempotency_key": uuid.uuid4().hex,
                "confirm": True,
            },
        )
        assert stale.is_error and '"version_conflict"' in stale.content[0].text
        inbox = tool_json(await session.call_tool("get_notifications_messaging", {"view": "inbox"}))
        assert inbox["unreadCount"] == 1 and inbox["data"][0]["status"] == "unread"
    assert await _state(client, people, created["id"]) == ("unread", 1, 0)


async def test_nobody_sees_another_principal_s_notifications_or_threads_it_is_not_in(
    api_url: str, client: httpx.AsyncClient, people: People, notify: Notify
) -> None:
    created = await notify()
    thread = (await client.get("/api/v1/messages", headers=people.headers(people.bob))).json()["data"][0]
    for outsider in (people.carol, people.dana):  # Dana is a workspace admin: no exception for inboxes
        headers = people.headers(outsider)
        assert (await client.get(f"/api/v1/notifications/{created['id']}", headers=headers)).status_code == 404
        assert (await command(client, people, outsider, created["id"], "read", expected_version=1)).status_code == 404
        assert (await client.get("/api/v1/notifications", headers=headers)).json()["data"] == []
        assert (await client.get(f"/api/v1/messages/{thread['id']}", headers=headers)).status_code == 404
        assert (await client.get("/api/v1/messages", headers=headers)).json()["data"] == []
        posted = await client.post(
            f"/api/v1/messages/{thread['id']}/messages",
            json={"body": "let me in"},
            headers={**headers, "Idempotency-Key": uuid.uuid4().hex},
        )
        assert posted.status_code == 404
        graph = await _graphql(client, headers, "query ($id: ID!) { notification(id: $id) { id } }", id=created["id"])
        assert graph["data"]["notification"] is None
        drafted = await _graphql(
            client,
            headers,
            DRAFT,
            input={"notificationId": created["id"], "requestedOutcome": "read", "expectedVersion": 1},
        )
        refused = drafted["data"]["draftNotificationChange"]
        assert (refused["ok"], refused["id"], [e["code"] for e in refused["errors"]]) == (False, None, ["not_found"])
        async with mcp_session(api_url, outsider.key) as session:
            for arguments in ({"resource_id": created["id"]}, {"resource_id": thread["id"]}):
                denied = await session.call_tool("get_notifications_messaging", arguments)
                assert denied.is_error and '"not_found"' in denied.content[0].text
            assert tool_json(await session.call_tool("get_notifications_messaging", {"view": "inbox"}))["data"] == []
    bob_proposal = (
        await _graphql(
            client,
            people.headers(people.bob),
            DRAFT,
            input={"notificationId": created["id"], "requestedOutcome": "read", "expectedVersion": 1},
        )
    )["data"]["draftNotificationChange"]
    hijack = (
        await _graphql(
            client,
            people.headers(people.dana),
            APPLY,
            input={
                "proposalId": bob_proposal["id"],
                "expectedVersion": 1,
                "idempotencyKey": uuid.uuid4().hex,
                "confirm": True,
            },
        )
    )["data"]["applyNotificationChange"]
    assert hijack["ok"] is False and hijack["errors"][0]["code"] == "not_found"
    assert await _state(client, people, created["id"]) == ("unread", 1, 0)


async def test_threads_list_get_post_and_read_for_participants(
    client: httpx.AsyncClient, people: People, notify: Notify
) -> None:
    thread = await start_thread(
        client,
        people,
        people.alice,
        [people.bob],
        "First",
        subject_ref={"type": "project", "id": people.workspace.projects["ALPHA"]},
    )
    assert thread["unreadCount"] == 0 and {p["name"] for p in thread["participants"]} == {"alice", "bob"}
    listed = (await client.get("/api/v1/messages", headers=people.headers(people.bob))).json()["data"]
    assert [(t["id"], t["unreadCount"]) for t in listed] == [(thread["id"], 1)]
    reply = await client.post(
        f"/api/v1/messages/{thread['id']}/messages",
        json={"body": "Second"},
        headers={**people.headers(people.bob), "Idempotency-Key": uuid.uuid4().hex},
    )
    assert reply.status_code == 201 and reply.json()["data"]["senderName"] == "bob"
    detail = (await client.get(f"/api/v1/messages/{thread['id']}", headers=people.headers(people.alice))).json()
    assert [m["body"] for m in detail["data"]["messages"]] == ["Second", "First"]
    assert detail["data"]["unreadCount"] == 1
    read = await client.post(
        f"/api/v1/messages/{thread['id']}/read", headers={**people.headers(people.alice), "Idempotency-Key": "r1"}
    )
    assert read.status_code == 200 and read.json()["data"]["unreadCount"] == 0


async def test_thread_participants_must_share_a_project_and_see_its_subject(
    client: httpx.AsyncClient, people: People
) -> None:
    headers = {**people.headers(people.alice), "Idempotency-Key": uuid.uuid4().hex}
    stranger = await client.post(
        "/api/v1/messages", json={"title": "t", "participant_ids": [people.carol.id], "body": "hi"}, headers=headers
    )
    assert stranger.status_code == 422 and stranger.json()["errors"][0]["path"] == "participant_ids[0]"
    unknown = await client.post(
        "/api/v1/messages",
        json={"title": "t", "participant_ids": ["prn_nobody"], "body": "hi"},
        headers={**people.headers(people.alice), "Idempotency-Key": uuid.uuid4().hex},
    )
    assert (
        unknown.status_code == 422 and unknown.json()["errors"][0]["message"] == stranger.json()["errors"][0]["message"]
    )
    invisible = await client.post(
        "/api/v1/messages",
        json={
            "title": "t",
            "participant_ids": [people.bob.id],
            "body": "hi",
            "subject_ref": {"type": "project", "id": people.workspace.projects["BETA"]},
        },
        headers={**people.headers(people.alice), "Idempotency-Key": uuid.uuid4().hex},
    )
    assert invisible.status_code == 404
    admin_to_carol = await client.post(
        "/api/v1/messages",
        json={
            "title": "t",
            "participant_ids": [people.carol.id, people.bob.id],
            "body": "hi",
            "subject_ref": {"type": "project", "id": people.workspace.projects["BETA"]},
        },
        headers={**people.headers(people.dana), "Idempotency-Key": uuid.uuid4().hex},
    )
    assert admin_to_carol.status_code == 422
    assert admin_to_carol.json()["errors"] == [
        {"path": "participant_ids[1]", "message": "cannot see the thread's subject"}
    ]


async def test_the_openapi_document_marks_the_surface_as_a_contract_v0_2_preview(client: httpx.AsyncClient) -> None:
    document = (await client.get("/schema/openapi.json")).json()
    [tag] = [t for t in document["tags"] if t["name"] == "notifications"]
    assert "contract v0.2 (preview)" in tag["description"]
    acknowledge = document["paths"]["/api/v1/notifications/{notification_id}/acknowledge"]["post"]
    assert acknowledge["tags"] == ["notifications"] and "v0.2 (preview)" in acknowledge["description"]
    assert "/api/v1/notification-actions/{token}" in document["paths"]
