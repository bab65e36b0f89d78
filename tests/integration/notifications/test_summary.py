"""Recent-change summaries (deterministic, never beyond the caller's visibility), preferences and the demo inbox."""

from __future__ import annotations

from typing import Any

import httpx

from groundwork.config import Settings
from groundwork.demo.notifications import seed_demo_notifications
from groundwork.demo.records import WORKSPACE_SLUG
from groundwork.demo.seed import seed_demo_data
from groundwork.persistence import db
from groundwork.persistence.repositories.notifications import inbox as notification_repo
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from tests.conftest import mcp_session, tool_json
from tests.integration.enhancement.conftest import DESCRIPTION, create_run
from tests.integration.notifications.conftest import People, start_thread

SUMMARY = (
    "query ($since: DateTime) { notificationSummary(since: $since) { since asOf counts items { kind resourceId } } }"
)


async def _summary(client: httpx.AsyncClient, people: People, who: Any, since: str) -> httpx.Response:
    return await client.get("/api/v1/notifications/summary", params={"since": since}, headers=people.headers(who))


async def test_summary_counts_what_the_caller_requested_watches_or_is_in_and_is_deterministic(
    api_url: str, client: httpx.AsyncClient, people: People, worker: Any
) -> None:
    since = "2020-01-01T00:00:00Z"
    item = (
        await client.post(
            "/api/v1/work-items",
            json={
                "project_id": people.workspace.projects["ALPHA"],
                "title": "Tokenise cards",
                "fields": {"description": DESCRIPTION},
            },
            headers=people.headers(people.dana, **{"Idempotency-Key": "wi"}),
        )
    ).json()["data"]
    run = (await create_run(client, people.workspace, people.alice.key, item["id"], ["requirements"])).json()["data"]
    thread = await start_thread(client, people, people.bob, [people.alice], "ping")
    first = await _summary(client, people, people.alice, since)
    second = await _summary(client, people, people.alice, since)
    assert first.status_code == 200 and first.content == second.content
    data = first.json()["data"]
    assert data["counts"] == {"work_item_enhancement": 1, "messages": 1, "context_engine": 0}
    assert {(i["kind"], i["resourceType"], i["resourceId"]) for i in data["items"]} == {
        ("work_item_enhancement", "work_item_enhancement_run", run["id"]),
        ("messages", "message_thread", thread["id"]),
    }
    assert data["since"] == "2020-01-01T00:00:00.000000Z" and data["asOf"] == data["items"][0]["occurredAt"]
    # Bob sent the message and requested nothing; Carol is in nothing and sees nothing.
    assert (await _summary(client, people, people.bob, since)).json()["data"]["counts"] == {
        "work_item_enhancement": 0,
        "messages": 0,
        "context_engine": 0,
    }
    assert (await _summary(client, people, people.carol, since)).json()["data"]["items"] == []
    later = await _summary(client, people, people.alice, data["asOf"])
    assert [i["resourceId"] for i in later.json()["data"]["items"]] == [data["items"][0]["resourceId"]]
    graph = await client.post(
        "/graphql", json={"query": SUMMARY, "variables": {"since": since}}, headers=people.headers(people.alice)
    )
    assert graph.json()["data"]["notificationSummary"]["counts"] == data["counts"]
    async with mcp_session(api_url, people.alice.key) as session:
        via_mcp = tool_json(await session.call_tool("get_notifications_messaging", {"view": "summary", "since": since}))
        assert via_mcp["data"] == data
    bad = await _summary(client, people, people.alice, "yesterday")
    assert bad.status_code == 422 and bad.json()["errors"][0]["path"] == "since"


async def test_summary_leaves_out_runs_in_projects_the_caller_no_longer_sees(
    client: httpx.AsyncClient, people: People, worker: Any
) -> None:
    item = (
        await client.post(
            "/api/v1/work-items",
            json={
                "project_id": people.workspace.projects["ALPHA"],
                "title": "Tokenise cards",
                "fields": {"description": DESCRIPTION},
            },
            headers=people.headers(people.dana, **{"Idempotency-Key": "wi2"}),
        )
    ).json()["data"]
    await create_run(client, people.workspace, people.bob.key, item["id"], ["requirements"])
    await tenancy.add_membership(people.bob.id, people.workspace.projects["BETA"], "viewer")
    await db.execute(
        "DELETE FROM memberships WHERE principal_id = $1 AND project_id = $2",
        people.bob.id,
        people.workspace.projects["ALPHA"],
    )
    data = (await _summary(client, people, people.bob, "2020-01-01T00:00:00Z")).json()["data"]
    assert data["counts"]["work_item_enhancement"] == 0 and data["items"] == []


async def test_preferences_default_to_in_app_only_and_validate_every_field(
    client: httpx.AsyncClient, people: People
) -> None:
    defaults = (await client.get("/api/v1/notifications/preferences", headers=people.headers(people.bob))).json()
    assert defaults["data"]["channels"] == {
        "in_app": {"enabled": True},
        "email": {"enabled": False, "address": None, "digest": "immediate"},
        "chat": {"enabled": False, "webhook_url": None},
    }
    assert defaults["data"]["events"]["message.posted"] == {"email": True, "chat": True}
    bad = await client.put(
        "/api/v1/notifications/preferences",
        json={
            "channels": {
                "email": {"enabled": True, "address": "not-an-address", "digest": "weekly"},
                "chat": {"enabled": True, "webhook_url": "ftp://x"},
            },
            "events": {"nope.happened": {"email": False}},
            "extra": 1,
        },
        headers=people.headers(people.bob),
    )
    assert bad.status_code == 422
    assert {e["path"] for e in bad.json()["errors"]} == {
        "body.extra",
        "channels.email.address",
        "channels.email.digest",
        "channels.chat.webhook_url",
        "events.nope.happened",
    }
    reader = await people.workspace.key("bob", ["notifications:read"])
    refused = await client.put("/api/v1/notifications/preferences", json={}, headers=people.workspace.headers(reader))
    assert refused.status_code == 403 and refused.json()["required_scope"] == "notifications:write"


async def test_the_demo_admin_has_notifications_in_each_state_and_a_thread(database: str) -> None:
    await seed_demo_data()
    settings = Settings(database_url=database)
    await seed_demo_notifications(settings)
    assert await seed_demo_notifications(settings) is False  # once
    workspace = await tenancy.get_workspace_by_slug(WORKSPACE_SLUG)
    assert workspace is not None
    admin = await tenancy.get_principal_by_name(workspace.id, "admin")
    assert admin is not None
    rows, _ = await notification_repo.list_inbox(
        admin.id, status=None, source_kind=None, since=None, after_id=None, limit=100
    )
    assert sorted(r.status for r in rows) == ["acknowledged", "dismissed", "read", "unread"]
    assert await notification_repo.unread_count(admin.id) == 1
    history = await notification_repo.history(next(r.id for r in rows if r.status == "dismissed"))
    assert [(h.from_status, h.to_status, h.via) for h in history] == [
        ("unread", "read", "demo"),
        ("read", "acknowledged", "demo"),
        ("acknowledged", "dismissed", "demo"),
    ]
