"""PostgreSQL stopped and started again under load: the API and the worker recover without a restart of
their own, nothing committed is lost, and every request during the outage gets a coded 503 with
`Retry-After` at once — never a 500, never a hang."""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any

import httpx

from tests.reliability.load import RUN_EVENTS, create_endpoint, delete_endpoint, start_runs, wait_runs_ready
from tests.reliability.processes import OwnStack, wait_until
from tests.reliability.receiver import ThreadedReceiver

# No answer may take longer than this, outage or not (a hang would).
ANSWER_SECONDS = 15.0
OUTAGE_SECONDS = 4.0


@dataclass
class Answer:
    """One request of the load and what came back."""

    key: str
    status: int
    seconds: float
    retry_after: str | None
    media_type: str
    body: dict[str, Any]


class WriteLoad:
    """Creates work items one after another (each with its own Idempotency-Key) until stopped."""

    def __init__(self, client: httpx.Client, project_id: str) -> None:
        self.client = client
        self.project_id = project_id
        self.answers: list[Answer] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def send(self, key: str) -> Answer:
        started = time.monotonic()
        try:
            response = self.client.post(
                "/api/v1/work-items",
                json={"project_id": self.project_id, "title": f"Written under fault {key}", "status": "todo"},
                headers={"Idempotency-Key": key},
            )
        except httpx.HTTPError as exc:  # no answer, or a broken one: status 0 fails the test
            return Answer(key, 0, time.monotonic() - started, None, "", {"error": repr(exc)})
        return Answer(
            key,
            response.status_code,
            time.monotonic() - started,
            response.headers.get("retry-after"),
            response.headers.get("content-type", ""),
            response.json(),
        )

    def _run(self) -> None:
        while not self.stop.is_set():
            self.answers.append(self.send(uuid.uuid4().hex))
            time.sleep(0.05)


def test_postgres_restart_under_load_loses_nothing_and_answers_503_meanwhile(stack: OwnStack) -> None:
    assert stack.postgres is not None and stack.api is not None and stack.worker is not None
    pids = (stack.api.pid, stack.worker.pid)
    receiver = ThreadedReceiver().up()
    with stack.client(timeout=ANSWER_SECONDS + 5) as client:
        endpoint = create_endpoint(client, receiver.url, RUN_EVENTS)
        project_id = client.get("/api/v1/projects").json()["data"][0]["id"]
        load = WriteLoad(client, project_id)
        try:
            before = start_runs(client, 10)  # in flight when the database goes
            load.thread.start()
            wait_until(lambda: len(load.answers) >= 20, timeout=60, what="the load to run")
            stack.postgres.stop()
            outage_started = time.monotonic()
            during: list[Answer] = []
            while time.monotonic() - outage_started < OUTAGE_SECONDS:
                during.append(load.send(uuid.uuid4().hex))
                for path in ("/api/v1/projects", "/api/v1/work-items?limit=1"):
                    started = time.monotonic()
                    response = client.get(path)
                    during.append(
                        Answer(
                            path,
                            response.status_code,
                            time.monotonic() - started,
                            response.headers.get("retry-after"),
                            response.headers.get("content-type", ""),
                            response.json(),
                        )
                    )
                time.sleep(0.2)
            graphql = client.post("/graphql", json={"query": "{ projects { id } }"})
            stack.postgres.start()

            # Recovered on their own: new writes succeed and runs started now complete.
            recovering_from = len(load.answers)
            wait_until(
                lambda: any(a.status == 201 for a in load.answers[recovering_from:]),
                timeout=60,
                what="writes to succeed again",
            )
            after = start_runs(client, 5)
            load.stop.set()
            load.thread.join(ANSWER_SECONDS + 5)
            wait_runs_ready(client, before + after, timeout=180)

            def delivered() -> bool:
                got = {(e["payload"].get("run_id"), e["type"]) for e in receiver.events.values()}
                return {(r, t) for r in before + after for t in RUN_EVENTS} <= got

            wait_until(delivered, timeout=120, what="every run's events at the receiver")

            answers = load.answers + during
            assert (stack.api.pid, stack.worker.pid) == pids and stack.api.alive() and stack.worker.alive()
            unavailable = [a for a in answers if a.status == 503]
            assert len([a for a in during if a.status == 503]) == len(during) > 0, during
            unexpected = [a for a in answers if a.status not in (200, 201, 503)]  # status 0: no answer at all
            assert not unexpected, unexpected
            for answer in unavailable:
                assert answer.retry_after and int(answer.retry_after) > 0, answer
                assert answer.media_type.startswith("application/problem+json"), answer
                assert answer.body["code"] == "service_unavailable" and answer.body["status"] == 503, answer
            assert max(a.seconds for a in answers) < ANSWER_SECONDS
            assert graphql.status_code == 503 and graphql.json()["code"] == "service_unavailable", graphql.text

            # Nothing committed is lost: every work item answered 201 is there.
            created = [a.body["data"]["id"] for a in load.answers if a.status == 201]
            for item_id in created:
                assert client.get(f"/api/v1/work-items/{item_id}").status_code == 200, item_id
            print(
                f"postgres restart: {len(answers)} requests, {len(unavailable)} answered 503, "
                f"{len(created)} writes committed and all found, slowest answer {max(a.seconds for a in answers):.2f} s"
            )
        finally:
            load.stop.set()
            delete_endpoint(client, endpoint)
            receiver.down()
