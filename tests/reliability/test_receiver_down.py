"""A webhook receiver down for most of the (compressed) retry window, then up: every event is delivered,
once per `webhook-id` at the receiver after deduplication, and no attempt answered 2xx is repeated."""

from __future__ import annotations

import time
from typing import Any

from tests.reliability.conftest import WEBHOOK_SCHEDULE
from tests.reliability.load import RUN_EVENTS, create_endpoint, delete_endpoint, start_runs, wait_runs_ready
from tests.reliability.processes import OwnStack, wait_until
from tests.reliability.receiver import ThreadedReceiver

RUNS = 20


def test_receiver_down_for_the_retry_window_then_up_gets_every_event_once(stack: OwnStack) -> None:
    receiver = ThreadedReceiver()  # not listening: every attempt is refused
    window = sum(float(s) for s in WEBHOOK_SCHEDULE.split(","))
    with stack.client() as client:
        endpoint = create_endpoint(client, receiver.url, RUN_EVENTS)
        try:
            run_ids = start_runs(client, RUNS)
            wait_runs_ready(client, run_ids, timeout=120)
            down_since = time.monotonic()

            def deliveries() -> list[dict[str, Any]]:
                answer = client.get(f"/api/v1/webhook-endpoints/{endpoint}/deliveries", params={"limit": 100})
                assert answer.status_code == 200, answer.text
                rows: list[dict[str, Any]] = answer.json()["data"]
                return rows

            def attempts_failing() -> bool:
                rows = deliveries()
                return len(rows) >= 2 * RUNS and all(d["attemptCount"] >= 2 for d in rows)

            wait_until(attempts_failing, timeout=60, what="every delivery to have failed at least twice")
            # Down for most of the window (every attempt so far refused), then up before the last attempt.
            time.sleep(max(0.0, window * 0.5 - (time.monotonic() - down_since)))
            receiver.up()

            def all_delivered() -> bool:
                return {(e["payload"]["run_id"], e["type"]) for e in receiver.events.values()} >= {
                    (r, t) for r in run_ids for t in RUN_EVENTS
                }

            wait_until(all_delivered, timeout=90, what=f"{2 * RUNS} events at the receiver")
            ours = [e for e in receiver.events.values() if e["payload"]["run_id"] in set(run_ids)]
            assert len(ours) == 2 * RUNS  # one event per fact after deduplication by webhook-id

            def all_succeeded() -> bool:
                rows = deliveries()
                return len(rows) == 2 * RUNS and all(d["status"] == "succeeded" for d in rows)

            wait_until(all_succeeded, timeout=30, what="every delivery to be recorded as succeeded")
            time.sleep(1)
            # A 2xx ends a delivery: nothing arrives twice once the receiver answered.
            assert receiver.duplicates() == 0, receiver.duplicates()
            print(f"receiver down: {2 * RUNS} events, all delivered after the receiver came back, 0 duplicates")
        finally:
            delete_endpoint(client, endpoint)
            receiver.down()
