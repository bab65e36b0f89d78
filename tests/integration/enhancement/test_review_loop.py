"""The reviewer's loop: a run's apply history, rejecting a draft, cancelling a run, and runs whose workflow ended."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx
from prometheus_client import REGISTRY

from groundwork.config import Settings
from groundwork.domain.enhancement.enhancer import EnhancementContext
from groundwork.domain.enhancement.extractive import ExtractiveEnhancer
from groundwork.domain.enhancement.model import ActionOutput
from groundwork.persistence.repositories.platform import outbox
from groundwork.services.enhancement.run_sweeps import sweep_ended_workflows
from tests.conftest import Workspace, idem, mcp_session, tool_json
from tests.integration.enhancement.conftest import create_run, own_queue

BASE = "/api/v1/work-item-enhancements"


async def _event_types(workspace: Workspace, run_id: str) -> list[tuple[str, dict[str, Any]]]:
    return [(e.type, e.payload) for e in await outbox.events_for_workspace(workspace.id) if e.resource_id == run_id]


async def _apply(
    client: httpx.AsyncClient, workspace: Workspace, key: str, run_id: str, draft_ids: list[str], version: str
) -> httpx.Response:
    return await client.post(
        f"{BASE}/{run_id}/apply",
        json={"draft_ids": draft_ids, "expected_target_version": version, "confirm": True},
        headers=workspace.headers(key, **idem()),
    )


async def _reject(
    client: httpx.AsyncClient, workspace: Workspace, key: str, run_id: str, draft_id: str, **body: Any
) -> httpx.Response:
    return await client.post(
        f"{BASE}/{run_id}/drafts/{draft_id}/reject",
        json={"reason": "It repeats the description.", "confirm": True, **body},
        headers=workspace.headers(key, **idem()),
    )


async def test_the_apply_history_lists_each_apply_with_every_fields_value_before_and_after(
    api_url: str, client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    key = await workspace.key("owner", admin=True)
    run = (await create_run(client, workspace, key, work_item["id"], ["description", "estimate"])).json()["data"]
    by_field = {d["field"]: d for d in run["drafts"]}
    first = await _apply(client, workspace, key, run["id"], [by_field["description"]["id"]], work_item["version"])
    assert first.status_code == 200, first.text
    middle = first.json()["data"]["target"]["version"]
    second = await _apply(client, workspace, key, run["id"], [by_field["estimate"]["id"]], middle)
    assert second.status_code == 200, second.text
    last = second.json()["data"]["target"]["version"]

    listed = await client.get(f"{BASE}/{run['id']}/applies", headers=workspace.headers(key))
    assert listed.status_code == 200, listed.text
    applies = listed.json()["data"]
    assert [a["draftIds"] for a in applies] == [[by_field["description"]["id"]], [by_field["estimate"]["id"]]]
    assert [(a["targetVersionBefore"], a["targetVersionAfter"]) for a in applies] == [
        (work_item["version"], middle),
        (middle, last),
    ]
    assert applies[0]["changes"] == [
        {
            "field": "description",
            "draftId": by_field["description"]["id"],
            "before": work_item["fields"]["description"],
            "after": by_field["description"]["proposedValue"],
        }
    ]
    assert applies[1]["changes"] == [
        {
            "field": "estimate",
            "draftId": by_field["estimate"]["id"],
            "before": None,
            "after": by_field["estimate"]["proposedValue"],
        }
    ]
    owner_id = workspace.principals["owner"]
    assert all(a["actorId"] == owner_id and a["operationId"].startswith("apply_") for a in applies)
    assert applies[0]["appliedAt"] < applies[1]["appliedAt"]
    assert listed.json()["page"] == {"next_cursor": None, "has_more": False}

    # Keyset pages: one apply a page, the second page continues after the first.
    page_one = (await client.get(f"{BASE}/{run['id']}/applies?limit=1", headers=workspace.headers(key))).json()
    assert page_one["data"] == applies[:1] and page_one["page"]["has_more"]
    cursor = page_one["page"]["next_cursor"]
    page_two = (
        await client.get(
            f"{BASE}/{run['id']}/applies", params={"limit": 1, "cursor": cursor}, headers=workspace.headers(key)
        )
    ).json()
    assert page_two["data"] == applies[1:] and not page_two["page"]["has_more"]

    # The same through GraphQL (the run's `applies`) and MCP (`list_run_applies`).
    query = """query ($id: ID!) { workItemEnhancementRun(id: $id) { applies(first: 10) {
      nodes { operationId actorId draftIds targetVersionBefore targetVersionAfter
              changes { field draftId before after } }
      hasMore } } }"""
    answer = (
        await client.post(
            "/graphql", json={"query": query, "variables": {"id": run["id"]}}, headers=workspace.headers(key)
        )
    ).json()
    nodes = answer["data"]["workItemEnhancementRun"]["applies"]["nodes"]
    assert [(n["operationId"], n["targetVersionAfter"], n["changes"]) for n in nodes] == [
        (a["operationId"], a["targetVersionAfter"], a["changes"]) for a in applies
    ]
    async with mcp_session(api_url, key) as session:
        via_mcp = tool_json(await session.call_tool("list_run_applies", {"run_id": run["id"]}))
    assert via_mcp["data"] == applies


async def test_the_apply_history_of_a_run_the_caller_cannot_see_is_not_found(
    client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    key = await workspace.key("owner", admin=True)
    run = (await create_run(client, workspace, key, work_item["id"], ["estimate"])).json()["data"]
    outsider = await workspace.key("outsider", memberships={})
    answer = await client.get(f"{BASE}/{run['id']}/applies", headers=workspace.headers(outsider))
    assert answer.status_code == 404 and answer.json()["code"] == "not_found"
    forged = await client.get(f"{BASE}/{run['id']}/applies?cursor=eyJpZCI6MX0", headers=workspace.headers(key))
    assert forged.status_code == 400 and forged.json()["code"] == "invalid_request"


def _rejections(action: str, field: str) -> float:
    value = REGISTRY.get_sample_value(
        "groundwork_enhancement_draft_rejections_total", {"action": action, "field": field}
    )
    return value or 0.0


async def test_a_rejected_draft_shows_its_rejection_is_never_applied_and_is_counted(
    client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    key = await workspace.key("owner", admin=True)
    run = (await create_run(client, workspace, key, work_item["id"], ["description", "estimate"])).json()["data"]
    by_field = {d["field"]: d["id"] for d in run["drafts"]}
    counted = _rejections("description", "description")

    rejected = await _reject(client, workspace, key, run["id"], by_field["description"])
    assert rejected.status_code == 200, rejected.text
    draft = next(d for d in rejected.json()["data"]["drafts"] if d["id"] == by_field["description"])
    assert draft["applyEligible"] is False
    assert draft["ineligibleReason"] == "rejected: It repeats the description."
    assert draft["rejection"]["reason"] == "It repeats the description."
    assert draft["rejection"]["rejectedBy"] == workspace.principals["owner"] and draft["rejection"]["rejectedAt"]
    assert _rejections("description", "description") == counted + 1

    refused = await _apply(client, workspace, key, run["id"], [by_field["description"]], work_item["version"])
    assert refused.status_code == 422 and refused.json()["code"] == "draft_rejected"
    assert refused.json()["draft_ids"] == [by_field["description"]]
    item = (await client.get(f"/api/v1/work-items/{work_item['id']}", headers=workspace.headers(key))).json()["data"]
    assert item["version"] == work_item["version"]  # nothing was written

    events = [p for t, p in await _event_types(workspace, run["id"]) if t == "work_item_enhancement.draft_rejected"]
    assert len(events) == 1
    assert events[0]["draft_id"] == by_field["description"] and events[0]["reason"] == "It repeats the description."
    assert events[0]["field"] == "description" and events[0]["rejected_by"] == workspace.principals["owner"]

    again = await _reject(client, workspace, key, run["id"], by_field["description"])
    assert again.status_code == 409 and again.json()["code"] == "draft_not_rejectable"
    applied = await _apply(client, workspace, key, run["id"], [by_field["estimate"]], work_item["version"])
    assert applied.status_code == 200, applied.text
    after_apply = await _reject(client, workspace, key, run["id"], by_field["estimate"])
    assert after_apply.status_code == 409 and after_apply.json()["code"] == "draft_not_rejectable"
    assert _rejections("description", "description") == counted + 1  # refusals count nothing


async def test_a_rejection_needs_a_reason_and_confirm_through_every_transport(
    api_url: str, client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    key = await workspace.key("owner", admin=True)
    run = (await create_run(client, workspace, key, work_item["id"], ["description"])).json()["data"]
    draft_id = run["drafts"][0]["id"]
    too_long = await _reject(client, workspace, key, run["id"], draft_id, reason="x" * 501)
    assert too_long.status_code == 422 and too_long.json()["code"] == "validation_failed"
    unconfirmed = await _reject(client, workspace, key, run["id"], draft_id, confirm=False)
    assert unconfirmed.status_code == 422 and unconfirmed.json()["code"] == "confirmation_required"
    mutation = """mutation ($input: RejectDraftInput!) {
      rejectDraft(input: $input) { ok errors { code } run { drafts { id applyEligible rejection { reason } } } } }"""
    variables = {
        "input": {"runId": run["id"], "draftId": draft_id, "reason": "Too vague.", "idempotencyKey": uuid.uuid4().hex}
    }
    answer = (
        await client.post("/graphql", json={"query": mutation, "variables": variables}, headers=workspace.headers(key))
    ).json()["data"]["rejectDraft"]
    assert answer["ok"] is False and answer["errors"][0]["code"] == "confirmation_required"
    async with mcp_session(api_url, key) as session:
        via_mcp = tool_json(
            await session.call_tool(
                "reject_draft",
                {
                    "run_id": run["id"],
                    "draft_id": draft_id,
                    "reason": "Too vague.",
                    "confirm": True,
                    "idempotency_key": uuid.uuid4().hex,
                },
            )
        )
    [draft] = via_mcp["data"]["drafts"]
    assert draft["rejection"]["reason"] == "Too vague." and draft["applyEligible"] is False


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
        apply = await _apply(http, workspace, key, run_id, ["draft_anything"], work_item["version"])
        await asyncio.sleep(1.0)  # a late commit or a second failure event would show by now
        final = (await http.get(f"{BASE}/{run_id}", headers=workspace.headers(key))).json()["data"]
        item = (await http.get(f"/api/v1/work-items/{work_item['id']}", headers=workspace.headers(key))).json()
        handle = temporal_client.get_workflow_handle(run_id)
        description = await handle.describe()
    assert run["state"] == "cancelled" and run["error"]["code"] == "cancelled"
    assert [(a["state"], a["errorCode"]) for a in run["actions"]] == [("failed", "cancelled")]
    assert [a["id"] for a in run["allowedActions"]] == ["read"]  # nothing to run or apply
    assert final["state"] == "cancelled" and final["drafts"] == []
    assert item["data"] == work_item  # nothing applied
    assert again.status_code == 409 and again.json()["code"] == "run_not_cancellable"
    assert operation["status"] == "cancelled" and operation["error"]["code"] == "cancelled"
    assert action.status_code == 409 and action.json()["code"] == "run_not_reviewable"
    assert apply.status_code == 409 and apply.json()["code"] == "run_not_reviewable"
    assert description.status.name == "CANCELED"
    events = await _event_types(workspace, run_id)
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
    refused = await _apply(client, workspace, key, second["id"], [second["drafts"][0]["id"]], work_item["version"])
    assert refused.status_code == 409 and refused.json()["code"] == "run_not_reviewable"
    failed = [p for t, p in await _event_types(workspace, second["id"]) if t == "work_item_enhancement.failed"]
    assert [p["error_code"] for p in failed] == ["cancelled"]


async def test_a_terminated_workflows_run_is_swept_to_failed_once(
    client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any, temporal_client: Any
) -> None:
    key = await workspace.key("owner", admin=True)
    run = (await create_run(client, workspace, key, work_item["id"], ["estimate"])).json()["data"]
    assert run["state"] == "ready_for_review"
    await temporal_client.get_workflow_handle(run["id"]).terminate(reason="an operator's test")
    # Before the sweep, the operation already says how the workflow ended.
    operation = (await client.get(f"/api/v1/operations/{run['id']}", headers=workspace.headers(key))).json()["data"]
    assert operation["status"] == "failed"

    marked = 0
    for _ in range(100):  # Temporal's visibility lists the closed workflow a moment after it closed
        # Two workers sweeping at once, then again: the run is marked by exactly one of them, once.
        marked += sum(
            await asyncio.gather(sweep_ended_workflows(temporal_client), sweep_ended_workflows(temporal_client))
        )
        if marked:
            break
        await asyncio.sleep(0.1)
    marked += await sweep_ended_workflows(temporal_client)
    assert marked == 1

    swept = (await client.get(f"{BASE}/{run['id']}", headers=workspace.headers(key))).json()["data"]
    assert swept["state"] == "failed" and swept["error"]["code"] == "workflow_terminated"
    assert [a["id"] for a in swept["allowedActions"]] == ["read"]
    assert all(not d["applyEligible"] for d in swept["drafts"])
    operation = (await client.get(f"/api/v1/operations/{run['id']}", headers=workspace.headers(key))).json()["data"]
    assert operation["status"] == "failed" and operation["error"]["code"] == "workflow_terminated"
    failed = [p for t, p in await _event_types(workspace, run["id"]) if t == "work_item_enhancement.failed"]
    assert [p["error_code"] for p in failed] == ["workflow_terminated"]
