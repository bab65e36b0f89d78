"""Limits over a run's whole life, one error code per rule on every transport, and idempotent actions and applies."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import httpx

from groundwork.config import Settings
from groundwork.domain.enhancement.model import MAX_ACTIONS_PER_RUN
from groundwork.persistence import db
from groundwork.persistence.repositories.enhancement import applies
from groundwork.persistence.repositories.platform import outbox
from groundwork.services.enhancement.chat_completions import ChatCompletionsEnhancer
from tests.conftest import Workspace, idem, mcp_session, tool_json
from tests.fakes.chat_completions import Script, chat_completions_endpoint
from tests.integration.enhancement.conftest import create_run, own_queue, run_action


def _code(result: Any) -> str:
    """The stable code of a failed MCP tool call (its text carries the problem as JSON)."""
    text = result.content[0].text
    return str(json.loads(text[text.index("{") :])["code"])


def _answer(value: object) -> dict[str, Any]:
    return {"drafts": [{"value": value, "confidence": 0.7, "evidence": [1]}], "artifacts": []}


async def _abandon(api_key_id: str, key: str) -> None:
    """Make a finished idempotency record look like a claim whose process died before storing the answer."""
    await db.execute(
        "UPDATE idempotency_keys SET response_status = NULL, response_headers = NULL, response_body = NULL,"
        " locked_at = clock_timestamp() - interval '10 minutes' WHERE api_key_id = $1 AND key = $2",
        api_key_id,
        key,
    )


async def _api_key_id(key: str) -> str:
    from groundwork.services.tenancy import api_keys

    principal = await api_keys.resolve_key(key)
    assert principal is not None
    return principal.api_key_id


async def test_review_time_actions_obey_the_create_rules_and_the_cap_per_run(
    client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    key = await workspace.key("owner", admin=True)
    actions = ["requirements", "description", "design", "implementation_plan", "acceptance_criteria", "test_plan"]
    run = (await create_run(client, workspace, key, work_item["id"], [*actions, "estimate", "risk_check"])).json()
    run_id = run["data"]["id"]
    unknown = await run_action(client, workspace, key, run_id, "poetry")
    assert unknown.status_code == 422 and unknown.json()["code"] == "invalid_action"
    for _ in range(MAX_ACTIONS_PER_RUN - 8):
        response = await run_action(client, workspace, key, run_id, "estimate")
        assert response.status_code == 200, response.text
    over = await run_action(client, workspace, key, run_id, "estimate")
    assert over.status_code == 422 and over.json()["code"] == "invalid_action"
    assert f"at most {MAX_ACTIONS_PER_RUN}" in over.json()["detail"]
    after = (await client.get(f"/api/v1/work-item-enhancements/{run_id}", headers=workspace.headers(key))).json()
    assert len(after["data"]["actions"]) == MAX_ACTIONS_PER_RUN
    assert "run_action" not in [a["id"] for a in after["data"]["allowedActions"]]


async def test_a_repeat_of_a_pending_action_is_422_invalid_action_never_a_400(
    settings: Settings, temporal_client: Any, workspace: Workspace, work_item: dict[str, Any]
) -> None:
    key = await workspace.key("owner", admin=True)
    script = Script(answer=_answer("- Tokens only. [1]"))
    with chat_completions_endpoint(script) as base_url:
        enhancer = ChatCompletionsEnhancer(base_url, "test-model", None)
        async with (
            own_queue(settings, temporal_client, enhancer) as (url, _),
            httpx.AsyncClient(base_url=url, timeout=30) as http,
        ):
            run = (await create_run(http, workspace, key, work_item["id"], ["requirements"])).json()["data"]
            script.delay_seconds = 1.0
            # Sent together: one is accepted; the other is refused by the run (its Update) or the service.
            first, second = await asyncio.gather(
                run_action(http, workspace, key, run["id"], "design", wait=0),
                run_action(http, workspace, key, run["id"], "design", wait=0),
            )
            later = await run_action(http, workspace, key, run["id"], "design", wait=0)
    codes = sorted([first.status_code, second.status_code])
    assert codes == [202, 422], [first.text, second.text]
    refused = first if first.status_code == 422 else second
    assert refused.json()["code"] == "invalid_action"
    # The run is `running` because of that very action: refused as the repeat, never as a busy run or a 400.
    assert later.status_code == 422 and later.json()["code"] == "invalid_action", later.text


async def test_wait_out_of_range_is_the_same_error_on_rest_graphql_and_mcp(
    api_url: str, client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    key = await workspace.key("owner", admin=True)
    rest = await create_run(client, workspace, key, work_item["id"], ["estimate"], wait=31)
    assert rest.status_code == 422 and rest.json()["code"] == "validation_failed"
    mutation = """mutation ($input: CreateWorkItemEnhancementRunInput!) {
      createWorkItemEnhancementRun(input: $input) { ok errors { code path } } }"""
    variables = {
        "input": {
            "target": {"type": "work_item", "id": work_item["id"]},
            "actions": ["estimate"],
            "confirm": True,
            "idempotencyKey": uuid.uuid4().hex,
            "wait": -1,
        }
    }
    graph = (
        await client.post("/graphql", json={"query": mutation, "variables": variables}, headers=workspace.headers(key))
    ).json()["data"]["createWorkItemEnhancementRun"]
    assert graph["ok"] is False and graph["errors"] == [{"code": "validation_failed", "path": ["input", "wait"]}]
    async with mcp_session(api_url, key) as session:
        result = await session.call_tool(
            "create_enhancement_run",
            {
                "work_item_id": work_item["id"],
                "actions": ["estimate"],
                "confirm": True,
                "idempotency_key": uuid.uuid4().hex,
                "wait": 99,
            },
        )
    assert result.is_error and _code(result) == "validation_failed"
    listed = (
        await client.get(
            "/api/v1/work-item-enhancements", params={"target_id": work_item["id"]}, headers=workspace.headers(key)
        )
    ).json()["data"]
    assert listed == []  # nothing was created by any of them


async def test_actions_and_applies_replay_and_refuse_a_reused_key_over_rest(
    client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    key = await workspace.key("owner", admin=True)
    run = (await create_run(client, workspace, key, work_item["id"], ["requirements"])).json()["data"]
    action_key = {"Idempotency-Key": f"act-{uuid.uuid4().hex}"}
    first = await run_action(client, workspace, key, run["id"], "estimate", headers=action_key)
    again = await run_action(client, workspace, key, run["id"], "estimate", headers=action_key)
    other = await run_action(client, workspace, key, run["id"], "design", headers=action_key)
    assert first.status_code == 200 and again.content == first.content
    assert again.headers["idempotent-replayed"] == "true"
    assert other.status_code == 422 and other.json()["code"] == "idempotency_key_reused"
    estimate = next(d for d in first.json()["data"]["drafts"] if d["field"] == "estimate")
    apply_key = {"Idempotency-Key": f"apply-{uuid.uuid4().hex}"}
    body = {"draft_ids": [estimate["id"]], "expected_target_version": work_item["version"], "confirm": True}
    url = f"/api/v1/work-item-enhancements/{run['id']}/apply"
    applied = await client.post(url, json=body, headers=workspace.headers(key, **apply_key))
    replayed = await client.post(url, json=body, headers=workspace.headers(key, **apply_key))
    reused = await client.post(url, json={**body, "confirm": False}, headers=workspace.headers(key, **apply_key))
    assert applied.status_code == 200 and replayed.content == applied.content
    assert replayed.headers["idempotent-replayed"] == "true"
    assert reused.status_code == 422 and reused.json()["code"] == "idempotency_key_reused"
    assert len(await applies.list_applies(run["id"])) == 1


async def test_actions_and_applies_replay_and_refuse_a_reused_key_over_mcp(
    api_url: str, client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    key = await workspace.key("owner", admin=True)
    run = (await create_run(client, workspace, key, work_item["id"], ["requirements"])).json()["data"]
    async with mcp_session(api_url, key) as session:
        act = {"run_id": run["id"], "action": "estimate", "confirm": True, "idempotency_key": uuid.uuid4().hex}
        first = tool_json(await session.call_tool("run_enhancement_action", act))
        again = tool_json(await session.call_tool("run_enhancement_action", act))
        reused = await session.call_tool("run_enhancement_action", {**act, "action": "design"})
        assert first["idempotencyReplayed"] is False and again["idempotencyReplayed"] is True
        assert again["data"]["id"] == first["data"]["id"] and len(again["data"]["actions"]) == 2
        assert reused.is_error and _code(reused) == "idempotency_key_reused"
        estimate = next(d for d in first["data"]["drafts"] if d["field"] == "estimate")
        apply = {
            "run_id": run["id"],
            "draft_ids": [estimate["id"]],
            "expected_target_version": work_item["version"],
            "confirm": True,
            "idempotency_key": uuid.uuid4().hex,
        }
        applied = tool_json(await session.call_tool("apply_drafts", apply))
        replayed = tool_json(await session.call_tool("apply_drafts", apply))
        other = await session.call_tool("apply_drafts", {**apply, "draft_ids": [run["drafts"][0]["id"]]})
    assert applied["data"]["state"] == "applied" and replayed["idempotencyReplayed"] is True
    assert other.is_error and _code(other) == "idempotency_key_reused"
    assert len(await applies.list_applies(run["id"])) == 1


async def test_a_retry_after_an_abandoned_claim_replays_the_first_outcome_instead_of_acting_again(
    client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    key = await workspace.key("owner", admin=True)
    api_key_id = await _api_key_id(key)
    run = (await create_run(client, workspace, key, work_item["id"], ["requirements"])).json()["data"]
    action_key = f"act-{uuid.uuid4().hex}"
    first = await run_action(client, workspace, key, run["id"], "estimate", headers={"Idempotency-Key": action_key})
    assert first.status_code == 200
    await _abandon(api_key_id, action_key)  # the process died before storing the answer
    retried = await run_action(client, workspace, key, run["id"], "estimate", headers={"Idempotency-Key": action_key})
    assert retried.status_code == 200
    assert len(retried.json()["data"]["actions"]) == 2  # the action ran once, not twice
    assert len([d for d in retried.json()["data"]["drafts"] if d["field"] == "estimate"]) == 1

    estimate = next(d for d in first.json()["data"]["drafts"] if d["field"] == "estimate")
    apply_key = f"apply-{uuid.uuid4().hex}"
    body = {"draft_ids": [estimate["id"]], "expected_target_version": work_item["version"], "confirm": True}
    url = f"/api/v1/work-item-enhancements/{run['id']}/apply"
    applied = await client.post(url, json=body, headers=workspace.headers(key, **{"Idempotency-Key": apply_key}))
    assert applied.status_code == 200
    version = applied.json()["data"]["target"]["version"]
    await _abandon(api_key_id, apply_key)
    retried_apply = await client.post(url, json=body, headers=workspace.headers(key, **{"Idempotency-Key": apply_key}))
    # The retry names the same Update: its first outcome, not a second apply (nor a stale-version 409).
    assert retried_apply.status_code == 200, retried_apply.text
    assert retried_apply.json()["data"]["target"]["version"] == version
    assert len(await applies.list_applies(run["id"])) == 1
    applied_events = [
        e
        for e in await outbox.events_for_workspace(workspace.id)
        if e.resource_id == run["id"] and e.type == "work_item_enhancement.applied"
    ]
    assert len(applied_events) == 1


async def test_a_draft_whose_value_a_patch_would_refuse_is_not_eligible_and_cannot_be_applied(
    settings: Settings, temporal_client: Any, workspace: Workspace, work_item: dict[str, Any]
) -> None:
    key = await workspace.key("owner", admin=True)
    script = Script(answer=_answer(5000))  # more story points than a work item may hold
    with chat_completions_endpoint(script) as base_url:
        enhancer = ChatCompletionsEnhancer(base_url, "test-model", None)
        async with (
            own_queue(settings, temporal_client, enhancer) as (url, _),
            httpx.AsyncClient(base_url=url, timeout=30) as http,
        ):
            run = (await create_run(http, workspace, key, work_item["id"], ["estimate"])).json()["data"]
            [draft] = run["drafts"]
            patch = await http.patch(
                f"/api/v1/work-items/{work_item['id']}",
                json={"expected_version": work_item["version"], "fields": {"estimate": 5000}},
                headers=workspace.headers(key),
            )
            applied = await http.post(
                f"/api/v1/work-item-enhancements/{run['id']}/apply",
                json={"draft_ids": [draft["id"]], "expected_target_version": work_item["version"], "confirm": True},
                headers=workspace.headers(key, **idem()),
            )
            prepared = await http.post(
                f"/api/v1/work-item-enhancements/{run['id']}/apply",
                json={"draft_ids": [draft["id"]]},
                headers=workspace.headers(key, **idem()),
            )
            item = (await http.get(f"/api/v1/work-items/{work_item['id']}", headers=workspace.headers(key))).json()
    assert patch.status_code == 422  # the rule both paths share
    assert draft["proposedValue"] == 5000 and draft["applyEligible"] is False
    assert draft["ineligibleReason"] == "the proposed value must be between 0 and 1000"
    assert "apply" not in [a["id"] for a in run["allowedActions"]]
    assert applied.status_code == 422 and applied.json()["code"] == "draft_not_eligible"
    assert applied.json()["reasons"] == {draft["id"]: "the proposed value must be between 0 and 1000"}
    assert prepared.status_code == 422 and prepared.json()["code"] == "draft_not_eligible"
    assert item["data"] == work_item  # nothing changed


async def test_a_boolean_is_not_a_number_of_story_points(
    settings: Settings, temporal_client: Any, workspace: Workspace, work_item: dict[str, Any]
) -> None:
    key = await workspace.key("owner", admin=True)
    with chat_completions_endpoint(Script(answer=_answer(True))) as base_url:
        enhancer = ChatCompletionsEnhancer(base_url, "test-model", None)
        async with (
            own_queue(settings, temporal_client, enhancer) as (url, _),
            httpx.AsyncClient(base_url=url, timeout=30) as http,
        ):
            run = (await create_run(http, workspace, key, work_item["id"], ["estimate"])).json()["data"]
    assert run["state"] == "ready_for_review" and run["drafts"] == []
    digest = next(a for a in run["artifacts"] if a["type"] == "evidence_digest")
    assert "No draft for estimate" in digest["summary"]
