"""The optional chat-completions generator (against a fake endpoint), failures, and a worker killed mid-run."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from typing import Any

import httpx

from groundwork.config import Settings
from groundwork.persistence.repositories.platform import outbox
from groundwork.services.enhancement.chat_completions import ChatCompletionsEnhancer
from tests.conftest import Workspace
from tests.fakes.chat_completions import Script, chat_completions_endpoint
from tests.integration.enhancement.conftest import create_run, own_queue

ANSWER = {
    "drafts": [
        {"value": "- Tokens only; never store card numbers. [1]", "confidence": 0.8, "evidence": [1]},
        {"value": "An invented requirement with no source.", "confidence": 0.9, "evidence": []},
    ],
    "artifacts": [
        {
            "type": "requirements_trace",
            "title": "Trace",
            "summary": "One requirement.",
            "body": "R1 <- [1]",
            "evidence": [1],
        }
    ],
}


async def test_chat_completions_drafts_keep_only_cited_evidence(
    settings: Settings, temporal_client: Any, workspace: Workspace, work_item: dict[str, Any]
) -> None:
    key = await workspace.key("owner", admin=True)
    script = Script(answer=ANSWER)
    with chat_completions_endpoint(script) as base_url:
        enhancer = ChatCompletionsEnhancer(base_url, "test-model", "sk-test")
        async with own_queue(settings, temporal_client, enhancer) as (url, _), httpx.AsyncClient(base_url=url) as http:
            run = (await create_run(http, workspace, key, work_item["id"], ["requirements"])).json()["data"]
    assert run["state"] == "ready_for_review"
    [draft] = run["drafts"]
    assert draft["proposedValue"].startswith("- Tokens only") and draft["confidence"] == 0.8
    assert draft["evidenceRefs"] == [{"kind": "work_item", "id": work_item["id"]}]
    digest = next(a for a in run["artifacts"] if a["type"] == "evidence_digest")
    assert "1 uncited draft(s) were dropped" in digest["summary"]
    [request] = script.requests
    assert request["path"] == "/v1/chat/completions" and request["auth"] == "Bearer sk-test"
    assert request["body"]["model"] == "test-model"
    assert "[1] (work item description)" in request["body"]["messages"][1]["content"]


async def test_a_refused_generation_fails_the_run_with_a_durable_error_code(
    settings: Settings, temporal_client: Any, workspace: Workspace, work_item: dict[str, Any]
) -> None:
    key = await workspace.key("owner", admin=True)
    with chat_completions_endpoint(Script(status=400)) as base_url:
        enhancer = ChatCompletionsEnhancer(base_url, "test-model", None)
        async with own_queue(settings, temporal_client, enhancer) as (url, _), httpx.AsyncClient(base_url=url) as http:
            run = (await create_run(http, workspace, key, work_item["id"], ["design"])).json()["data"]
            operation = (await http.get(f"/api/v1/operations/{run['id']}", headers=workspace.headers(key))).json()[
                "data"
            ]
    assert run["state"] == "failed" and run["drafts"] == []
    assert run["error"]["code"] == "generation_rejected"
    assert [a["id"] for a in run["allowedActions"]] == ["read"]
    assert operation["status"] == "failed" and operation["error"]["code"] == "generation_rejected"
    failed = [
        e
        for e in await outbox.events_for_workspace(workspace.id)
        if e.type == "work_item_enhancement.failed" and e.resource_id == run["id"]
    ]
    assert [set(e.payload) for e in failed] == [{"run_id", "action", "error_code", "failed_at"}]
    assert failed[0].payload["error_code"] == "generation_rejected"
    assert failed[0].payload["action"] == "design"  # the failing action is named, whichever ran with it


def _start_worker(settings: Settings, base_url: str) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "DATABASE_URL": settings.database_url,
        "TEMPORAL_ADDRESS": settings.temporal_address,
        "TEMPORAL_TASK_QUEUE": settings.temporal_task_queue,
        "GROUNDWORK_LLM_BASE_URL": base_url,
        "GROUNDWORK_LLM_MODEL": "test-model",
    }
    return subprocess.Popen(
        [sys.executable, "-m", "groundwork.cli", "worker"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
    )


async def test_a_worker_killed_mid_run_is_replaced_and_the_run_finishes(
    settings: Settings, temporal_client: Any, workspace: Workspace, work_item: dict[str, Any]
) -> None:
    key = await workspace.key("owner", admin=True)
    script = Script(answer=ANSWER, delay_seconds=30)  # the first worker dies while the model "thinks"
    with chat_completions_endpoint(script) as base_url:
        async with (
            own_queue(settings, temporal_client, start_worker=False) as (url, local),
            httpx.AsyncClient(base_url=url) as http,
        ):
            first = _start_worker(local, base_url)
            try:
                run = (await create_run(http, workspace, key, work_item["id"], ["requirements"], wait=0)).json()["data"]
                assert await asyncio.to_thread(script.received.wait, 60), "the activity never called the model"
            finally:
                first.send_signal(signal.SIGKILL)
                first.wait(10)
            script.delay_seconds = 0
            second = _start_worker(local, base_url)
            try:
                for _ in range(300):
                    state = (
                        await http.get(f"/api/v1/work-item-enhancements/{run['id']}", headers=workspace.headers(key))
                    ).json()["data"]
                    if state["state"] != "queued" and state["state"] != "running":
                        break
                    await asyncio.sleep(0.1)
            finally:
                second.send_signal(signal.SIGTERM)
                second.wait(20)
    assert state["state"] == "ready_for_review"
    assert [d["field"] for d in state["drafts"]] == ["requirements"]
    assert len(script.requests) >= 2  # the killed attempt, then the retry on the new worker
