"""The lifecycle over REST: every allowed and forbidden move, stale versions, confirmation, replays, races."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest

from groundwork.persistence.repositories.platform import outbox
from groundwork.persistence.repositories.platform.outbox import OutboxEventRow
from tests.conftest import idem, lose_the_answer
from tests.integration.notifications.conftest import People, bob_detail, command, inbox

Notify = Callable[..., Awaitable[dict[str, Any]]]


async def _events(people: People, notification_id: str) -> list[OutboxEventRow]:
    return [e for e in await outbox.events_for_workspace(people.workspace.id) if e.resource_id == notification_id]


async def test_each_allowed_move_answers_status_version_operation_and_is_audited_with_its_event(
    client: httpx.AsyncClient, people: People, notify: Notify
) -> None:
    created = await notify()
    assert created["status"] == "unread" and created["version"] == 1
    assert created["allowedActions"] == [
        {"id": "read", "label": "Mark as read", "requiresConfirmation": False},
        {"id": "snooze", "label": "Snooze", "requiresConfirmation": True},
    ]
    steps = [
        ("read", "read", {}),
        ("acknowledge", "acknowledged", {"confirm": True}),
        ("dismiss", "dismissed", {"confirm": True}),
    ]
    for version, (name, status, extra) in enumerate(steps, start=1):
        response = await command(
            client, people, people.bob, created["id"], name, expected_version=version, reason=f"{name} it", **extra
        )
        assert response.status_code == 200, response.text
        answer = response.json()["data"]
        assert set(answer) == {"id", "status", "version", "operationId", "operation_id"}
        assert answer["operation_id"] == answer["operationId"]  # the spec's name, beside it until 0.2
        assert (answer["id"], answer["status"], answer["version"]) == (created["id"], status, version + 1)
        assert answer["operation_id"].startswith("op_")
        operation = await client.get(f"/api/v1/operations/{answer['operation_id']}", headers=people.headers(people.bob))
        assert operation.status_code == 200, operation.text
        assert operation.json()["data"]["command"] == name and operation.json()["data"]["status"] == "succeeded"
    detail = await bob_detail(client, people, created["id"])
    assert detail["status"] == "dismissed" and detail["allowedActions"] == []
    assert [(h["from"], h["to"], h["via"], h["actorId"], h["reason"]) for h in detail["history"]] == [
        ("unread", "read", "rest", people.bob.id, "read it"),
        ("read", "acknowledged", "rest", people.bob.id, "acknowledge it"),
        ("acknowledged", "dismissed", "rest", people.bob.id, "dismiss it"),
    ]
    events = await _events(people, created["id"])
    assert [e.type for e in events] == [
        "notification.created",
        "notification.updated",
        "notification.acknowledged",
        "notification.updated",
    ]
    assert events[1].payload["changed_fields"] == ["status"] and events[1].payload["version"] == 2
    assert events[2].payload["prior_status"] == "read" and events[2].payload["status"] == "acknowledged"


@pytest.mark.parametrize(
    ("moves", "forbidden", "allowed"),
    [
        ([], "acknowledge", ["read", "snooze"]),
        ([], "dismiss", ["read", "snooze"]),
        (["read"], "read", ["acknowledge", "snooze"]),
        (["read"], "dismiss", ["acknowledge", "snooze"]),
        (["read", "acknowledge"], "acknowledge", ["dismiss", "snooze"]),
        (["read", "acknowledge", "dismiss"], "read", []),
        (["read", "acknowledge", "dismiss"], "dismiss", []),
    ],
)
async def test_a_forbidden_move_is_invalid_transition_and_changes_nothing(
    client: httpx.AsyncClient, people: People, notify: Notify, moves: list[str], forbidden: str, allowed: list[str]
) -> None:
    created = await notify()
    for version, name in enumerate(moves, start=1):
        ok = await command(client, people, people.bob, created["id"], name, expected_version=version, confirm=True)
        assert ok.status_code == 200, ok.text
    before = await bob_detail(client, people, created["id"])
    events_before = await _events(people, created["id"])
    response = await command(
        client, people, people.bob, created["id"], forbidden, expected_version=before["version"], confirm=True
    )
    assert response.status_code == 409, response.text
    problem = response.json()
    assert problem["code"] == "invalid_transition" and problem["allowed_actions"] == allowed
    assert response.headers["content-type"].startswith("application/problem+json")
    after = await bob_detail(client, people, created["id"])
    assert after == before
    assert await _events(people, created["id"]) == events_before


async def test_a_stale_expected_version_is_version_conflict_and_changes_nothing(
    client: httpx.AsyncClient, people: People, notify: Notify
) -> None:
    created = await notify()
    assert (await command(client, people, people.bob, created["id"], "read", expected_version=1)).status_code == 200
    stale = await command(client, people, people.bob, created["id"], "acknowledge", expected_version=1, confirm=True)
    assert stale.status_code == 409
    assert stale.json()["code"] == "version_conflict" and stale.json()["current_version"] == 2
    detail = await bob_detail(client, people, created["id"])
    assert (detail["status"], detail["version"], len(detail["history"])) == ("read", 2, 1)


async def test_acknowledge_and_dismiss_without_confirm_are_refused_and_read_needs_none(
    client: httpx.AsyncClient, people: People, notify: Notify
) -> None:
    created = await notify()
    assert (await command(client, people, people.bob, created["id"], "read", expected_version=1)).status_code == 200
    for confirm in (None, False):
        body = {"expected_version": 2} if confirm is None else {"expected_version": 2, "confirm": confirm}
        refused = await command(client, people, people.bob, created["id"], "acknowledge", **body)
        assert refused.status_code == 422
        assert refused.json()["code"] == "confirmation_required"
        assert (refused.json()["from_status"], refused.json()["to_status"]) == ("read", "acknowledged")
    assert (await bob_detail(client, people, created["id"]))["version"] == 2
    missing = await command(client, people, people.bob, created["id"], "acknowledge", confirm=True)
    assert missing.status_code == 422 and missing.json()["code"] == "validation_failed"
    assert missing.json()["errors"][0]["path"] == "expected_version"
    unkeyed = await client.post(
        f"/api/v1/notifications/{created['id']}/acknowledge",
        json={"expected_version": 2, "confirm": True},
        headers=people.headers(people.bob),
    )
    assert unkeyed.status_code == 400 and unkeyed.json()["code"] == "idempotency_key_required"


async def test_a_replayed_acknowledge_answers_the_same_body_and_bumps_nothing(
    client: httpx.AsyncClient, people: People, notify: Notify
) -> None:
    created = await notify()
    assert (await command(client, people, people.bob, created["id"], "read", expected_version=1)).status_code == 200
    headers = people.headers(people.bob, **idem())
    body = {"expected_version": 2, "reason": "seen", "confirm": True}
    url = f"/api/v1/notifications/{created['id']}/acknowledge"
    first = await client.post(url, json=body, headers=headers)
    second = await client.post(url, json=body, headers=headers)
    assert first.status_code == second.status_code == 200
    assert second.content == first.content and second.headers["idempotent-replayed"] == "true"
    detail = await bob_detail(client, people, created["id"])
    assert (detail["status"], detail["version"], len(detail["history"])) == ("acknowledged", 3, 2)
    assert [e.type for e in await _events(people, created["id"])].count("notification.acknowledged") == 1


async def test_an_acknowledge_retried_after_its_answer_was_lost_answers_that_move_and_moves_once(
    client: httpx.AsyncClient, people: People, notify: Notify
) -> None:
    created = await notify()
    assert (await command(client, people, people.bob, created["id"], "read", expected_version=1)).status_code == 200
    key = uuid.uuid4().hex
    url = f"/api/v1/notifications/{created['id']}/acknowledge"
    body = {"expected_version": 2, "reason": "done", "confirm": True}
    first = await client.post(url, json=body, headers=people.headers(people.bob, **{"Idempotency-Key": key}))
    assert first.status_code == 200, first.text
    # The API died after the commit: the claim stays, unanswered, no longer refreshed.
    await lose_the_answer(key)
    retried = await client.post(url, json=body, headers=people.headers(people.bob, **{"Idempotency-Key": key}))
    # Not 409 `version_conflict` for the stale version: the one move's answer, operation included.
    assert retried.status_code == 200 and retried.json() == first.json()
    detail = await bob_detail(client, people, created["id"])
    assert (detail["status"], detail["version"], len(detail["history"])) == ("acknowledged", 3, 2)
    assert [e.type for e in await _events(people, created["id"])].count("notification.acknowledged") == 1


async def test_list_is_newest_first_with_filters_keyset_pages_and_unread_count(
    client: httpx.AsyncClient, people: People, notify: Notify
) -> None:
    made = [await notify(body=f"message {n}") for n in range(3)]
    assert (await command(client, people, people.bob, made[0]["id"], "read", expected_version=1)).status_code == 200
    first = await inbox(client, people, people.bob, limit=2)
    assert [n["id"] for n in first["data"]] == [made[2]["id"], made[1]["id"]]
    assert first["unreadCount"] == 2 and first["page"]["hasMore"] is True
    rest = await inbox(client, people, people.bob, limit=2, cursor=first["page"]["nextCursor"])
    assert [n["id"] for n in rest["data"]] == [made[0]["id"]] and rest["page"]["hasMore"] is False
    unread = await inbox(client, people, people.bob, status="unread")
    assert [n["id"] for n in unread["data"]] == [made[2]["id"], made[1]["id"]]
    assert (await inbox(client, people, people.bob, source_kind="webhooks"))["data"] == []
    assert [n["id"] for n in (await inbox(client, people, people.bob, since=made[1]["createdAt"]))["data"]] == [
        made[2]["id"],
        made[1]["id"],
    ]
    bad = await client.get("/api/v1/notifications", params={"status": "new"}, headers=people.headers(people.bob))
    assert bad.status_code == 422 and bad.json()["errors"][0]["path"] == "status"


async def test_read_all_reads_up_to_a_point_one_audited_move_each(
    client: httpx.AsyncClient, people: People, notify: Notify
) -> None:
    made = [await notify(body=f"message {n}") for n in range(3)]
    response = await client.post(
        "/api/v1/notifications/read-all", json={"up_to": made[1]["id"]}, headers=people.headers(people.bob, **idem())
    )
    assert response.status_code == 200, response.text
    answer = response.json()["data"]
    assert answer["read"] == 2 and answer["hasMore"] is False and answer["has_more"] is False
    listed = await inbox(client, people, people.bob)
    assert {n["id"]: n["status"] for n in listed["data"]} == {
        made[0]["id"]: "read",
        made[1]["id"]: "read",
        made[2]["id"]: "unread",
    }
    assert listed["unreadCount"] == 1
    operation = (
        await client.get(f"/api/v1/operations/{answer['operation_id']}", headers=people.headers(people.bob))
    ).json()["data"]
    assert sorted(operation["notificationIds"]) == sorted([made[0]["id"], made[1]["id"]])
    assert len(operation["auditReferences"]) == 2 and operation["command"] == "read_all"
    for n in made[:2]:
        assert [h["to"] for h in (await bob_detail(client, people, n["id"]))["history"]] == ["read"]
    again = await client.post("/api/v1/notifications/read-all", json={}, headers=people.headers(people.bob, **idem()))
    assert again.json()["data"]["read"] == 1
    assert (await inbox(client, people, people.bob))["unreadCount"] == 0


async def test_allowed_actions_are_empty_without_the_operate_scope(
    client: httpx.AsyncClient, people: People, notify: Notify
) -> None:
    created = await notify()
    reader = await people.workspace.key("bob", ["notifications:read"])
    listed = await client.get("/api/v1/notifications", headers=people.workspace.headers(reader))
    assert listed.json()["data"][0]["id"] == created["id"] and listed.json()["data"][0]["allowedActions"] == []
    refused = await client.post(
        f"/api/v1/notifications/{created['id']}/read",
        json={"expected_version": 1},
        headers=people.workspace.headers(reader, **idem()),
    )
    assert refused.status_code == 403 and refused.json()["required_scope"] == "notifications:operate"


async def test_operations_answer_op_ids_only_to_their_actor_and_run_ids_need_their_own_scope(
    client: httpx.AsyncClient, people: People, notify: Notify
) -> None:
    created = await notify()
    answer = (await command(client, people, people.bob, created["id"], "read", expected_version=1)).json()["data"]
    other = await client.get(f"/api/v1/operations/{answer['operation_id']}", headers=people.headers(people.dana))
    assert other.status_code == 404
    notifications_only = await people.workspace.key("bob", ["notifications:read"])
    run = await client.get("/api/v1/operations/wie_missing", headers=people.workspace.headers(notifications_only))
    assert run.status_code == 403 and run.json()["required_scope"] == "work-item-enhance:read"
