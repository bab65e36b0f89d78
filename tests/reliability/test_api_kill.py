"""The API process killed (SIGKILL) in the middle of a request: the client's retry with the same
Idempotency-Key, once the API is back, gets the one result — the run the first attempt committed — and
no second run exists."""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any

import httpx

from tests.reliability.load import idem
from tests.reliability.processes import OwnStack, wait_until


def _retry_until_answered(client: httpx.Client, body: dict[str, Any], key: str) -> httpx.Response:
    """Send the request again with the same key, honouring 409 `idempotency_key_in_use` + `Retry-After`."""
    deadline = time.monotonic() + 60
    while True:
        response = client.post(
            "/api/v1/work-item-enhancements", params={"wait": 10}, json=body, headers={"Idempotency-Key": key}
        )
        if response.status_code != 409:
            return response
        assert response.json()["code"] == "idempotency_key_in_use", response.text
        assert time.monotonic() < deadline, "the key stayed in use"
        time.sleep(float(response.headers["retry-after"]))


def test_api_killed_mid_request_the_retry_with_the_same_key_gets_the_one_run(stack: OwnStack) -> None:
    assert stack.api is not None and stack.worker is not None
    with stack.client() as client:
        project_id = client.get("/api/v1/projects").json()["data"][0]["id"]
        created = client.post(
            "/api/v1/work-items",
            json={"project_id": project_id, "title": "Target of a request the API dies in", "status": "todo"},
            headers=idem(),
        )
        assert created.status_code == 201, created.text
        item_id = created.json()["data"]["id"]
        body = {"target": {"type": "work_item", "id": item_id}, "actions": ["requirements"], "confirm": True}
        key = uuid.uuid4().hex

        def runs_of_item() -> list[dict[str, Any]]:
            listed: list[dict[str, Any]] = client.get(
                "/api/v1/work-item-enhancements", params={"target_id": item_id}
            ).json()["data"]
            return listed

        # With the worker frozen the run cannot finish: the API commits it, then waits (wait=10) — and dies.
        stack.worker.freeze()
        first: list[BaseException | httpx.Response] = []

        def send_first() -> None:
            try:
                first.append(
                    httpx.post(
                        f"{stack.base_url}/api/v1/work-item-enhancements",
                        params={"wait": 10},
                        json=body,
                        headers={"Authorization": f"Bearer {stack.demo_key()}", "Idempotency-Key": key},
                        timeout=30,
                    )
                )
            except httpx.HTTPError as exc:
                first.append(exc)

        sender = threading.Thread(target=send_first)
        try:
            sender.start()
            [committed] = wait_until(runs_of_item, timeout=30, what="the first attempt to commit its run")
            stack.api.kill()
            sender.join(30)
            assert len(first) == 1 and isinstance(first[0], httpx.HTTPError), first  # the client got no answer
        finally:
            stack.worker.thaw()
        stack.api.start()
        stack.wait_ready()

        retried = _retry_until_answered(client, body, key)
        assert retried.status_code in (201, 202), retried.text
        assert retried.json()["data"]["id"] == committed["id"]
        again = _retry_until_answered(client, body, key)
        assert again.headers.get("idempotent-replayed") == "true", again.headers
        assert again.json()["data"]["id"] == committed["id"]
        assert [run["id"] for run in runs_of_item()] == [committed["id"]]  # one run, not two
        wait_until(
            lambda: (
                client.get(f"/api/v1/work-item-enhancements/{committed['id']}").json()["data"]["state"]
                == "ready_for_review"
            ),
            timeout=120,
            what="the run to complete",
        )
