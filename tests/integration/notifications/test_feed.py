"""The live feed (`GET /api/v1/notifications/stream`, Server-Sent Events): the caller's own changes within a second,
resumable from `Last-Event-ID`, heartbeats, a bounded number of streams per key, and nothing of anyone else's.

These tests serve an app of their own: streams of the session's app end after a second."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from groundwork.config import Settings
from groundwork.persistence import db
from groundwork.services.tenancy import api_keys
from tests.conftest import serving
from tests.integration.notifications.conftest import People, command, relay_pass, start_thread, wait_until

Notify = Callable[..., Awaitable[dict[str, Any]]]
HEARTBEAT = 0.5
PER_KEY = 2


@dataclass
class Event:
    """One Server-Sent Event (or a comment line), as a client parses it."""

    event: str = "message"
    id: str | None = None
    data: str = ""
    comment: str | None = None
    at: float = field(default_factory=time.monotonic)

    def json(self) -> Any:
        return json.loads(self.data)


class Stream:
    """An open stream: its response and every event received so far (read in the background)."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self.events: list[Event] = []
        self._arrived = asyncio.Event()
        self._reader = asyncio.create_task(self._read())
        self.ended = False

    async def _read(self) -> None:
        current = Event()
        with contextlib.suppress(httpx.HTTPError):
            async for line in self.response.aiter_lines():
                if line == "":
                    if current.data or current.event != "message" or current.id is not None:
                        self._add(current)
                    current = Event()
                elif line.startswith(":"):
                    self._add(Event(event="", comment=line[1:].strip()))
                else:
                    name, _, value = line.partition(":")
                    value = value.removeprefix(" ")
                    if name == "data":
                        current.data = f"{current.data}\n{value}" if current.data else value
                    elif name in ("event", "id"):
                        setattr(current, name, value)
        self.ended = True
        self._arrived.set()

    def _add(self, event: Event) -> None:
        self.events.append(event)
        self._arrived.set()

    def changes(self) -> list[Event]:
        return [e for e in self.events if e.event.startswith("notification.")]

    async def wait_for(self, check: Callable[[list[Event]], bool], timeout: float = 10.0) -> list[Event]:
        deadline = time.monotonic() + timeout
        while not check(self.events):
            assert not self.ended, f"the stream ended: {self.events}"
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"timed out; events so far: {self.events}"
            self._arrived.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._arrived.wait(), remaining)
        return self.events


@dataclass
class Feeds:
    """Streams opened against an app with a 0.5 s heartbeat, 30 s lifetime and 2 streams per key."""

    url: str
    client: httpx.AsyncClient
    _open: list[tuple[Any, Stream]] = field(default_factory=list)

    @contextlib.asynccontextmanager
    async def open(self, key: str, last_event_id: str | None = None) -> AsyncIterator[Stream]:
        headers = {"Authorization": f"Bearer {key}", "Accept": "text/event-stream"}
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        async with self.client.stream("GET", f"{self.url}/api/v1/notifications/stream", headers=headers) as response:
            assert response.status_code == 200, await response.aread()
            assert response.headers["content-type"].startswith("text/event-stream")
            stream = Stream(response)
            try:
                await stream.wait_for(lambda events: any(e.event in ("ready", "reset") for e in events))
                yield stream
            finally:
                stream._reader.cancel()


@pytest.fixture
async def feeds(settings: Settings) -> AsyncIterator[Feeds]:
    configured = dataclasses.replace(
        settings,
        notification_stream_heartbeat_seconds=HEARTBEAT,
        notification_stream_seconds=30.0,
        notification_streams_per_key=PER_KEY,
    )
    async with serving(configured) as url, httpx.AsyncClient(timeout=httpx.Timeout(30, read=None)) as client:
        yield Feeds(url, client)


