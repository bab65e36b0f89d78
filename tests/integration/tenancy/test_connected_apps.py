"""Connected apps: declared before activation; their keys work only while active, only in their direction."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from groundwork.services.tenancy.api_keys import issue_key
from tests.conftest import idem, mcp_session
from tests.integration.notifications.conftest import People, command

Notify = Callable[..., Awaitable[dict[str, Any]]]


async def _register(client: httpx.AsyncClient, people: People, **declaration: Any) -> httpx.Response:
    return await client.post("/api/v1/connected-apps", json=declaration, headers=people.headers(people.dana, **idem()))


async def _app(client: httpx.AsyncClient, people: People, **declaration: Any) -> dict[str, Any]:
    response = await _register(client, people, **declaration)
    assert response.status_code == 201, response.text
    return dict(response.json()["data"])


async def _activate(client: httpx.AsyncClient, people: People, app_id: str, action: str = "activate") -> None:
    response = await client.post(
        f"/api/v1/connected-apps/{app_id}/{action}", headers=people.headers(people.dana, **idem())
    )
    assert response.status_code == 200, response.text


async def _bob_key_for(people: People, app_id: str) -> str:
    return (await issue_key(people.workspace.slug, "bob", None, app_id=app_id)).key


ASSISTANT = {"kind": "assistant", "direction": "read", "provenance": "claude-desktop", "conflict": "reject"}


async def test_an_inactive_app_s_key_is_refused_until_activation_and_again_after_deactivation(
    client: httpx.AsyncClient, people: People, notify: Notify
) -> None:
    app = await _app(client, people, name="Reader", **ASSISTANT)
    assert (app["status"], app["direction"], app["fieldAuthority"]) == ("registered", "read", [])
    key = await _bob_key_for(people, app["id"])
    refused = await client.get("/api/v1/notifications", headers=people.workspace.headers(key))
    assert refused.status_code == 403
    assert refused.json()["code"] == "app_not_active" and refused.json()["app_id"] == app["id"]
    graph = await client.post("/graphql", json={"query": "{ viewer { name } }"}, headers=people.workspace.headers(key))
    assert graph.status_code == 403 and graph.json()["code"] == "app_not_active"
    await _activate(client, people, app["id"])
    await notify()
    assert len((await client.get("/api/v1/notifications", headers=people.workspace.headers(key))).json()["data"]) == 1
    listed = (await client.get("/api/v1/connected-apps", headers=people.headers(people.dana))).json()["data"]
    assert [(a["id"], a["status"], a["keyCount"]) for a in listed] == [(app["id"], "active", 1)]
    await _activate(client, people, app["id"], "deactivate")
    again = await client.get("/api/v1/notifications", headers=people.workspace.headers(key))
    assert again.status_code == 403 and again.json()["app_status"] == "inactive"


async def test_a_read_app_cannot_draft_or_apply_through_any_transport(
    api_url: str, client: httpx.AsyncClient, people: People, notify: Notify
) -> None:
    app = await _app(client, people, name="Reader", **ASSISTANT)
    await _activate(client, people, app["id"])
    key = await _bob_key_for(people, app["id"])  # a key with every scope: the direction still bounds it
    created = await notify()
    headers = people.workspace.headers(key)
    rest = await client.post(
        f"/api/v1/notifications/{created['id']}/read", json={"expected_version": 1}, headers={**headers, **idem()}
    )
    assert rest.status_code == 403 and rest.json()["code"] == "app_direction_forbidden"
    assert rest.json()["required_scope"] == "notifications:operate" and rest.json()["direction"] == "read"
    draft = await client.post(
        "/graphql",
        json={
            "query": "mutation ($i: DraftNotificationChangeInput!) "
            "{ draftNotificationChange(input: $i) { ok id errors { code } } }",
            "variables": {"i": {"notificationId": created["id"], "requestedOutcome": "read", "expectedVersion": 1}},
        },
        headers=headers,
    )
    refused = draft.json()["data"]["draftNotificationChange"]
    assert (refused["ok"], refused["id"], refused["errors"]) == (False, None, [{"code": "app_direction_forbidden"}])
    work = await client.post(
        "/api/v1/work-items",
        json={"project_id": people.workspace.projects["ALPHA"], "title": "nope"},
        headers={**headers, **idem()},
    )
    assert work.status_code == 403 and work.json()["code"] == "app_direction_forbidden"
    async with mcp_session(api_url, key) as session:
        tool = await session.call_tool(
            "draft_notifications_messaging_change",
            {"notification_id": created["id"], "requested_outcome": "read", "expected_version": 1},
        )
        assert tool.is_error and '"app_direction_forbidden"' in tool.content[0].text
        apply = await session.call_tool(
            "apply_notifications_messaging_change",
            {"proposal_id": "ncp_x", "expected_version": 1, "idempotency_key": uuid.uuid4().hex, "confirm": True},
        )
        assert apply.is_error and '"app_direction_forbidden"' in apply.content[0].text
        assert not (await session.call_tool("get_notifications_messaging", {"view": "inbox"})).is_error
    listed = (await client.get("/api/v1/notifications", headers=headers)).json()["data"]
    assert listed[0]["status"] == "unread" and listed[0]["allowedActions"] == []


async def test_a_deliver_app_acknowledges_with_provenance_but_never_dismisses(
    client: httpx.AsyncClient, people: People, notify: Notify
) -> None:
    app = await _app(
        client,
        people,
        name="Team chat",
        kind="chat",
        direction="deliver",
        field_authority=["status"],
        provenance="slack-bridge",
        conflict="reject",
    )
    await _activate(client, people, app["id"])
    key = await _bob_key_for(people, app["id"])
    created = await notify()
    headers = people.workspace.headers(key)
    for version, (name, extra) in enumerate([("read", {}), ("acknowledge", {"confirm": True})], start=1):
        moved = await client.post(
            f"/api/v1/notifications/{created['id']}/{name}",
            json={"expected_version": version, **extra},
            headers={**headers, **idem()},
        )
        assert moved.status_code == 200, moved.text
    listed = (await client.get("/api/v1/notifications", headers=headers)).json()["data"]
    assert listed[0]["status"] == "acknowledged" and listed[0]["allowedActions"] == []
    dismissed = await client.post(
        f"/api/v1/notifications/{created['id']}/dismiss",
        json={"expected_version": 3, "confirm": True},
        headers={**headers, **idem()},
    )
    assert dismissed.status_code == 403 and dismissed.json()["code"] == "app_direction_forbidden"
    history = (await client.get(f"/api/v1/notifications/{created['id']}", headers=headers)).json()["data"]["history"]
    assert [(h["appId"], h["provenance"]) for h in history] == [(app["id"], "slack-bridge")] * 2
    # Bob's own key (no app) may still dismiss: the bound is the app's, not the person's.
    own = await command(client, people, people.bob, created["id"], "dismiss", expected_version=3, confirm=True)
    assert own.status_code == 200


async def test_a_propose_app_drafts_within_its_field_authority_only(
    client: httpx.AsyncClient, people: People, notify: Notify
) -> None:
    app = await _app(
        client,
        people,
        name="IDE",
        kind="ide",
        direction="propose",
        field_authority=["description"],
        provenance="vscode-groundwork",
        conflict="reject",
    )
    await _activate(client, people, app["id"])
    key = await _bob_key_for(people, app["id"])
    created = await notify()
    draft = await client.post(
        "/graphql",
        json={
            "query": "mutation ($i: DraftNotificationChangeInput!) { draftNotificationChange(input: $i) "
            "{ valid validationErrors { code } } }",
            "variables": {"i": {"notificationId": created["id"], "requestedOutcome": "read", "expectedVersion": 1}},
        },
        headers=people.workspace.headers(key),
    )
    result = draft.json()["data"]["draftNotificationChange"]
    assert result["valid"] is False and result["validationErrors"] == [{"code": "app_field_not_authorized"}]
    run = await client.post(
        "/api/v1/work-item-enhancements?wait=0",
        json={"target": {"type": "work_item", "id": "wi_x"}, "actions": ["estimate"], "confirm": True},
        headers={**people.workspace.headers(key), **idem()},
    )
    assert run.status_code == 403 and run.json()["code"] == "app_field_not_authorized"
    assert run.json()["fields"] == ["estimate"]


async def test_registration_needs_a_complete_consistent_declaration_and_a_workspace_admin(
    client: httpx.AsyncClient, people: People
) -> None:
    incomplete = await _register(client, people, name="Half", kind="chat", direction="propose")
    assert incomplete.status_code == 422
    assert {e["path"] for e in incomplete.json()["errors"]} == {"direction", "provenance", "conflict"}
    member = await client.post(
        "/api/v1/connected-apps",
        json={"name": "Mine", **ASSISTANT},
        headers=people.headers(people.alice, **idem()),
    )
    assert member.status_code == 403 and member.json()["code"] == "permission_denied"
    await _app(client, people, name="Twice", **ASSISTANT)
    duplicate = await _register(client, people, name="Twice", **ASSISTANT)
    assert duplicate.status_code == 422 and duplicate.json()["errors"][0]["path"] == "name"
