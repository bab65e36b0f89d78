"""The Temporal dev server stopped and started again under load: runs and deliveries continue afterwards
(worker and API keep running), and while it is down the API answers what needs it with a coded 503 and
`Retry-After` — never a 500, never a hang. A run created meanwhile is accepted (stored `queued`) and
started by the worker's sweep once Temporal is back."""

from __future__ import annotations

import time
import uuid
from collections import Counter

import httpx

from tests.reliability.load import (
    RUN_EVENTS,
    contribute_sources,
    create_endpoint,
    delete_endpoint,
    idem,
    start_runs,
    wait_passages,
    wait_runs_ready,
)
from tests.reliability.processes import READY_TIMEOUT, OwnStack, wait_until
from tests.reliability.receiver import ThreadedReceiver

ANSWER_SECONDS = 25.0


def _assert_coded_503(response: httpx.Response) -> None:
    assert response.status_code == 503, response.text
    assert int(response.headers["retry-after"]) > 0
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["code"] == "service_unavailable", response.text


def test_temporal_restart_under_load_runs_and_deliveries_continue_503_meanwhile(stack: OwnStack) -> None:
    assert stack.api is not None and stack.worker is not None
    pids = (stack.api.pid, stack.worker.pid)
    receiver = ThreadedReceiver().up()
    with stack.client(timeout=ANSWER_SECONDS + 5) as client:
        endpoint = create_endpoint(client, receiver.url, RUN_EVENTS)
        project_id = client.get("/api/v1/projects").json()["data"][0]["id"]
        try:
            [reviewable] = start_runs(client, 1)
            wait_runs_ready(client, [reviewable], timeout=60)
            before = start_runs(client, 10)  # in flight when Temporal goes
            stack.temporal.stop(10)

            slowest = 0.0
            started = time.monotonic()
            ready = client.get("/health/ready")
            assert ready.status_code == 503 and int(ready.headers["retry-after"]) > 0, ready.text
            action = client.post(
                f"/api/v1/work-item-enhancements/{reviewable}/actions",
                params={"wait": 0},
                json={"action": "risk_check", "confirm": True},
                headers=idem(),
            )
            slowest = max(slowest, time.monotonic() - started)
            _assert_coded_503(action)
            started = time.monotonic()
            headers = {"Authorization": f"Bearer {stack.provider_key()}", **idem()}
            source = {
                "project_id": project_id,
                "uri": f"reliability/outage-{uuid.uuid4().hex[:8]}.md",
                "kind": "markdown",
                "content": "# Sent while the workflow service is down\n\nIt is stored; ingestion waits.\n",
            }
            contributed = httpx.post(
                f"{stack.internal_url}/internal/v1/corpus/sources",
                params={"wait": 0},
                json=source,
                headers=headers,
                timeout=ANSWER_SECONDS + 5,
            )
            slowest = max(slowest, time.monotonic() - started)
            _assert_coded_503(contributed)
            started = time.monotonic()
            during = start_runs(client, 5)  # accepted and stored; started by the sweep later
            slowest = max(slowest, time.monotonic() - started)
            assert slowest < ANSWER_SECONDS

            stack.temporal.start()
            stack.temporal.wait_ready(READY_TIMEOUT)
            wait_until(stack.ready, timeout=60, what="the API to be ready again")
            wait_runs_ready(client, before + during, timeout=180)

            def delivered() -> bool:
                got = {(e["payload"].get("run_id"), e["type"]) for e in receiver.events.values()}
                return {(r, t) for r in before + during for t in RUN_EVENTS} <= got

            wait_until(delivered, timeout=120, what="every run's events at the receiver")
            facts = [
                (e["payload"]["run_id"], e["type"])
                for e in receiver.events.values()
                if e["payload"].get("run_id") in set(before + during)
            ]
            repeated = {fact: n for fact, n in Counter(facts).items() if n > 1}
            assert not repeated and len(facts) == 2 * len(before + during), (repeated, len(facts))

            # What the outage refused works when sent again.
            token = f"tango{uuid.uuid4().hex[:10]}"
            contribute_sources(stack, project_id, [token])
            wait_passages(client, project_id, [token], 2, timeout=60)
            assert (stack.api.pid, stack.worker.pid) == pids and stack.api.alive() and stack.worker.alive()
            print(f"temporal restart: {len(before)} runs in flight and {len(during)} created during the outage")
        finally:
            delete_endpoint(client, endpoint)
            receiver.down()