async def test_the_stream_delivers_the_caller_s_change_within_a_second(
    feeds: Feeds, client: httpx.AsyncClient, people: People, notify: Notify, temporal_client: Any, settings: Settings
) -> None:
    created = await notify()
    async with feeds.open(people.bob.key) as stream:
        [ready] = stream.events
        assert ready.event == "ready" and ready.json()["resumed"] is False
        assert ready.json()["heartbeatSeconds"] == HEARTBEAT and ready.json()["resumeWindowSeconds"] == 86400
        moved_at = time.monotonic()
        assert (await command(client, people, people.bob, created["id"], "read", expected_version=1)).status_code == 200
        await stream.wait_for(lambda _: len(stream.changes()) == 1, timeout=5)
        [read] = stream.changes()
        assert read.at - moved_at < 1.0, f"the change took {read.at - moved_at:.2f} s"
        assert read.event == "notification.updated" and int(read.id or 0) == int(ready.id or 0) + 1
        data = read.json()
        assert data["changedFields"] == ["status"]
        assert (data["notification"]["id"], data["notification"]["status"], data["notification"]["version"]) == (
            created["id"],
            "read",
            2,
        )
        # A new notification, created by the worker's relay, arrives too; and a snooze.
        await start_thread(client, people, people.alice, [people.bob], "one more thing")
        await relay_pass(temporal_client, settings)
        snoozed = await command(
            client, people, people.bob, created["id"], "snooze", expected_version=2, confirm=True, **{"for": "PT1H"}
        )
        assert snoozed.status_code == 200
        await stream.wait_for(lambda _: len(stream.changes()) == 3, timeout=5)
        kinds = [(e.event, e.json()["changedFields"]) for e in stream.changes()]
        assert kinds[1:] == [("notification.created", []), ("notification.updated", ["snoozedUntil"])]
        assert stream.changes()[2].json()["notification"]["snoozedUntil"] == snoozed.json()["data"]["snoozed_until"]
        ids = [int(e.id or 0) for e in stream.changes()]
        assert ids == sorted(ids) and len(set(ids)) == 3


async def test_the_stream_resumes_from_last_event_id_with_exactly_what_it_missed(
    feeds: Feeds, client: httpx.AsyncClient, people: People, notify: Notify
) -> None:
    made = [await notify(body=f"message {n}") for n in range(3)]
    async with feeds.open(people.bob.key) as stream:
        assert (await command(client, people, people.bob, made[0]["id"], "read", expected_version=1)).status_code == 200
        await stream.wait_for(lambda _: len(stream.changes()) == 1)
        last = stream.changes()[-1].id
    # Disconnected: two more moves happen meanwhile.
    assert (await command(client, people, people.bob, made[1]["id"], "read", expected_version=1)).status_code == 200
    acknowledged = await command(
        client, people, people.bob, made[0]["id"], "acknowledge", expected_version=2, confirm=True
    )
    assert acknowledged.status_code == 200
    async with feeds.open(people.bob.key, last_event_id=last) as resumed:
        await resumed.wait_for(lambda _: len(resumed.changes()) == 2)
        ready = resumed.events[0]
        assert ready.event == "ready" and ready.json()["resumed"] is True and ready.id == last
        missed = [(e.event, e.json()["notification"]["id"], int(e.id or 0)) for e in resumed.changes()]
        assert missed == [
            ("notification.updated", made[1]["id"], int(last or 0) + 1),
            ("notification.acknowledged", made[0]["id"], int(last or 0) + 2),
        ]
        # Nothing after those: the next event is a heartbeat, not a repeat.
        await resumed.wait_for(lambda events: any(e.comment and e.comment.startswith("heartbeat") for e in events))
        assert len(resumed.changes()) == 2
    # Nothing happened since: resuming from the last id sends nothing again.
    async with feeds.open(people.bob.key, last_event_id=str(int(last or 0) + 2)) as idle:
        await idle.wait_for(lambda events: any(e.comment for e in events))
        assert idle.changes() == [] and idle.events[0].json()["resumed"] is True


async def test_an_id_the_stream_cannot_resume_from_gets_a_reset_and_a_malformed_one_is_refused(
    feeds: Feeds, client: httpx.AsyncClient, people: People, notify: Notify
) -> None:
    made = [await notify(body=f"message {n}") for n in range(2)]
    async with feeds.open(people.bob.key, last_event_id="999999") as never_sent:
        [reset] = never_sent.events
        assert reset.event == "reset" and "never sent" in reset.json()["reason"]
        assert reset.id == reset.json()["lastEventId"] == "2"  # two notifications created: changes 1 and 2
    # Changes past the resume window are purged: resuming from before them is a reset, not a silent gap.
    await db.execute("DELETE FROM notification_changes WHERE recipient_id = $1 AND seq <= 1", people.bob.id)
    assert (await command(client, people, people.bob, made[0]["id"], "read", expected_version=1)).status_code == 200
    async with feeds.open(people.bob.key, last_event_id="0") as too_old:
        [reset] = too_old.events
        assert reset.event == "reset" and "resume window" in reset.json()["reason"] and reset.id == "3"
    refused = await feeds.client.get(
        f"{feeds.url}/api/v1/notifications/stream",
        headers={"Authorization": f"Bearer {people.bob.key}", "Last-Event-ID": "seven"},
    )
    assert refused.status_code == 400 and refused.json()["errors"][0]["path"] == "Last-Event-ID"


