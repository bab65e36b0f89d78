"""`groundwork webhooks tail` prints delivery attempts from PostgreSQL."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable

import httpx

from groundwork.platform.outbox.relay import OutboxRelay
from tests.conftest import Workspace
from tests.integration.webhooks.conftest import Receiver, create_endpoint, delivery_of, emit, wait_until


def _groundwork(dsn: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DATABASE_URL": dsn}
    return subprocess.run(
        [sys.executable, "-m", "groundwork.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


async def test_tail_prints_each_attempt_with_its_answer(
    database: str,
    client: httpx.AsyncClient,
    workspace: Workspace,
    relay: OutboxRelay,
    receivers: Callable[[], Awaitable[Receiver]],
) -> None:
    key = await workspace.key(admin=True)
    receiver = await receivers()
    receiver.answer(500)
    endpoint = await create_endpoint(client, workspace, key, receiver.url, ["notification.*"])
    event_id = await emit(workspace, "notification.created")
    await receiver.wait_for(2)

    async def succeeded() -> bool:
        return (await delivery_of(client, workspace, key, endpoint["id"]))[0]["status"] == "succeeded"

    await wait_until(succeeded, what="the delivery")
    done = await asyncio.to_thread(
        _groundwork, database, "webhooks", "tail", "--no-follow", "--workspace", workspace.slug
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 2
    assert " #1  500 " in lines[0] and " #2  200 " in lines[1] and lines[1].count(" ok ") == 1
    assert all(event_id in line and endpoint["id"] in line and workspace.slug in line for line in lines)
    last = await asyncio.to_thread(
        _groundwork, database, "webhooks", "tail", "--no-follow", "-n", "1", "--endpoint", endpoint["id"]
    )
    assert last.stdout.splitlines() == lines[1:]
    unknown = await asyncio.to_thread(_groundwork, database, "webhooks", "tail", "--workspace", "no-such-ws")
    assert unknown.returncode == 2 and "no-such-ws" in unknown.stderr
