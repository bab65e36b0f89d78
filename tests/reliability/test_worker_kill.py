"""`kill -9` of the worker in the middle of 50 enhancement runs, 100 webhook deliveries and a corpus ingest:
after a restart every run reaches review, every event is delivered, the ingest completes; nothing is done
twice beyond at-least-once delivery (one event per fact, one draft per action, one passage per paragraph).

(tests/integration/notifications/test_worker_death.py kills a worker mid-SMTP-send; this covers the
other durable work.)"""

from __future__ import annotations

import time
import uuid

from tests.reliability.load import (
    RUN_EVENTS,
    contribute_sources,
    create_endpoint,
    delete_endpoint,
    drafts_per_run,
    run_states,
    start_runs,
    wait_passages,
    wait_runs_ready,
    work_items,
)
from tests.reliability.processes import OwnStack, wait_until
from tests.reliability.receiver import ThreadedReceiver

RUNS = 50
SOURCES = 10
PASSAGES_PER_SOURCE = 2


def test_worker_killed_mid_load_loses_no_run_delivery_or_passage(stack: OwnStack) -> None:
    # A slow receiver: deliveries are certainly in flight when the worker dies.
    receiver = ThreadedReceiver(delay_seconds=1.0).up()
    with stack.client() as client:
        endpoint = create_endpoint(client, receiver.url, RUN_EVENTS)
        project_id = client.get("/api/v1/projects").json()["data"][0]["id"]
        tokens = [f"kilo{uuid.uuid4().hex[:10]}" for _ in range(SOURCES)]
        try:
            worker = stack.worker
            assert worker is not None
            # Everything is queued while the worker is frozen; it then works for a moment and dies mid-way.
            worker.freeze()
            run_ids = start_runs(client, RUNS)
            contribute_sources(stack, project_id, tokens)
            worker.thaw()
            # Killed at the first sign of progress: a finished run (one of a sample, a few GETs a poll) or a
            # delivery. Runs finish fast enough that waiting for the first delivery alone can find all done.
            sample = run_ids[:: RUNS // 5]

            def progressed() -> bool:
                return bool(receiver.requests) or "ready_for_review" in run_states(client, sample).values()

            wait_until(progressed, timeout=120, what="the first finished run or delivery", interval=0.05)
            worker.kill()
            states_at_kill = run_states(client, run_ids)
            delivered_at_kill = len(receiver.events)
            unfinished = [r for r, s in states_at_kill.items() if s != "ready_for_review"]
            assert unfinished and delivered_at_kill < 2 * RUNS, (states_at_kill, delivered_at_kill)

            time.sleep(1)  # the API keeps answering without a worker; nothing moves
            worker.start()
            wait_runs_ready(client, run_ids, timeout=240)
            wait_passages(client, project_id, tokens, PASSAGES_PER_SOURCE, timeout=120)

            def all_delivered() -> bool:
                ours = [e for e in receiver.events.values() if e["payload"].get("run_id") in set(run_ids)]
                return len(ours) >= 2 * RUNS

            wait_until(all_delivered, timeout=120, what=f"{2 * RUNS} webhook events at the receiver")
            ours = [e for e in receiver.events.values() if e["payload"].get("run_id") in set(run_ids)]
            # One event per fact: a queued and a completed event per run, none twice under another id.
            facts = sorted((e["payload"]["run_id"], e["type"]) for e in ours)
            assert len(facts) == len(set(facts)) == 2 * RUNS, facts
            # At most one draft per action (a re-run activity never adds a second), and the same count for every
            # run of one work item (an item that already holds what the action drafts gets none, every time).
            drafts = drafts_per_run(client, run_ids)
            assert set(drafts.values()) <= {0, 1} and 1 in drafts.values(), drafts
            items = len(work_items(client))
            per_item = {n % items: {drafts[r] for r in run_ids[n % items :: items]} for n in range(len(run_ids))}
            assert all(len(counts) == 1 for counts in per_item.values()), per_item
            print(
                f"worker kill: {len(unfinished)}/{RUNS} runs and {2 * RUNS - delivered_at_kill}/{2 * RUNS} "
                f"deliveries in flight at the kill; {receiver.duplicates()} repeated webhook-id(s) at the receiver"
            )
        finally:
            delete_endpoint(client, endpoint)
            receiver.down()
