"""A worker process killed (SIGKILL) in the middle of an SMTP send loses no notification and no mail."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import httpx

from groundwork.config import Settings
from groundwork.persistence.repositories.notifications import deliveries as notification_deliveries
from groundwork.worker import build_worker
from tests.integration.notifications.conftest import Mailbox, People, inbox, start_thread, wait_until


async def test_a_worker_killed_mid_send_loses_no_notification_and_no_mail(
    client: httpx.AsyncClient,
    people: People,
    mailbox: Mailbox,
    settings: Settings,
    temporal_client: Any,
    api_url: str,
    tmp_path: Path,
) -> None:
    queue = f"kill-{uuid.uuid4().hex[:8]}"
    response = await client.put(
        "/api/v1/notifications/preferences",
        json={"channels": {"email": {"enabled": True, "address": "bob@example.test"}}},
        headers=people.headers(people.bob),
    )
    assert response.status_code == 200, response.text
    mailbox.hold = asyncio.Event()  # the SMTP server keeps the first message in flight
    env = {
        **os.environ,
        "DATABASE_URL": settings.database_url,
        "TEMPORAL_ADDRESS": settings.temporal_address,
        "TEMPORAL_TASK_QUEUE": queue,
        "GROUNDWORK_SMTP_URL": mailbox.url,
        "GROUNDWORK_PUBLIC_URL": api_url,
        "GROUNDWORK_NOTIFICATION_HEARTBEAT_SECONDS": "2",
        "GROUNDWORK_NOTIFICATION_RETRY_SECONDS": "0.2",
        "GROUNDWORK_WEBHOOK_SWEEP_SECONDS": "0.5",
        "GROUNDWORK_INDEX_DIR": str(tmp_path / "index"),
    }
    log = (tmp_path / "worker.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "groundwork.cli", "worker"], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    replacement = None
    running: asyncio.Task[None] | None = None
    try:
        await start_thread(client, people, people.alice, [people.bob], "Sent while the worker dies")

        async def in_flight() -> bool:
            assert process.poll() is None, (tmp_path / "worker.log").read_text()
            return mailbox.held == 1

        await wait_until(in_flight, timeout=30, what="the worker's relay and its send to reach the SMTP server")
        process.kill()  # SIGKILL: no cleanup, no chance to record anything
        process.wait()
        [notification] = (await inbox(client, people, people.bob))["data"]
        [delivery] = await notification_deliveries.deliveries_of(notification["id"])
        assert delivery.status == "pending" and mailbox.messages == []

        mailbox.hold.set()  # the server is healthy again; the dead worker's connection is gone
        configured = dataclasses.replace(settings, temporal_task_queue=queue, smtp_url=mailbox.url, public_url=api_url)
        replacement = build_worker(temporal_client, queue, settings=configured)
        running = asyncio.create_task(replacement.run())
        [mail] = await mailbox.wait_for(1, timeout=30)
        assert mail["X-Groundwork-Notification"] == notification["id"]

        async def recorded() -> bool:
            return (await notification_deliveries.deliveries_of(notification["id"]))[0].status == "sent"

        await wait_until(recorded, what="the delivery to be recorded as sent")
        await asyncio.sleep(0.5)
        assert len(mailbox.messages) == 1
        assert len((await inbox(client, people, people.bob))["data"]) == 1
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        log.close()
        if replacement is not None and running is not None:
            await replacement.shutdown()
            await running
