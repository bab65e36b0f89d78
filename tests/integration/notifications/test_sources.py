"""Notifications come only from domain facts in the outbox: once per event and recipient, never lost, never seen
by someone who may not see what they are about."""

from __future__ import annotations

import json
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import httpx
from standardwebhooks import Webhook

from groundwork.config import Settings
from groundwork.persistence import db
from groundwork.persistence.repositories.platform import outbox
from groundwork.platform.outbox.relay import OutboxRelay
from tests.conftest import idem
from tests.integration.enhancement.conftest import DESCRIPTION, create_run
from tests.integration.notifications.conftest import People, inbox, relay_pass, start_thread, wait_until
from tests.integration.webhooks.conftest import (  # noqa: F401 (fixtures)
    Receiver,
    create_endpoint,
    receivers,
    relay,
    webhook_settings,
)


async def _work_item(client: httpx.AsyncClient, people: People, watchers: list[str]) -> dict[str, Any]:
    response = await client.post(
        "/api/v1/work-items",
        json={
            "project_id": people.workspace.projects["ALPHA"],
            "title": "Save cards with PSP tokens",
            "status": "todo",
            "watchers": watchers,
            "fields": {"description": DESCRIPTION},
        },
        headers=people.headers(people.dana, **idem()),
    )
    assert response.status_code == 201, response.text
    return dict(response.json()["data"])


async def test_a_completed_run_notifies_its_requester_and_sends_the_signed_created_webhook(
    client: httpx.AsyncClient,
    people: People,
    worker: Any,
    relay: OutboxRelay,  # noqa: F811
    receivers: Callable[[], Awaitable[Receiver]],  # noqa: F811
) -> None:
    receiver, admins = await receivers(), await receivers()
    # A notification is its recipient's alone: Alice's endpoint hears of it, the admin's does not.
    endpoint = await create_endpoint(client, people.workspace, people.alice.key, receiver.url, ["notification.created"])
    await create_endpoint(client, people.workspace, people.dana.key, admins.url, ["notification.created"])
    item = await _work_item(client, people, [])
    run = (await create_run(client, people.workspace, people.alice.key, item["id"], ["requirements"])).json()["data"]
    assert run["state"] == "ready_for_review"

    async def arrived() -> bool:
        return bool((await inbox(client, people, people.alice))["data"])

    await wait_until(arrived, what="the requester's notification")
    [notification] = (await inbox(client, people, people.alice))["data"]
    assert notification["source"] == {"kind": "work_item_enhancement", "externalId": run["id"]}
    assert notification["resource"] == {"type": "work_item_enhancement_run", "id": run["id"]}
    assert notification["eventType"] == "work_item_enhancement.completed"
    assert item["key"] in notification["title"] and notification["status"] == "unread"
    for other in (people.bob, people.carol, people.dana):
        assert (await inbox(client, people, other))["data"] == []
    [request] = await receiver.wait_for(1)
    event = Webhook(endpoint["secret"]).verify(request.body, request.headers)
    assert event["type"] == "notification.created"
    assert event["resource"] == {"type": "notification", "id": notification["id"]}
    assert event["payload"] == {
        "notification_id": notification["id"],
        "status": "unread",
        "created_at": notification["createdAt"],
    }
    assert admins.requests == []


async def test_a_failed_run_notifies_its_requester(
    client: httpx.AsyncClient, people: People, worker: Any, temporal_client: Any, settings: Settings
) -> None:
    item = await _work_item(client, people, [])
    run = (await create_run(client, people.workspace, people.alice.key, item["id"], ["estimate"])).json()["data"]
    now = datetime.now(UTC)
    async with db.transaction():  # as the run would record a failed review-time action
        await outbox.append_event(
            type="work_item_enhancement.failed",
            workspace_id=people.workspace.id,
            resource_type="work_item_enhancement_run",
            resource_id=run["id"],
            actor_id=people.alice.id,
            project_id=item["projectId"],
            payload={
                "run_id": run["id"],
                "action": "estimate",
                "error_code": "generation_rejected",
                "failed_at": now.isoformat(),
            },
            occurred_at=now,
        )
    await relay_pass(temporal_client, settings)
    titles = [n["title"] for n in (await inbox(client, people, people.alice))["data"]]
    assert any(t.startswith("Enhancement run failed") for t in titles)
    failed = next(n for n in (await inbox(client, people, people.alice))["data"] if "failed" in n["title"])
    assert "generation_rejected" in failed["body"]


