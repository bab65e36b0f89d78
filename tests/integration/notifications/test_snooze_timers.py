"""The relay's snooze step (`SnoozeTimers`): a snooze's timer is started after its commit, a start that was lost
is made by the sweep once, and a snooze whose timer was terminated is ended by the sweep."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest

from groundwork.config import Settings
from groundwork.persistence import db
from groundwork.platform.outbox.relay import OutboxRelay
from groundwork.services.notifications.snooze_timers import SnoozeTimers
from tests.integration.notifications.conftest import People, bob_detail, command, inbox, relay_pass, wait_until

Notify = Callable[..., Awaitable[dict[str, Any]]]
pytestmark = pytest.mark.usefixtures("worker")


async def test_a_snooze_whose_timer_start_was_lost_is_started_by_the_sweep_once_and_comes_back(
    client: httpx.AsyncClient, people: People, notify: Notify, temporal_client: Any, settings: Settings
) -> None:
    created = await notify()

    async def unreachable() -> Any:
        raise ConnectionError("Temporal is down")

    # The relay commits the snooze's event but cannot reach Temporal: the timer is left for the sweep.
    down = OutboxRelay(settings.database_url, [SnoozeTimers(unreachable, settings)], restart_grace_seconds=0)
    snoozed = await command(
        client, people, people.bob, created["id"], "snooze", expected_version=1, confirm=True, **{"for": "PT2S"}
    )
    assert snoozed.status_code == 200, snoozed.text
    await down.run_once()
    [row] = await db.fetch(
        "SELECT workflow_id, workflow_started_at FROM notification_snoozes WHERE notification_id = $1", created["id"]
    )
    assert row["workflow_started_at"] is None

    async def reachable() -> Any:
        return temporal_client

    timers = SnoozeTimers(reachable, settings)
    assert await timers.restart_stranded(grace_seconds=0) == 1
    assert await timers.restart_stranded(grace_seconds=0) == 0  # started once, never twice
    assert created["id"] not in [n["id"] for n in (await inbox(client, people, people.bob))["data"]]

    async def back() -> bool:
        return created["id"] in [n["id"] for n in (await inbox(client, people, people.bob))["data"]]

    await wait_until(back, timeout=20, what="the snoozed notification back in the inbox")
    detail = await bob_detail(client, people, created["id"])
    assert (detail["snoozedUntil"], detail["status"]) == (None, created["status"])
    assert [(h["command"], h["via"]) for h in detail["history"]] == [("snooze", "rest"), ("wake", "timer")]


async def test_a_snooze_whose_timer_was_terminated_is_ended_by_the_relay_s_sweep(
    client: httpx.AsyncClient, people: People, notify: Notify, temporal_client: Any, settings: Settings
) -> None:
    created = await notify()
    snoozed = await command(
        client, people, people.bob, created["id"], "snooze", expected_version=1, confirm=True, **{"for": "PT1S"}
    )
    assert snoozed.status_code == 200
    await relay_pass(temporal_client, settings)
    [row] = await db.fetch("SELECT workflow_id FROM notification_snoozes WHERE notification_id = $1", created["id"])
    await temporal_client.get_workflow_handle(row["workflow_id"]).terminate(reason="an operator's mistake")

    async def client_factory() -> Any:
        return temporal_client

    # A sweep that looks 0.2 s past a snooze's end (the worker's waits a minute); no stranded start to redo.
    sweep = OutboxRelay(
        settings.database_url, [SnoozeTimers(client_factory, settings, overdue_seconds=0.2)], restart_grace_seconds=3600
    )
    await asyncio.sleep(1.5)
    assert created["id"] not in [n["id"] for n in (await inbox(client, people, people.bob))["data"]]
    await sweep.run_once()
    detail = await bob_detail(client, people, created["id"])
    assert (detail["version"], detail["snoozedUntil"]) == (3, None)
    assert [(h["command"], h["via"]) for h in detail["history"]] == [("snooze", "rest"), ("wake", "timer")]
    await sweep.run_once()  # nothing more to do
    assert (await bob_detail(client, people, created["id"]))["version"] == 3
