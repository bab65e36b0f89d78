"""The load the fault tests put on a stack: enhancement runs, webhook deliveries, corpus ingests, through
the public and internal APIs exactly as clients send them."""

from __future__ import annotations

import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from tests.reliability.processes import OwnStack, wait_until

RUN_EVENTS = ["work_item_enhancement.queued", "work_item_enhancement.completed"]


def idem() -> dict[str, str]:
    return {"Idempotency-Key": uuid.uuid4().hex}


def work_items(client: httpx.Client) -> list[dict[str, Any]]:
    """The demo's work items that have a description to draft from (not the bare ones other tests create)."""
    listed: list[dict[str, Any]] = client.get("/api/v1/work-items", params={"limit": 100}).json()["data"]
    items = [item for item in listed if item["fields"].get("description")]
    assert items, "the demo has no work items with a description"
    return items


def start_runs(client: httpx.Client, count: int, *, action: str = "requirements") -> list[str]:
    """Start `count` enhancement runs at once (wait=0), spread over the demo's work items; their ids."""
    items = work_items(client)

    def start(n: int) -> str:
        body = {"target": {"type": "work_item", "id": items[n % len(items)]["id"]}, "actions": [action]}
        response = client.post(
            "/api/v1/work-item-enhancements", params={"wait": 0}, json={**body, "confirm": True}, headers=idem()
        )
        assert response.status_code in (201, 202), response.text
        run_id: str = response.json()["data"]["id"]
        return run_id

    with ThreadPoolExecutor(max_workers=10) as pool:
        return list(pool.map(start, range(count)))


def run_states(client: httpx.Client, run_ids: list[str]) -> dict[str, str]:
    states = {}
    for run_id in run_ids:
        response = client.get(f"/api/v1/work-item-enhancements/{run_id}")
        states[run_id] = response.json()["data"]["state"] if response.status_code == 200 else str(response.status_code)
    return states


def wait_runs_ready(client: httpx.Client, run_ids: list[str], *, timeout: float) -> None:
    """Every run reaches `ready_for_review`; none fails on the way."""
    pending = set(run_ids)
    states: dict[str, str] = {}

    def all_ready() -> bool:
        states.update(run_states(client, sorted(pending)))
        failed = {r: s for r, s in states.items() if s in ("failed", "expired")}
        assert not failed, f"runs failed: {failed}"
        pending.difference_update(r for r, s in states.items() if s == "ready_for_review")
        return not pending

    wait_until(
        all_ready,
        timeout=timeout,
        what=f"{len(run_ids)} runs to reach ready_for_review",
        interval=1.0,
        details=lambda: {r: states.get(r) for r in sorted(pending)},
    )


def drafts_per_run(client: httpx.Client, run_ids: list[str]) -> dict[str, int]:
    return {r: len(client.get(f"/api/v1/work-item-enhancements/{r}/drafts").json()["data"]) for r in run_ids}


def create_endpoint(client: httpx.Client, url: str, event_types: list[str]) -> str:
    response = client.post("/api/v1/webhook-endpoints", json={"url": url, "event_types": event_types}, headers=idem())
    assert response.status_code == 201, response.text
    endpoint_id: str = response.json()["data"]["id"]
    return endpoint_id


def delete_endpoint(client: httpx.Client, endpoint_id: str) -> None:
    client.delete(f"/api/v1/webhook-endpoints/{endpoint_id}", headers=idem())


def contribute_sources(stack: OwnStack, project_id: str, tokens: list[str]) -> None:
    """One corpus source per token through the internal API (wait=0: the ingest runs on in the worker)."""
    headers = {"Authorization": f"Bearer {stack.provider_key()}"}
    with httpx.Client(base_url=stack.internal_url, headers=headers, timeout=30) as internal:
        for token in tokens:
            text = (
                f"# Runbook {token}\n\nThe {token} procedure restarts the settlement export.\n\n"
                f"## Checks\n\nAfter {token} the operator confirms the file arrived.\n"
            )
            body = {"project_id": project_id, "uri": f"reliability/{token}.md", "kind": "markdown", "content": text}
            response = internal.post("/internal/v1/corpus/sources", params={"wait": 0}, json=body, headers=idem())
            assert response.status_code in (200, 201, 202), response.text


def passages_found(client: httpx.Client, project_id: str, token: str) -> int:
    """How many passages a search for `token` finds in the project (-1 when search does not answer 200)."""
    response = client.post(
        "/api/v1/context/search",
        json={"subject_ref": {"type": "project", "id": project_id}, "query": token, "limit": 20},
    )
    if response.status_code != 200:
        return -1
    return int(response.json()["totalCount"])


def wait_passages(client: httpx.Client, project_id: str, tokens: list[str], per_source: int, *, timeout: float) -> None:
    """Every source's passages are found, each exactly once."""
    pending = set(tokens)
    last: dict[str, int] = {}

    def all_found() -> bool:
        for token in sorted(pending):
            found = last[token] = passages_found(client, project_id, token)
            assert found <= per_source, f"{token}: {found} passages, more than the {per_source} it has"
            if found == per_source:
                pending.discard(token)
        return not pending

    wait_until(
        all_found,
        timeout=timeout,
        what=f"{len(tokens)} sources to be searchable",
        interval=1.0,
        details=lambda: {t: last.get(t) for t in sorted(pending)},
    )


def elapsed(since: float) -> float:
    return round(time.monotonic() - since, 1)
