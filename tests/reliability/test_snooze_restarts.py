"""A snooze's durable timer outlives a `kill -9` of the worker and a restart of the Temporal server: the
notification stays out of the inbox until its snooze ends and comes back on time, announced once
(`notification.updated` with `changed_fields: ["snoozedUntil"]`), by the timer (`via: timer`)."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import httpx

from tests.reliability.load import create_endpoint, delete_endpoint, idem
from tests.reliability.processes import READY_TIMEOUT, OwnStack, wait_until
from tests.reliability.receiver import ThreadedReceiver

# Long enough for the kill and both restarts to finish before it ends on a loaded 2-core machine.
SNOOZE_SECONDS = 30
# "On time": back within this much of the snooze's end (the timer fires at the end; the wake is one activity).
ON_TIME = timedelta(seconds=5)


def _timer_started(dsn: str, notification_id: str) -> bool:
    async def started() -> bool:
        connection = await asyncpg.connect(dsn)
        try:
            row = await connection.fetchrow(
                "SELECT workflow_started_at FROM notification_snoozes WHERE notification_id = $1"
                " ORDER BY created_at DESC LIMIT 1",
                notification_id,
            )
        finally:
            await connection.close()
        return row is not None and row["workflow_started_at"] is not None

    return asyncio.run(started())


def _listed(client: httpx.Client, **params: Any) -> list[str]:
    response = client.get("/api/v1/notifications", params={"limit": 100, **params})
    assert response.status_code == 200, response.text
    return [n["id"] for n in response.json()["data"]]


def test_a_snooze_survives_a_worker_kill_and_a_temporal_restart_and_comes_back_on_time(stack: OwnStack) -> None:
    assert stack.worker is not None and stack.postgres is not None
    receiver = ThreadedReceiver().up()
    with stack.client() as client:
        endpoint = create_endpoint(client, receiver.url, ["notification.updated"])
        try:
            inbox = client.get("/api/v1/notifications", params={"limit": 100}).json()["data"]
            target = next(n for n in inbox if n["status"] != "dismissed")
            snoozed = client.post(
                f"/api/v1/notifications/{target['id']}/snooze",
                json={"expected_version": target["version"], "for": f"PT{SNOOZE_SECONDS}S", "confirm": True},
                headers=idem(),
            )
            assert snoozed.status_code == 200, snoozed.text
            until = datetime.fromisoformat(snoozed.json()["data"]["snoozed_until"])
            version = snoozed.json()["data"]["version"]
            wait_until(
                lambda: _timer_started(stack.postgres.dsn, target["id"]),  # type: ignore[union-attr]
                timeout=30,
                what="the worker's relay to start the snooze's timer",
            )

            started = time.monotonic()
            stack.worker.kill()
            stack.temporal.stop(10)
            stack.temporal.start()
            stack.temporal.wait_ready(READY_TIMEOUT)
            stack.worker.start()
            wait_until(stack.ready, timeout=60, what="the API to be ready again")
            restarted = datetime.now(UTC)
            print(f"snooze: worker killed and Temporal restarted in {time.monotonic() - started:.1f} s")
            assert restarted < until - timedelta(seconds=3), "the restarts took longer than the snooze; lengthen it"
            assert target["id"] not in _listed(client) and target["id"] in _listed(client, snoozed="true")

            wait_until(
                lambda: target["id"] in _listed(client),
                timeout=SNOOZE_SECONDS + 60,
                interval=0.1,
                what="the snoozed notification to come back",
            )
            back = datetime.now(UTC)
            print(f"snooze: back {(back - until).total_seconds():.2f} s after its end")
            assert back >= until, f"back {until - back} early"
            assert back - until <= ON_TIME, f"back {back - until} after its end"
            detail = client.get(f"/api/v1/notifications/{target['id']}").json()["data"]
            assert (detail["status"], detail["version"], detail["snoozedUntil"]) == (
                target["status"],
                version + 1,
                None,
            )
            assert [(h["command"], h["via"]) for h in detail["history"][-2:]] == [("snooze", "rest"), ("wake", "timer")]

            def announced() -> list[dict[str, Any]]:
                return [e for e in receiver.events.values() if e["resource"]["id"] == target["id"]]

            wait_until(lambda: len(announced()) >= 2, timeout=60, what="the snooze and its end at the receiver")
            time.sleep(1)  # a second announcement of the end would arrive by now
            updates = sorted((e["payload"]["version"], e["payload"]["changed_fields"]) for e in announced())
            assert updates == [(version, ["snoozedUntil"]), (version + 1, ["snoozedUntil"])], updates
        finally:
            delete_endpoint(client, endpoint)
            receiver.down()
