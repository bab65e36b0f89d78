"""Webhook test fixtures: real HTTP receivers on 127.0.0.1, a relay with a compressed schedule, events."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
import uvicorn

from groundwork.config import Settings
from groundwork.persistence import db
from groundwork.persistence.repositories.platform import outbox
from groundwork.platform import http_targets as webhook_targets
from groundwork.platform.outbox.relay import OutboxRelay
from groundwork.worker import outbox_relay
from tests.conftest import Workspace, free_port, idem

# Fast enough for tests, long enough to see the order: 4 attempts within about a second.
TEST_SCHEDULE = (0.0, 0.2, 0.3, 0.4)


@dataclass
class Received:
    """One request as the receiver saw it."""

    path: str
    headers: dict[str, str]
    body: bytes
    at: float = field(default_factory=time.monotonic)


class Receiver:
    """A real HTTP server on 127.0.0.1 that records every request and answers as scripted."""

    def __init__(self, port: int | None = None) -> None:
        self.port = port or free_port()
        self.requests: list[Received] = []
        self.script: list[tuple[int, dict[str, str]]] = []
        self.default_status = 200
        self._server: uvicorn.Server | None = None
        self._task: asyncio.Task[None] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def answer(self, *statuses: int, headers: dict[str, str] | None = None) -> None:
        """Answer the next requests with these statuses (then `default_status`)."""
        self.script.extend((status, headers or {}) for status in statuses)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        self.requests.append(Received(scope["path"], headers, b"".join(chunks)))
        status, extra = self.script.pop(0) if self.script else (self.default_status, {})
        raw_headers = [(b"content-type", b"text/plain")] + [(k.encode(), v.encode()) for k, v in extra.items()]
        await send({"type": "http.response.start", "status": status, "headers": raw_headers})
        await send({"type": "http.response.body", "body": f"answered {status}".encode()})

    async def start(self) -> None:
        config = uvicorn.Config(self, host="127.0.0.1", port=self.port, log_level="error", lifespan="off")
        self._server = uvicorn.Server(config)
        self._task = asyncio.create_task(self._server.serve())
        while not self._server.started:
            if self._task.done():
                self._task.result()
            await asyncio.sleep(0.01)

    async def stop(self) -> None:
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            await self._task
            self._server = self._task = None

    async def wait_for(self, count: int, timeout: float = 10.0) -> list[Received]:
        """Wait until at least `count` requests arrived; fail after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while len(self.requests) < count:
            assert time.monotonic() < deadline, f"{len(self.requests)} of {count} requests arrived"
            await asyncio.sleep(0.02)
        return self.requests


@pytest.fixture
async def receivers() -> AsyncIterator[Callable[[], Awaitable[Receiver]]]:
    """Start receivers on demand; all stop at the end of the test."""
    started: list[Receiver] = []

    async def make() -> Receiver:
        receiver = Receiver()
        await receiver.start()
        started.append(receiver)
        return receiver

    yield make
    for receiver in started:
        await receiver.stop()


@pytest.fixture
def webhook_settings(settings: Settings) -> Settings:
    """The session settings with the compressed schedule and loopback targets allowed."""
    return dataclasses.replace(
        settings, webhook_schedule=TEST_SCHEDULE, webhook_allow_private=True, webhook_sweep_seconds=0.5
    )


@pytest.fixture
async def relay(worker: Any, temporal_client: Any, webhook_settings: Settings) -> AsyncIterator[OutboxRelay]:
    """An outbox relay running in the background (LISTEN/NOTIFY and sweeps) for one test."""
    running = outbox_relay(temporal_client, webhook_settings, restart_grace_seconds=0.5)
    stop = asyncio.Event()
    task = asyncio.create_task(running.run(stop))
    yield running
    stop.set()
    await task


class FakeDns:
    """A resolver for the target checks (`webhook_targets.use_resolver`): names map to scripted answers."""

    def __init__(self) -> None:
        self.answers: dict[str, list[str]] = {}
        self.lookups: list[str] = []

    async def __call__(self, host: str, port: int) -> list[str]:
        self.lookups.append(host)
        if host not in self.answers:
            raise webhook_targets.ResolutionFailed(f"DNS lookup of {host} failed: no such name")
        return list(self.answers[host])


@pytest.fixture
def dns() -> Iterator[FakeDns]:
    """Every target check in this process (API and worker) resolves through a scripted DNS."""
    fake = FakeDns()
    with webhook_targets.use_resolver(fake):
        yield fake


async def emit(
    workspace: Workspace,
    type: str,
    payload: dict[str, Any] | None = None,
    *,
    project_id: str | None = None,
    private_to: str | None = None,
) -> str:
    """Commit one event the way a domain change does; returns its id.

    Without `project_id` or `private_to` the event is about the workspace as a whole, which only
    endpoints of workspace admins receive.
    """
    resource_type = type.split(".", 1)[0]
    async with db.transaction():
        return await outbox.append_event(
            type=type,
            workspace_id=workspace.id,
            resource_type=resource_type,
            resource_id=f"res-{time.monotonic_ns()}",
            actor_id=workspace.principals.get("admin"),
            payload=payload or {"n": 1},
            occurred_at=datetime.now(UTC),
            project_id=project_id,
            private_to=private_to,
        )


async def create_endpoint(
    client: httpx.AsyncClient, workspace: Workspace, key: str, url: str, event_types: list[str], **extra: Any
) -> dict[str, Any]:
    """Create an endpoint through the API; returns the resource with its secret."""
    response = await client.post(
        "/api/v1/webhook-endpoints",
        json={"url": url, "event_types": event_types, **extra},
        headers=workspace.headers(key, **idem()),
    )
    assert response.status_code == 201, response.text
    return dict(response.json()["data"])


async def wait_until(check: Callable[[], Awaitable[bool]], timeout: float = 10.0, what: str = "condition") -> None:
    """Poll `check` until it holds."""
    deadline = time.monotonic() + timeout
    while not await check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


async def delivery_of(client: httpx.AsyncClient, workspace: Workspace, key: str, endpoint_id: str) -> list[dict]:
    """The endpoint's deliveries through the API, newest first."""
    response = await client.get(f"/api/v1/webhook-endpoints/{endpoint_id}/deliveries", headers=workspace.headers(key))
    assert response.status_code == 200, response.text
    return list(response.json()["data"])
