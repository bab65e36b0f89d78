"""E-mail and chat: real SMTP and HTTP receivers on 127.0.0.1, preferences, action links, digests."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from groundwork.persistence import db
from groundwork.persistence.repositories.notifications import deliveries as notification_deliveries
from groundwork.platform.secrets.keyring import KeyRing
from groundwork.services.notifications.actions import issue_token
from groundwork.services.notifications.fanout import NotificationFanout
from tests.conftest import idem
from tests.integration.notifications.conftest import (
    Mailbox,
    People,
    Person,
    SendingStack,
    command,
    inbox,
    start_thread,
    wait_until,
)
from tests.integration.webhooks.conftest import Receiver, receivers  # noqa: F401 (fixture)


async def _prefer(client: httpx.AsyncClient, people: People, person: Person, document: dict[str, Any]) -> Any:
    response = await client.put("/api/v1/notifications/preferences", json=document, headers=people.headers(person))
    assert response.status_code == 200, response.text
    return response.json()["data"]


async def _notified(client: httpx.AsyncClient, people: People, person: Person, count: int = 1) -> list[dict[str, Any]]:
    async def arrived() -> bool:
        return len((await inbox(client, people, person))["data"]) >= count

    await wait_until(arrived, what=f"{count} notification(s) for {person.name}")
    return list((await inbox(client, people, person))["data"])


def _email(address: str, **extra: Any) -> dict[str, Any]:
    return {"channels": {"email": {"enabled": True, "address": address, **extra}}}


async def test_an_email_reaches_a_real_smtp_server_and_its_action_link_acknowledges_once(
    client: httpx.AsyncClient, people: People, mailbox: Mailbox, sending: SendingStack
) -> None:
    await _prefer(client, people, people.bob, _email("bob@example.test"))
    await start_thread(client, people, people.alice, [people.bob], "Please confirm the cut-over date.")
    [notification] = await _notified(client, people, people.bob)
    [mail] = await mailbox.wait_for(1)
    assert mail["To"] == "bob@example.test" and mail["Subject"] == notification["title"]
    assert mail["X-Groundwork-Notification"] == notification["id"]
    [link] = mailbox.action_links(mail)
    shown = await client.get(link, headers={"accept": "text/html"})
    assert shown.status_code == 200 and '<form method="post">' in shown.text
    assert (await inbox(client, people, people.bob))["data"][0]["status"] == "unread"  # GET never acts
    used = await client.post(link)
    assert used.status_code == 200, used.text
    assert used.json()["data"]["status"] == "acknowledged" and used.json()["data"]["version"] == 3
    again = await client.post(link)
    assert again.status_code == 410 and again.json()["code"] == "action_link_used"
    page = await client.get(link, headers={"accept": "text/html"})
    assert page.status_code == 410 and "already used" in page.text and "<form" not in page.text
    detail = (
        await client.get(f"/api/v1/notifications/{notification['id']}", headers=people.headers(people.bob))
    ).json()["data"]
    assert [(h["from"], h["to"], h["via"], h["actorId"]) for h in detail["history"]] == [
        ("unread", "read", "email", people.bob.id),
        ("read", "acknowledged", "email", people.bob.id),
    ]
    [delivery] = await notification_deliveries.deliveries_of(notification["id"])
    assert (delivery.channel, delivery.status, delivery.attempts) == ("email", "sent", 1)


async def test_a_forged_expired_or_stale_action_link_changes_nothing(
    client: httpx.AsyncClient, people: People, notify: Callable[..., Awaitable[dict[str, Any]]]
) -> None:
    notification = await notify()
    keyring = KeyRing.parse(__import__("os").environ["GROUNDWORK_SECRET_KEY"])
    now = datetime.now(UTC)

    def token(**overrides: Any) -> str:
        values = {
            "notification_id": notification["id"],
            "recipient_id": people.bob.id,
            "version": 1,
            "channel": "email",
            "now": now,
        }
        return issue_token(keyring, **{**values, **overrides})

    forged = token()[:-4] + "AAAA"
    assert (await client.post(f"/api/v1/notification-actions/{forged}")).status_code == 404
    other_key = KeyRing.parse(KeyRing.generate_text())
    foreign = issue_token(
        other_key, notification_id=notification["id"], recipient_id=people.bob.id, version=1, channel="email", now=now
    )
    assert (await client.post(f"/api/v1/notification-actions/{foreign}")).status_code == 404
    expired = await client.post(f"/api/v1/notification-actions/{token(now=now - timedelta(days=8))}")
    assert expired.status_code == 410 and expired.json()["code"] == "action_link_expired"
    stale = await client.post(f"/api/v1/notification-actions/{token(version=5)}")
    assert stale.status_code == 409 and stale.json()["code"] == "version_conflict"
    someone_else = await client.post(f"/api/v1/notification-actions/{token(recipient_id=people.carol.id)}")
    assert someone_else.status_code == 404
    current = (await inbox(client, people, people.bob))["data"][0]
    assert (current["status"], current["version"]) == ("unread", 1)
    still_usable = await client.post(f"/api/v1/notification-actions/{token()}")
    assert still_usable.status_code == 200 and still_usable.json()["data"]["status"] == "acknowledged"


async def test_preferences_stop_email_but_never_in_app(
    client: httpx.AsyncClient, people: People, mailbox: Mailbox, sending: SendingStack
) -> None:
    turned_off = await _prefer(
        client,
        people,
        people.bob,
        {**_email("bob@example.test"), "events": {"message.posted": {"email": False}}},
    )
    assert turned_off["events"]["message.posted"] == {"email": False, "chat": True}
    refused = await client.put(
        "/api/v1/notifications/preferences",
        json={"channels": {"in_app": {"enabled": False}}},
        headers=people.headers(people.bob),
    )
    assert refused.status_code == 422 and refused.json()["errors"][0]["path"] == "channels.in_app.enabled"
    await start_thread(client, people, people.alice, [people.bob], "first")
    [first] = await _notified(client, people, people.bob)
    assert await notification_deliveries.deliveries_of(first["id"]) == []
    await _prefer(client, people, people.bob, {"channels": {"email": {"enabled": False, "address": "b@example.test"}}})
    await start_thread(client, people, people.alice, [people.bob], "second")
    await _notified(client, people, people.bob, 2)
    await _prefer(client, people, people.bob, _email("bob@example.test"))
    await start_thread(client, people, people.alice, [people.bob], "third")
    await _notified(client, people, people.bob, 3)
    [mail] = await mailbox.wait_for(1)
    assert "third" in mail.get_body(preferencelist=("plain",)).get_content()  # type: ignore[union-attr]
    await asyncio.sleep(0.5)
    assert len(mailbox.messages) == 1


async def test_chat_posts_text_to_the_incoming_webhook_and_its_url_is_sealed_at_rest(
    client: httpx.AsyncClient,
    people: People,
    sending: SendingStack,
    receivers: Callable[[], Awaitable[Receiver]],  # noqa: F811
) -> None:
    receiver = await receivers()
    document = await _prefer(
        client, people, people.bob, {"channels": {"chat": {"enabled": True, "webhook_url": receiver.url}}}
    )
    assert document["channels"]["chat"] == {"enabled": True, "webhook_url": receiver.url}
    stored = await db.fetchrow(
        "SELECT chat_webhook_url FROM notification_preferences WHERE principal_id = $1", people.bob.id
    )
    assert stored is not None and receiver.url.encode() not in bytes(stored["chat_webhook_url"])
    await start_thread(client, people, people.alice, [people.bob], "Chat me")
    [request] = await receiver.wait_for(1)
    text = __import__("json").loads(request.body)["text"]
    assert "Chat me" in text and "/api/v1/notification-actions/" in text
    link = text.split("Acknowledge: ")[1].split()[0]
    assert (await client.post(link)).json()["data"]["status"] == "acknowledged"
    history = (
        await client.get(
            f"/api/v1/notifications/{(await inbox(client, people, people.bob))['data'][0]['id']}",
            headers=people.headers(people.bob),
        )
    ).json()["data"]["history"]
    assert {h["via"] for h in history} == {"chat"}


async def test_an_hourly_digest_sends_one_mail_for_its_window_when_the_timer_fires(
    client: httpx.AsyncClient, people: People, mailbox: Mailbox, sending: SendingStack, temporal_client: Any
) -> None:
    # The sending stack's "hour" lasts 2 s: the same workflow and durable timer, compressed.
    await _prefer(client, people, people.bob, _email("bob@example.test", digest="hourly"))
    for n in range(3):
        await start_thread(client, people, people.alice, [people.bob], f"digest item {n}")
    notifications = await _notified(client, people, people.bob, 3)

    async def all_sent() -> bool:
        rows = [d for n in notifications for d in await notification_deliveries.deliveries_of(n["id"])]
        return len(rows) == 3 and all(d.status == "sent" for d in rows)

    await wait_until(all_sent, timeout=20, what="the digest")
    delivered = [d for n in notifications for d in await notification_deliveries.deliveries_of(n["id"])]
    windows = {d.digest_id for d in delivered}
    assert all(d.workflow_id is None for d in delivered)  # sent by their digest's workflow, not their own
    mails = await mailbox.wait_for(len(windows))
    assert len(windows) <= 2 and len(mails) == len(windows)  # three items, split by at most one window boundary
    texts = [m.get_body(preferencelist=("plain",)).get_content() for m in mails]  # type: ignore[union-attr]
    assert sorted(line.split("digest item ")[1] for t in texts for line in t.splitlines() if "digest item" in line) == [
        "0",
        "1",
        "2",
    ]
    mail = mails[0]
    assert "hourly digest" in mail["Subject"]
    workflows = [
        w.id
        async for w in temporal_client.list_workflows(
            f"WorkflowType = 'NotificationDigestWorkflow' AND GroundworkRecipient = '{people.bob.id}'"
        )
    ]
    assert workflows and all(w.startswith(f"ntdg_{people.bob.id}_hourly_") for w in workflows)


async def test_sends_whose_start_was_lost_are_started_by_the_sweep(
    client: httpx.AsyncClient, people: People, mailbox: Mailbox, sending: SendingStack
) -> None:
    await _prefer(client, people, people.bob, _email("bob@example.test"))
    # As if a relay died between its commit and the workflow start: the delivery row exists, no workflow.
    [fanout] = [c for c in sending.relay.consumers if isinstance(c, NotificationFanout)]
    original = fanout.start_consumed

    async def died() -> int:
        fanout._pending.deliveries.clear()
        return 0

    fanout.start_consumed = died  # type: ignore[method-assign]
    try:
        await start_thread(client, people, people.alice, [people.bob], "lost start")
        [notification] = await _notified(client, people, people.bob)
        [delivery] = await notification_deliveries.deliveries_of(notification["id"])
        assert delivery.workflow_started_at is None
    finally:
        fanout.start_consumed = original  # type: ignore[method-assign]
    [mail] = await mailbox.wait_for(1, timeout=20)
    assert mail["X-Groundwork-Notification"] == notification["id"]


async def test_commands_from_an_action_link_need_no_key_but_others_do(
    client: httpx.AsyncClient, people: People
) -> None:
    response = await client.post("/api/v1/notifications/read-all", json={}, headers=idem())
    assert response.status_code == 401
    unknown = await client.get("/api/v1/notification-actions/not-a-token", headers={"accept": "text/html"})
    assert unknown.status_code == 404 and "cannot be used" in unknown.text
    people_cmd = await command(client, people, people.bob, "notification_missing", "read", expected_version=1)
    assert people_cmd.status_code == 404
