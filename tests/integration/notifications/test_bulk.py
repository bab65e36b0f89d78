"""Bulk moves: one command on many notifications as one operation, each item moving or failing on its own,
idempotent under a replayed key and under a retry after a lost answer."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest

from groundwork.config import Settings
from groundwork.persistence import db
from groundwork.persistence.repositories.platform import outbox
from tests.conftest import idem, lose_the_answer
from tests.integration.notifications.conftest import People, Person, command, inbox, relay_pass, start_thread

Notify = Callable[..., Awaitable[dict[str, Any]]]
URL = "/api/v1/notifications/bulk"


async def _bulk(
    client: httpx.AsyncClient, people: People, body: dict[str, Any], person: Person | None = None, key: str = ""
) -> httpx.Response:
    headers = people.headers(person or people.bob, **({"Idempotency-Key": key} if key else idem()))
    return await client.post(URL, json=body, headers=headers)


async def _states(client: httpx.AsyncClient, people: People, ids: list[str]) -> dict[str, tuple[str, int, int]]:
    found = {}
    for notification_id in ids:
        data = (
            await client.get(f"/api/v1/notifications/{notification_id}", headers=people.headers(people.bob))
        ).json()["data"]
        found[notification_id] = (data["status"], data["version"], len(data["history"]))
    return found


async def test_bulk_with_one_stale_version_moves_the_others_and_reports_the_stale_one(
    client: httpx.AsyncClient, people: People, notify: Notify
) -> None:
    made = [await notify(body=f"message {n}") for n in range(4)]
    ids = [n["id"] for n in made]
    # The third moved since the caller read it: the caller still holds version 1.
    assert (await command(client, people, people.bob, ids[2], "read", expected_version=1)).status_code == 200
    body = {"command": "read", "items": [{"id": i, "expected_version": 1} for i in ids], "reason": "triage"}
    response = await _bulk(client, people, body)
    assert response.status_code == 200, response.text
    answer = response.json()["data"]
    assert answer["command"] == "read" and answer["operation_id"].startswith("op_")
    assert [item["id"] for item in answer["items"]] == ids  # the order given
    stale = answer["items"][2]
    assert stale["moved"] is False
    assert stale["error"]["code"] == "version_conflict" and stale["error"]["current_version"] == 2
    for item in answer["items"][:2] + answer["items"][3:]:
        assert item == {"id": item["id"], "moved": True, "status": "read", "version": 2}
    states = await _states(client, people, ids)
    assert states == {ids[0]: ("read", 2, 1), ids[1]: ("read", 2, 1), ids[2]: ("read", 2, 1), ids[3]: ("read", 2, 1)}
    operation = (
        await client.get(f"/api/v1/operations/{answer['operation_id']}", headers=people.headers(people.bob))
    ).json()["data"]
    assert operation["command"] == "bulk_read" and sorted(operation["notificationIds"]) == sorted(
        [ids[0], ids[1], ids[3]]
    )
    assert len(operation["auditReferences"]) == 3 and operation["items"] == answer["items"]
    # One event per move, none for the stale item beyond its own earlier read.
    updated = [e for e in await outbox.events_for_workspace(people.workspace.id) if e.type == "notification.updated"]
    assert sorted(e.resource_id for e in updated) == sorted(ids)
    assert (await inbox(client, people, people.bob))["unreadCount"] == 0


async def test_bulk_items_fail_on_their_own_as_the_single_command_would(
    client: httpx.AsyncClient, people: People, notify: Notify, temporal_client: Any, settings: Settings
) -> None:
    mine, fresh = await notify(body="for bob"), await notify(body="fresh")
    await start_thread(client, people, people.bob, [people.alice], "for alice")
    await relay_pass(temporal_client, settings)
    [theirs] = (await inbox(client, people, people.alice))["data"]
    items: list[dict[str, Any]] = [
        {"id": mine["id"], "expected_version": 1},
        {"id": theirs["id"], "expected_version": 1},
        {"id": "notification_01JDNOSUCHTHINGATALL00000", "expected_version": 1},
    ]
    body: dict[str, Any] = {
        "command": "acknowledge",
        "confirm": True,
        "items": items,
    }
    assert (await command(client, people, people.bob, mine["id"], "read", expected_version=1)).status_code == 200
    items[0]["expected_version"] = 2
    items.append({"id": fresh["id"], "expected_version": 1})
    answer = (await _bulk(client, people, body)).json()["data"]
    assert [(i["moved"], i.get("status"), (i.get("error") or {}).get("code")) for i in answer["items"]] == [
        (True, "acknowledged", None),
        (False, None, "not_found"),
        (False, None, "not_found"),
        (False, None, "invalid_transition"),
    ]
    assert answer["items"][3]["error"]["allowed_actions"] == ["read", "snooze"]
    alice_view = (
        await client.get(f"/api/v1/notifications/{theirs['id']}", headers=people.headers(people.alice))
    ).json()["data"]
    assert (alice_view["status"], alice_view["version"]) == ("unread", 1)


async def test_a_bulk_move_that_needs_confirmation_moves_nothing_without_it(
    client: httpx.AsyncClient, people: People, notify: Notify
) -> None:
    made = [await notify(body=f"message {n}") for n in range(2)]
    for n in made:
        assert (await command(client, people, people.bob, n["id"], "read", expected_version=1)).status_code == 200
    items = [{"id": n["id"], "expected_version": 2} for n in made]
    for name in ("acknowledge", "snooze"):
        extra = {"for": "PT1H"} if name == "snooze" else {}
        refused = await _bulk(client, people, {"command": name, "items": items, **extra})
        assert refused.status_code == 422 and refused.json()["code"] == "confirmation_required", refused.text
    assert set((await _states(client, people, [n["id"] for n in made])).values()) == {("read", 2, 1)}
    invalid = await _bulk(client, people, {"command": "read", "items": items, "for": "PT1H"})
    assert invalid.status_code == 422 and invalid.json()["errors"][0]["path"] == "for"
    repeated = await _bulk(client, people, {"command": "read", "items": items + items[:1]})
    assert repeated.status_code == 422 and repeated.json()["errors"][0]["path"] == "items[2].id"
    too_many = await _bulk(
        client, people, {"command": "read", "items": [{"id": f"n{i}", "expected_version": 1} for i in range(101)]}
    )
    assert too_many.status_code == 422 and too_many.json()["errors"][0]["path"] == "items"
    unknown = await _bulk(client, people, {"command": "read", "items": items, "everything": True})
    assert unknown.status_code == 400 and unknown.json()["code"] == "invalid_request"


async def test_bulk_is_idempotent_replayed_by_key_and_retried_after_a_lost_answer(
    client: httpx.AsyncClient, people: People, notify: Notify
) -> None:
    made = [await notify(body=f"message {n}") for n in range(3)]
    ids = [n["id"] for n in made]
    body = {"command": "read", "items": [{"id": i, "expected_version": 1} for i in ids]}
    key = uuid.uuid4().hex
    first = await _bulk(client, people, body, key=key)
    second = await _bulk(client, people, body, key=key)
    assert first.status_code == second.status_code == 200
    assert second.content == first.content and second.headers["idempotent-replayed"] == "true"
    # The process died after the commit: the retry with the same key gets the same answer, no second move.
    await lose_the_answer(key)
    retried = await _bulk(client, people, body, key=key)
    assert retried.status_code == 200 and retried.json() == first.json()
    assert set((await _states(client, people, ids)).values()) == {("read", 2, 1)}
    operations = await db.fetch(
        "SELECT id FROM notification_operations WHERE actor_id = $1 AND command = 'bulk_read'", people.bob.id
    )
    assert len(operations) == 1


@pytest.mark.usefixtures("worker")
async def test_bulk_snooze_snoozes_each_with_its_own_timer(
    client: httpx.AsyncClient, people: People, notify: Notify, temporal_client: Any, settings: Settings
) -> None:
    made = [await notify(body=f"message {n}") for n in range(3)]
    ids = [n["id"] for n in made]
    body = {
        "command": "snooze",
        "for": "PT2S",
        "confirm": True,
        "items": [{"id": i, "expected_version": 1} for i in ids],
    }
    answer = (await _bulk(client, people, body)).json()["data"]
    assert all(i["moved"] and i["version"] == 2 and i["snoozed_until"] for i in answer["items"]), answer
    assert (await inbox(client, people, people.bob))["data"] == []
    assert sorted(n["id"] for n in (await inbox(client, people, people.bob, snoozed="true"))["data"]) == sorted(ids)
    await relay_pass(temporal_client, settings)
    rows = await db.fetch("SELECT workflow_id FROM notification_snoozes WHERE notification_id = ANY($1::text[])", ids)
    assert len({r["workflow_id"] for r in rows}) == 3
    assert [await temporal_client.get_workflow_handle(r["workflow_id"]).result() for r in rows] == ["woken"] * 3
    assert sorted(n["id"] for n in (await inbox(client, people, people.bob))["data"]) == sorted(ids)
