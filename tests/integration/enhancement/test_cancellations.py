"""services/enhancement/cancellations: a cancelled run stops its actions, applies nothing and fails once."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx
from temporalio.worker import Replayer

from groundwork.config import Settings
from groundwork.domain.enhancement.enhancer import EnhancementContext
from groundwork.domain.enhancement.extractive import ExtractiveEnhancer
from groundwork.domain.enhancement.model import ActionOutput
from groundwork.platform.temporal.payloads import data_converter
from groundwork.workflows.enhancement import ApplyDraftsWorkflow, EnhancementRunWorkflow
from tests.conftest import Workspace, idem, mcp_session, tool_json
from tests.integration.enhancement.conftest import apply, create_run, own_queue, run_events

BASE = "/api/v1/work-item-enhancements"


class SlowRemote:
    """A remote generator whose answer takes a long time: its actions run in their own, heartbeating activity."""

    name = "slow-remote"
    in_process = False

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.stopped = asyncio.Event()
        self.inner = ExtractiveEnhancer()

    async def enhance(self, context: EnhancementContext) -> ActionOutput:
        self.started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            self.stopped.set()
            raise
        return await self.inner.enhance(context)


async def test_cancelling_a_run_during_a_slow_action_stops_it_applies_nothing_and_fails_it_once(
    settings: Settings, temporal_client: Any, workspace: Workspace, work_item: dict[str, Any]
) -> None:
    key = await workspace.key("owner", admin=True)
    generator = SlowRemote()
    async with (
        own_queue(settings, temporal_client, generator) as (url, _),
        httpx.AsyncClient(base_url=url, timeout=30) as http,
    ):
        created = await create_run(http, workspace, key, work_item["id"], ["description"], wait=0)
        run_id = created.json()["data"]["id"]
        await asyncio.wait_for(generator.started.wait(), 20)
        cancelled = await http.post(
            f"{BASE}/{run_id}/cancel", json={"confirm": True}, headers=workspace.headers(key, **idem())
        )
        assert cancelled.status_code == 200, cancelled.text
        run = cancelled.json()["data"]
        # The activity is told at its next heartbeat: the generator stops instead of answering a minute later.
        await asyncio.wait_for(generator.stopped.wait(), 15)
        again = await http.post(
            f"{BASE}/{run_id}/cancel", json={"confirm": True}, headers=workspace.headers(key, **idem())
        )
        operation = (await http.get(f"/api/v1/operations/{run_id}", headers=workspace.headers(key))).json()["data"]
        action = await http.post(
            f"{BASE}/{run_id}/actions?wait=0",
            json={"action": "estimate", "confirm": True},
            headers=workspace.headers(key, **idem()),
        )
        applied = await apply(http, workspace, key, run_id, ["draft_anything"], work_item["version"])
        await asyncio.sleep(1.0)  # a late commit or a second failure event would show by now
        final = (await http.get(f"{BASE}/{run_id}", headers=workspace.headers(key))).json()["data"]
        item = (await http.get(f"/api/v1/work-items/{work_item['id']}", headers=workspace.headers(key))).json()
        handle = temporal_client.get_workflow_handle(run_id)
        description = await handle.describe()
        history = await handle.fetch_history()
    assert run["state"] == "cancelled" and run["error"]["code"] == "cancelled"
    assert [(a["state"], a["errorCode"]) for a in run["actions"]] == [("failed", "cancelled")]
    assert [a["id"] for a in run["allowedActions"]] == ["read"]  # nothing to run or apply
    assert final["state"] == "cancelled" and final["drafts"] == []
    assert item["data"] == work_item  # nothing applied
    assert again.status_code == 409 and again.json()["code"] == "run_not_cancellable"
    assert operation["status"] == "cancelled" and operation["error"]["code"] == "cancelled"
    assert action.status_code == 409 and action.json()["code"] == "run_not_reviewable"
    assert applied.status_code == 409 and applied.json()["code"] == "run_not_reviewable"
    assert description.status.name == "CANCELED"
    # The cancelled run's history replays on this code: its handling of the cancellation is deterministic.
    replayer = Replayer(workflows=[EnhancementRunWorkflow, ApplyDraftsWorkflow], data_converter=data_converter)
    replayed = await replayer.replay_workflow(history, raise_on_replay_failure=True)
    assert replayed.replay_failure is None
    events = await run_events(workspace, run_id)
    failed = [p for t, p in events if t == "work_item_enhancement.failed"]
    assert len(failed) == 1 and failed[0]["error_code"] == "cancelled" and failed[0]["action"] is None
    assert not [t for t, _ in events if t in ("work_item_enhancement.completed", "work_item_enhancement.applied")]


async def test_cancelling_a_reviewable_run_through_graphql_and_mcp(
    api_url: str, client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    key = await workspace.key("owner", admin=True)
    first = (await create_run(client, workspace, key, work_item["id"], ["estimate"])).json()["data"]
    second = (await create_run(client, workspace, key, work_item["id"], ["description"])).json()["data"]
    mutation = """mutation ($input: CancelEnhancementRunInput!) {
      cancelEnhancementRun(input: $input) { ok pending errors { code } run { state allowedActions { id } } } }"""
    variables = {"input": {"runId": first["id"], "confirm": True, "idempotencyKey": uuid.uuid4().hex}}
    answer = (
        await client.post("/graphql", json={"query": mutation, "variables": variables}, headers=workspace.headers(key))
    ).json()["data"]["cancelEnhancementRun"]
    assert answer["ok"] and not answer["pending"]
    assert answer["run"] == {"state": "cancelled", "allowedActions": [{"id": "read"}]}
    async with mcp_session(api_url, key) as session:
        via_mcp = tool_json(
            await session.call_tool(
                "cancel_enhancement_run",
                {"run_id": second["id"], "confirm": True, "idempotency_key": uuid.uuid4().hex},
            )
        )
    assert via_mcp["data"]["state"] == "cancelled"
    refused = await apply(client, workspace, key, second["id"], [second["drafts"][0]["id"]], work_item["version"])
    assert refused.status_code == 409 and refused.json()["code"] == "run_not_reviewable"
    failed = [p for t, p in await run_events(workspace, second["id"]) if t == "work_item_enhancement.failed"]
    assert [p["error_code"] for p in failed] == ["cancelled"]