async def test_applied_drafts_notify_requester_and_watchers_who_can_see_the_project_never_the_actor(
    client: httpx.AsyncClient, people: People, worker: Any, temporal_client: Any, settings: Settings
) -> None:
    item = await _work_item(client, people, [people.bob.id, people.carol.id, people.dana.id])
    run = (await create_run(client, people.workspace, people.alice.key, item["id"], ["acceptance_criteria"])).json()[
        "data"
    ]
    await relay_pass(temporal_client, settings)  # the run's own `completed` notification for Alice
    applied = await client.post(
        f"/api/v1/work-item-enhancements/{run['id']}/apply",
        json={"draft_ids": [run["drafts"][0]["id"]], "expected_target_version": item["version"], "confirm": True},
        headers=people.headers(people.dana, **idem()),
    )
    assert applied.status_code == 200, applied.text
    await relay_pass(temporal_client, settings)
    about_apply = {
        p.name: [n for n in (await inbox(client, people, p))["data"] if n["eventType"].endswith(".applied")]
        for p in (people.alice, people.bob, people.carol, people.dana)
    }
    assert len(about_apply["alice"]) == 1 and "your enhancement run" in about_apply["alice"][0]["body"]
    assert len(about_apply["bob"]) == 1 and "a work item you watch" in about_apply["bob"][0]["body"]
    assert about_apply["bob"][0]["resource"] == {"type": "work_item", "id": item["id"]}
    assert about_apply["carol"] == []  # watches it, but cannot see ALPHA
    assert about_apply["dana"] == []  # applied it herself


async def test_a_disabled_webhook_endpoint_notifies_every_workspace_admin(
    client: httpx.AsyncClient,
    people: People,
    relay: OutboxRelay,  # noqa: F811
    receivers: Callable[[], Awaitable[Receiver]],  # noqa: F811
) -> None:
    second_admin = await people.workspace.key("erin", None, admin=True)
    receiver = await receivers()
    receiver.default_status = 410
    endpoint = await create_endpoint(client, people.workspace, people.dana.key, receiver.url, ["notification.*"])
    await start_thread(client, people, people.alice, [people.dana])  # Dana's notification.created meets the 410

    async def told(key: str) -> bool:
        listed = (await client.get("/api/v1/notifications", headers=people.workspace.headers(key))).json()["data"]
        return any(n["source"]["kind"] == "webhooks" for n in listed)

    await wait_until(lambda: told(people.dana.key), what="the admin's notification")
    await wait_until(lambda: told(second_admin), what="the second admin's notification")
    [notice] = [n for n in (await inbox(client, people, people.dana))["data"] if n["source"]["kind"] == "webhooks"]
    assert notice["resource"] == {"type": "webhook_endpoint", "id": endpoint["id"]}
    assert "410" in notice["body"] and receiver.url in notice["body"]
    for member in (people.alice, people.bob, people.carol):
        assert not await told(member.key)


async def test_a_message_notifies_the_other_participants_only(
    client: httpx.AsyncClient, people: People, temporal_client: Any, settings: Settings
) -> None:
    thread = await start_thread(client, people, people.alice, [people.bob, people.dana], "Kick-off at 10")
    await relay_pass(temporal_client, settings)
    for person in (people.bob, people.dana):
        [notification] = (await inbox(client, people, person))["data"]
        assert notification["resource"] == {"type": "message_thread", "id": thread["id"]}
        assert notification["title"] == "New message from alice: Release plan"
        assert notification["body"] == "Kick-off at 10"
    assert (await inbox(client, people, people.alice))["data"] == []
    assert (await inbox(client, people, people.carol))["data"] == []


async def test_no_public_api_creates_or_updates_a_notification(client: httpx.AsyncClient, people: People) -> None:
    headers = people.headers(people.dana, **idem())
    body = json.dumps({"title": "spoof", "recipient_id": people.bob.id})
    created = await client.post("/api/v1/notifications", content=body, headers=headers)
    assert created.status_code == 405
    patched = await client.patch(
        f"/api/v1/notifications/notification_{uuid.uuid4().hex}", content=body, headers=headers
    )
    assert patched.status_code == 405
    assert (await inbox(client, people, people.bob))["data"] == []