async def test_another_principal_s_change_is_shown_to_nobody_else(
    feeds: Feeds, client: httpx.AsyncClient, people: People, notify: Notify
) -> None:
    bobs = await notify(body="for bob only")
    outsider = await people.workspace.key("eve", admin=True)  # a workspace admin sees no one else's inbox either
    async with (
        feeds.open(people.alice.key) as alice,
        feeds.open(people.carol.key) as carol,
        feeds.open(outsider) as admin,
        feeds.open(people.bob.key) as bob,
    ):
        moves: list[tuple[str, dict[str, Any]]] = [
            ("read", {}),
            ("acknowledge", {"confirm": True}),
            ("snooze", {"confirm": True, "for": "PT1H"}),
        ]
        for version, (name, extra) in enumerate(moves, start=1):
            moved = await command(client, people, people.bob, bobs["id"], name, expected_version=version, **extra)
            assert moved.status_code == 200
        await bob.wait_for(lambda _: len(bob.changes()) == 3)
        # Long enough for every other stream to have heard the same commits and beaten its heart since.
        beats = {s: len([e for e in s.events if e.comment]) for s in (alice, carol, admin)}
        for other in (alice, carol, admin):

            def beat_twice(events: list[Event], enough: int = beats[other] + 2) -> bool:
                return len([e for e in events if e.comment]) >= enough

            await other.wait_for(beat_twice)
            assert other.changes() == []
            assert bobs["id"] not in "".join(e.data for e in other.events)


async def test_heartbeats_keep_an_idle_stream_and_a_key_holds_a_bounded_number_of_streams(
    feeds: Feeds, people: People
) -> None:
    async with feeds.open(people.bob.key) as first, feeds.open(people.bob.key):
        await first.wait_for(lambda events: len([e for e in events if e.comment]) >= 2, timeout=3 * HEARTBEAT + 2)
        beats = [e.at for e in first.events if e.comment]
        assert beats[1] - beats[0] < HEARTBEAT * 2 + 0.5
        refused = await feeds.client.get(
            f"{feeds.url}/api/v1/notifications/stream", headers={"Authorization": f"Bearer {people.bob.key}"}
        )
        assert refused.status_code == 429 and refused.json()["code"] == "rate_limited"
        assert int(refused.headers["retry-after"]) >= 1 and f"{PER_KEY} open" in refused.json()["detail"]
        # Another key of the same principal has slots of its own.
        other_key = await people.workspace.key("bob", ["notifications:read"])
        async with feeds.open(other_key) as third:
            assert third.events[0].event == "ready"
    # Closed streams give their slots back as soon as the server sees the clients leave, not a lease (45 s) later.
    key_id = (await api_keys.resolve_key(people.bob.key)).api_key_id  # type: ignore[union-attr]

    async def slots_given_back() -> bool:
        held = await db.fetchrow("SELECT count(*) AS n FROM notification_stream_leases WHERE api_key_id = $1", key_id)
        return held is not None and held["n"] == 0

    await wait_until(slots_given_back, timeout=5, what="the closed streams' slots")
    async with feeds.open(people.bob.key), feeds.open(people.bob.key):
        pass


async def test_a_revoked_key_s_stream_ends(feeds: Feeds, client: httpx.AsyncClient, people: People) -> None:
    issued = await api_keys.issue_key(people.workspace.slug, "bob", ["notifications:read"])
    async with feeds.open(issued.key) as stream:
        assert await api_keys.revoke_key(issued.api_key_id)
        await stream.wait_for(lambda _: stream.ended, timeout=3 * HEARTBEAT + 5)
        assert stream.changes() == []


async def test_the_stream_needs_the_read_scope(feeds: Feeds, people: People) -> None:
    key = await people.workspace.key("bob", ["notifications:operate"])
    refused = await feeds.client.get(
        f"{feeds.url}/api/v1/notifications/stream", headers={"Authorization": f"Bearer {key}"}
    )
    assert refused.status_code == 403 and refused.json()["required_scope"] == "notifications:read"
