"""Snooze over REST, GraphQL and MCP: the notification leaves the inbox, its status stays, and its durable timer
brings it back as `notification.updated` with `changed_fields: ["snoozedUntil"]`; unsnooze and a second snooze
leave the earlier timer nothing to do."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from groundwork.config import Settings
from groundwork.domain.times import format_timestamp
from groundwork.persistence import db
from groundwork.persistence.repositories.platform import outbox
from groundwork.persistence.repositories.platform.outbox import OutboxEventRow
from tests.conftest import idem, lose_the_answer, mcp_session, tool_json
from tests.integration.notifications.conftest import People, bob_detail, command, inbox, relay_pass, wait_until

Notify = Callable[..., Awaitable[dict[str, Any]]]
pytestmark = pytest.mark.usefixtures("worker")


async def _updates(people: People, notification_id: str) -> list[OutboxEventRow]:
    return [
        e
        for e in await outbox.events_for_workspace(people.workspace.id)
        if e.resource_id == notification_id and e.type == "notification.updated"
    ]


def _ids(listed: dict[str, Any]) -> list[str]:
    return [n["id"] for n in listed["data"]]


async def test_a_snoozed_notification_leaves_the_inbox_keeps_its_status_and_its_timer_brings_it_back(
    client: httpx.AsyncClient, people: People, notify: Notify, temporal_client: Any, settings: Settings
) -> None:
    created = await notify()
    before = await inbox(client, people, people.bob)
    assert created["id"] in _ids(before) and before["unreadCount"] == 1
    answer = await command(
        client, people, people.bob, created["id"], "snooze", expected_version=1, confirm=True, reason="after lunch",
        **{"for": "PT3S"},
    )  # fmt: skip
    assert answer.status_code == 200, answer.text
    snoozed = answer.json()["data"]
    assert set(snoozed) == {"id", "status", "version", "operationId", "snoozedUntil", "operation_id", "snoozed_until"}
    assert (snoozed["operationId"], snoozed["snoozedUntil"]) == (snoozed["operation_id"], snoozed["snoozed_until"])
    assert (snoozed["status"], snoozed["version"]) == ("unread", 2)
    until = datetime.fromisoformat(snoozed["snoozed_until"])
    assert timedelta(seconds=2) < until - datetime.now(UTC) <= timedelta(seconds=3)

    hidden = await inbox(client, people, people.bob)
    assert created["id"] not in _ids(hidden) and hidden["unreadCount"] == 0
    shown = await inbox(client, people, people.bob, snoozed="true")
    assert _ids(shown) == [created["id"]]
    detail = await bob_detail(client, people, created["id"])
    assert (detail["status"], detail["snoozedUntil"]) == ("unread", snoozed["snoozed_until"])
    assert [a["id"] for a in detail["allowedActions"]] == ["read", "snooze", "unsnooze"]
    assert [(h["command"], h["from"], h["to"], h["via"], h["reason"]) for h in detail["history"]] == [
        ("snooze", "unread", "unread", "rest", "after lunch")
    ]
    [event] = await _updates(people, created["id"])
    assert event.payload["changed_fields"] == ["snoozedUntil"] and event.payload["version"] == 2

    await relay_pass(temporal_client, settings)  # starts the snooze's timer, as the worker's relay does

    async def back() -> bool:
        return created["id"] in _ids(await inbox(client, people, people.bob))

    await wait_until(back, timeout=20, what="the snoozed notification to come back")
    returned = datetime.now(UTC)
    assert returned >= until, "it came back before its snooze ended"
    assert returned - until < timedelta(seconds=3), f"it came back {returned - until} late"
    detail = await bob_detail(client, people, created["id"])
    assert (detail["status"], detail["version"], detail["snoozedUntil"]) == ("unread", 3, None)
    assert [(h["command"], h["via"], h["actorId"]) for h in detail["history"]][-1] == ("wake", "timer", people.bob.id)
    assert (await inbox(client, people, people.bob))["unreadCount"] == 1
    woken = (await _updates(people, created["id"]))[-1]
    assert woken.payload["changed_fields"] == ["snoozedUntil"] and woken.payload["version"] == 3
    assert woken.actor_id is None and woken.source == {"via": "timer", "app_id": None}
    assert (await inbox(client, people, people.bob, snoozed="true"))["data"] == []


async def test_unsnooze_and_a_second_snooze_leave_the_earlier_timer_nothing_to_do(
    client: httpx.AsyncClient, people: People, notify: Notify, temporal_client: Any, settings: Settings
) -> None:
    first, second = await notify(body="first"), await notify(body="second")
    for made in (first, second):
        ok = await command(
            client, people, people.bob, made["id"], "snooze", expected_version=1, confirm=True, **{"for": "PT2S"}
        )
        assert ok.status_code == 200, ok.text
    await relay_pass(temporal_client, settings)
    unsnoozed = await command(client, people, people.bob, first["id"], "unsnooze", expected_version=2)
    assert unsnoozed.status_code == 200, unsnoozed.text
    assert (unsnoozed.json()["data"]["version"], unsnoozed.json()["data"]["snoozed_until"]) == (3, None)
    later = format_timestamp(datetime.now(UTC) + timedelta(hours=1))
    again = await command(
        client, people, people.bob, second["id"], "snooze", expected_version=2, confirm=True, until=later
    )
    assert again.status_code == 200 and again.json()["data"]["snoozed_until"] == later
    await relay_pass(temporal_client, settings)
    # The two 2-second timers fire and find nothing to do: one notification is back, the other snoozed anew.
    rows = await db.fetch(
        "SELECT workflow_id FROM notification_snoozes WHERE notification_id = ANY($1::text[]) AND until < $2",
        [first["id"], second["id"]],
        datetime.now(UTC) + timedelta(minutes=1),
    )
    assert len(rows) == 2
    outcomes = [await temporal_client.get_workflow_handle(r["workflow_id"]).result() for r in rows]
    assert outcomes == ["ended", "ended"]
    one = await bob_detail(client, people, first["id"])
    two = await bob_detail(client, people, second["id"])
    assert (one["version"], one["snoozedUntil"]) == (3, None)  # its timer found it back already
    assert (two["version"], two["snoozedUntil"]) == (3, later)  # its first timer found another snooze
    assert [h["command"] for h in two["history"]] == ["snooze", "snooze"]
    assert [e.payload["version"] for e in await _updates(people, second["id"])] == [2, 3]


async def test_snooze_refusals_change_nothing(client: httpx.AsyncClient, people: People, notify: Notify) -> None:
    created = await notify()
    cases: list[tuple[dict[str, Any], int, str]] = [
        ({"expected_version": 1, "for": "PT1H"}, 422, "confirmation_required"),
        ({"expected_version": 1, "for": "PT1H", "confirm": False}, 422, "confirmation_required"),
        ({"expected_version": 1, "confirm": True}, 422, "validation_failed"),
        (
            {"expected_version": 1, "for": "PT1H", "until": "2030-01-01T00:00:00Z", "confirm": True},
            422,
            "validation_failed",
        ),
        ({"expected_version": 1, "for": "P1M", "confirm": True}, 422, "validation_failed"),
        ({"expected_version": 1, "until": "2020-01-01T00:00:00Z", "confirm": True}, 422, "validation_failed"),
        ({"expected_version": 5, "for": "PT1H", "confirm": True}, 409, "version_conflict"),
        ({"expected_version": 1, "for": 3600, "confirm": True}, 400, "invalid_request"),
    ]
    for body, status, code in cases:
        response = await command(client, people, people.bob, created["id"], "snooze", **body)
        assert (response.status_code, response.json()["code"]) == (status, code), (body, response.text)
    not_snoozed = await command(client, people, people.bob, created["id"], "unsnooze", expected_version=1)
    assert not_snoozed.status_code == 409 and not_snoozed.json()["code"] == "invalid_transition"
    assert not_snoozed.json()["allowed_actions"] == ["read", "snooze"]
    others = await command(
        client, people, people.alice, created["id"], "snooze", expected_version=1, confirm=True, **{"for": "PT1H"}
    )
    assert others.status_code == 404
    detail = await bob_detail(client, people, created["id"])
    assert (detail["version"], detail["snoozedUntil"], detail["history"]) == (1, None, [])
    assert await _updates(people, created["id"]) == []


async def test_a_dismissed_notification_cannot_be_snoozed_and_dismissing_ends_a_snooze(
    client: httpx.AsyncClient, people: People, notify: Notify
) -> None:
    created = await notify()
    moves: list[tuple[str, dict[str, Any]]] = [
        ("read", {}),
        ("acknowledge", {"confirm": True}),
        ("snooze", {"confirm": True, "for": "PT1H"}),
    ]
    for version, (name, extra) in enumerate(moves, start=1):
        assert (
            await command(client, people, people.bob, created["id"], name, expected_version=version, **extra)
        ).status_code == 200
    dismissed = await command(client, people, people.bob, created["id"], "dismiss", expected_version=4, confirm=True)
    assert dismissed.status_code == 200 and dismissed.json()["data"]["status"] == "dismissed"
    detail = await bob_detail(client, people, created["id"])
    assert (detail["status"], detail["snoozedUntil"], detail["allowedActions"]) == ("dismissed", None, [])
    assert (await _updates(people, created["id"]))[-1].payload["changed_fields"] == ["status", "snoozedUntil"]
    refused = await command(
        client, people, people.bob, created["id"], "snooze", expected_version=5, confirm=True, **{"for": "PT1H"}
    )
    assert refused.status_code == 409 and refused.json()["code"] == "invalid_transition"
    assert refused.json()["detail"] == "A dismissed notification cannot be snoozed."


async def test_a_snoozed_unread_notification_is_not_counted_nor_read_by_read_all_but_may_still_be_read(
    client: httpx.AsyncClient, people: People, notify: Notify
) -> None:
    quiet, loud = await notify(body="quiet"), await notify(body="loud")
    assert (
        await command(
            client, people, people.bob, quiet["id"], "snooze", expected_version=1, confirm=True, **{"for": "PT1H"}
        )
    ).status_code == 200
    assert (await inbox(client, people, people.bob))["unreadCount"] == 1
    read_all = await client.post(
        "/api/v1/notifications/read-all", json={}, headers=people.headers(people.bob, **idem())
    )
    assert read_all.json()["data"]["read"] == 1
    assert (await bob_detail(client, people, quiet["id"]))["status"] == "unread"
    assert (await bob_detail(client, people, loud["id"]))["status"] == "read"
    read = await command(client, people, people.bob, quiet["id"], "read", expected_version=2)
    assert read.status_code == 200 and read.json()["data"]["status"] == "read"
    assert (await bob_detail(client, people, quiet["id"]))["snoozedUntil"] is not None
    unsnoozed = await command(client, people, people.bob, quiet["id"], "unsnooze", expected_version=3)
    assert unsnoozed.status_code == 200
    assert (await inbox(client, people, people.bob))["unreadCount"] == 0


async def test_a_snooze_retried_after_its_answer_was_lost_answers_that_snooze_and_snoozes_once(
    client: httpx.AsyncClient, people: People, notify: Notify
) -> None:
    created = await notify()
    key = uuid.uuid4().hex
    url = f"/api/v1/notifications/{created['id']}/snooze"
    body = {"expected_version": 1, "for": "PT1H", "confirm": True}
    first = await client.post(url, json=body, headers=people.headers(people.bob, **{"Idempotency-Key": key}))
    assert first.status_code == 200, first.text
    await lose_the_answer(key)
    retried = await client.post(url, json=body, headers=people.headers(people.bob, **{"Idempotency-Key": key}))
    assert retried.status_code == 200 and retried.json() == first.json()
    detail = await bob_detail(client, people, created["id"])
    assert (detail["version"], len(detail["history"])) == (2, 1)


SNOOZE_DRAFT = """
mutation ($input: DraftNotificationChangeInput!) {
  draftNotificationChange(input: $input) {
    ok errors { code message } id command fromStatus toStatus snoozeFor snoozeUntil valid
    validationErrors { path message } conflicts exactCommand
  }
}
"""
SNOOZE_APPLY = """
mutation ($input: ApplyNotificationChangeInput!) {
  applyNotificationChange(input: $input) {
    ok notification { id status version snoozedUntil history { command via } } operation { command }
    errors { code message }
  }
}
"""


async def test_graphql_drafts_a_snooze_that_changes_nothing_and_applies_it_once(
    client: httpx.AsyncClient, people: People, notify: Notify
) -> None:
    created = await notify()
    headers = people.headers(people.bob)

    async def graphql(query: str, **variables: Any) -> Any:
        response = await client.post("/graphql", json={"query": query, "variables": variables}, headers=headers)
        assert response.status_code == 200, response.text
        return response.json()["data"]

    bad = (
        await graphql(
            SNOOZE_DRAFT, input={"notificationId": created["id"], "requestedOutcome": "snoozed", "expectedVersion": 1}
        )
    )["draftNotificationChange"]
    assert bad["valid"] is False and bad["validationErrors"][0]["path"] == "snoozeUntil"
    draft = (
        await graphql(
            SNOOZE_DRAFT,
            input={
                "notificationId": created["id"],
                "requestedOutcome": "snoozed",
                "expectedVersion": 1,
                "snoozeFor": "pt2h",
            },
        )
    )["draftNotificationChange"]
    assert draft["valid"] is True and (draft["command"], draft["fromStatus"], draft["toStatus"]) == (
        "snooze",
        "unread",
        "unread",
    )
    assert draft["snoozeFor"] == "PT2H" and draft["snoozeUntil"] is None
    assert draft["exactCommand"]["rest"]["path"] == f"/api/v1/notifications/{created['id']}/snooze"
    assert draft["exactCommand"]["rest"]["body"] == {"expected_version": 1, "for": "PT2H", "confirm": True}
    assert (await bob_detail(client, people, created["id"]))["version"] == 1
    applied = (
        await graphql(
            SNOOZE_APPLY,
            input={
                "proposalId": draft["id"],
                "expectedVersion": 1,
                "idempotencyKey": uuid.uuid4().hex,
                "confirm": True,
            },
        )
    )["applyNotificationChange"]
    assert applied["ok"] is True, applied
    notification = applied["notification"]
    assert (notification["status"], notification["version"]) == ("unread", 2)
    until = datetime.fromisoformat(notification["snoozedUntil"])
    assert timedelta(minutes=119) < until - datetime.now(UTC) <= timedelta(hours=2)  # counted from the apply
    assert notification["history"] == [{"command": "snooze", "via": "graphql"}]
    assert applied["operation"]["command"] == "snooze"
    listed = await graphql("{ notificationList(filter: {snoozed: true}) { totalCount nodes { id snoozedUntil } } }")
    assert (
        listed["notificationList"]["totalCount"] == 1 and listed["notificationList"]["nodes"][0]["id"] == created["id"]
    )
    rest = await graphql("{ notificationList { totalCount } }")
    assert rest["notificationList"]["totalCount"] == 0


async def test_mcp_drafts_and_applies_snooze_and_unsnooze(api_url: str, people: People, notify: Notify) -> None:
    created = await notify()
    async with mcp_session(api_url, people.bob.key) as session:
        until = format_timestamp(datetime.now(UTC) + timedelta(days=1))
        draft = tool_json(
            await session.call_tool(
                "draft_notifications_messaging_change",
                {
                    "notification_id": created["id"],
                    "requested_outcome": "snoozed",
                    "expected_version": 1,
                    "snooze_until": until,
                },
            )
        )["data"]
        assert draft["valid"] is True and draft["snoozeUntil"] == until
        applied = tool_json(
            await session.call_tool(
                "apply_notifications_messaging_change",
                {
                    "proposal_id": draft["id"],
                    "expected_version": 1,
                    "idempotency_key": uuid.uuid4().hex,
                    "confirm": True,
                },
            )
        )
        assert (applied["data"]["snoozedUntil"], applied["data"]["version"]) == (until, 2)
        inbox_view = tool_json(
            await session.call_tool("get_notifications_messaging", {"view": "inbox", "snoozed": True})
        )
        assert [n["id"] for n in inbox_view["data"]] == [created["id"]]
        draft = tool_json(
            await session.call_tool(
                "draft_notifications_messaging_change",
                {"notification_id": created["id"], "requested_outcome": "unsnoozed", "expected_version": 2},
            )
        )["data"]
        assert draft["valid"] is True and draft["command"] == "unsnooze"
        applied = tool_json(
            await session.call_tool(
                "apply_notifications_messaging_change",
                {
                    "proposal_id": draft["id"],
                    "expected_version": 2,
                    "idempotency_key": uuid.uuid4().hex,
                    "confirm": True,
                },
            )
        )
        assert (applied["data"]["snoozedUntil"], applied["data"]["version"]) == (None, 3)
        assert [h["via"] for h in applied["data"]["history"]] == ["mcp", "mcp"]
