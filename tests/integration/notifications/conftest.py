"""Notification fixtures: people in a fresh workspace, notifications made the real way, a real SMTP server.

Notifications exist only through domain facts, so tests make them as users do: a thread posted
through the API, then one pass of the real outbox relay (which creates the notifications in its
claim transaction).
"""

from __future__ import annotations

import asyncio
import dataclasses
import email
import email.policy
import re
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from email.message import EmailMessage
from typing import Any

import httpx
import pytest
from aiosmtpd.controller import Controller

from groundwork.config import Settings
from groundwork.platform.outbox.relay import OutboxRelay
from groundwork.worker import build_worker, outbox_relay
from tests.conftest import Workspace, free_port, idem

READ_ALL = ["notifications:read", "notifications:write", "notifications:operate"]


@dataclass
class Person:
    """A principal of the test workspace with a key."""

    name: str
    id: str
    key: str


@dataclass
class People:
    """Alice and Bob share ALPHA; Carol is only on BETA; Dana is a workspace admin."""

    workspace: Workspace
    alice: Person
    bob: Person
    carol: Person
    dana: Person

    def headers(self, person: Person, **extra: str) -> dict[str, str]:
        return self.workspace.headers(person.key, **extra)


@pytest.fixture
async def people(workspace: Workspace) -> People:
    async def person(name: str, memberships: dict[str, str], admin: bool = False) -> Person:
        key = await workspace.key(name, None, admin=admin, memberships=memberships)
        return Person(name, workspace.principals[name], key)

    return People(
        workspace,
        alice=await person("alice", {"ALPHA": "lead"}),
        bob=await person("bob", {"ALPHA": "contributor"}),
        carol=await person("carol", {"BETA": "viewer"}),
        dana=await person("dana", {}, admin=True),
    )


async def relay_pass(temporal_client: Any, settings: Settings) -> None:
    """One pass of the real outbox relay: notifications are created from every undispatched event."""
    await outbox_relay(temporal_client, settings).run_once()


async def start_thread(
    client: httpx.AsyncClient, people: People, sender: Person, to: list[Person], body: str = "Hello", **extra: Any
) -> dict[str, Any]:
    """POST a thread; returns the thread resource."""
    response = await client.post(
        "/api/v1/messages",
        json={
            "title": extra.pop("title", "Release plan"),
            "participant_ids": [p.id for p in to],
            "body": body,
            **extra,
        },
        headers=people.headers(sender, **idem()),
    )
    assert response.status_code == 201, response.text
    return dict(response.json()["data"])


async def inbox(client: httpx.AsyncClient, people: People, person: Person, **params: Any) -> dict[str, Any]:
    """GET the person's notifications (the whole answer)."""
    response = await client.get("/api/v1/notifications", params=params, headers=people.headers(person))
    assert response.status_code == 200, response.text
    return dict(response.json())


@pytest.fixture
def notify(
    client: httpx.AsyncClient, people: People, temporal_client: Any, settings: Settings
) -> Callable[..., Awaitable[dict[str, Any]]]:
    """Make one notification for `recipient` (Bob by default) from a message by Alice; returns it as REST shows it."""

    async def make(recipient: Person | None = None, body: str = "Can you review the plan?") -> dict[str, Any]:
        target = recipient or people.bob
        await start_thread(client, people, people.alice, [target], body)
        await relay_pass(temporal_client, settings)
        return dict((await inbox(client, people, target, limit=1))["data"][0])

    return make


async def bob_detail(client: httpx.AsyncClient, people: People, notification_id: str) -> dict[str, Any]:
    """GET one of Bob's notifications (its `data`)."""
    response = await client.get(f"/api/v1/notifications/{notification_id}", headers=people.headers(people.bob))
    assert response.status_code == 200, response.text
    return dict(response.json()["data"])


async def command(
    client: httpx.AsyncClient, people: People, person: Person, notification_id: str, name: str, **body: Any
) -> httpx.Response:
    """POST a lifecycle command with a fresh Idempotency-Key."""
    return await client.post(
        f"/api/v1/notifications/{notification_id}/{name}", json=body, headers=people.headers(person, **idem())
    )


async def wait_until(check: Callable[[], Awaitable[bool]], timeout: float = 15.0, what: str = "condition") -> None:
    """Poll `check` until it holds."""
    deadline = time.monotonic() + timeout
    while not await check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


# ---------------------------------------------------------------------------------------------- e-mail


@dataclass
class Mailbox:
    """A real SMTP server (aiosmtpd) on 127.0.0.1 that keeps every message it accepts."""

    port: int = field(default_factory=free_port)
    messages: list[EmailMessage] = field(default_factory=list)
    # Set to hold the next DATA answer until the event is set (a send "in flight").
    hold: asyncio.Event | None = None
    held: int = 0
    _controller: Controller | None = None

    @property
    def url(self) -> str:
        return f"smtp://127.0.0.1:{self.port}"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        if self.hold is not None and not self.hold.is_set():
            self.held += 1
            await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self.hold.wait(), self._loop))
            return "451 try again later"  # the sender is gone by now; nothing was accepted
        self.messages.append(email.message_from_bytes(envelope.content, policy=email.policy.default))  # type: ignore[arg-type]
        return "250 accepted"

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._controller = Controller(self, hostname="127.0.0.1", port=self.port)
        self._controller.start()

    def stop(self) -> None:
        if self._controller is not None:
            self._controller.stop()

    async def wait_for(self, count: int, timeout: float = 15.0) -> list[EmailMessage]:
        deadline = time.monotonic() + timeout
        while len(self.messages) < count:
            assert time.monotonic() < deadline, f"{len(self.messages)} of {count} mails arrived"
            await asyncio.sleep(0.05)
        return self.messages

    def action_links(self, message: EmailMessage) -> list[str]:
        text = message.get_body(preferencelist=("plain",)).get_content()  # type: ignore[union-attr]
        return re.findall(r"Acknowledge: (\S+)", text)


@pytest.fixture
async def mailbox() -> AsyncIterator[Mailbox]:
    box = Mailbox()
    box.start()
    yield box
    if box.hold is not None:
        box.hold.set()
    box.stop()


@dataclass
class SendingStack:
    """A worker and a relay of their own (own task queue) that send e-mail to the mailbox."""

    settings: Settings
    relay: OutboxRelay


@pytest.fixture
async def sending(
    mailbox: Mailbox, settings: Settings, temporal_client: Any, api_url: str
) -> AsyncIterator[SendingStack]:
    configured = dataclasses.replace(
        settings,
        temporal_task_queue=f"notify-{uuid.uuid4().hex[:8]}",
        smtp_url=mailbox.url,
        public_url=api_url,
        notification_retry_seconds=0.2,
        notification_heartbeat_seconds=2.0,
        digest_hourly_seconds=2,
        webhook_allow_private=True,
        webhook_sweep_seconds=0.5,
    )
    worker = build_worker(temporal_client, configured.temporal_task_queue, settings=configured)
    worker_task = asyncio.create_task(worker.run())
    relay = outbox_relay(temporal_client, configured, restart_grace_seconds=0.5)
    stop = asyncio.Event()
    relay_task = asyncio.create_task(relay.run(stop))
    yield SendingStack(configured, relay)
    stop.set()
    await relay_task
    await worker.shutdown()
    await worker_task
