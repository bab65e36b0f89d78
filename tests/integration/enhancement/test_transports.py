"""GraphQL and MCP return the same run as REST, with the same scopes and confirmation rules."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from tests.conftest import Workspace, mcp_session, tool_json
from tests.integration.enhancement.conftest import create_run

RUN_QUERY = """
query ($id: ID!) {
  workItemEnhancementRun(id: $id) {
    id state target { id key title version } requestedActions
    drafts { id action field proposedValue confidence evidenceRefs { kind id href } applyEligible }
    artifacts { id type title summary }
    allowedActions { id label requiredScope }
    appliedDraftIds
    operation { status runState temporal { workflowId } }
  }
}
"""


def _rest_as_graphql(run: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": run["id"],
        "state": run["state"],
        "target": run["target"],
        "requestedActions": run["requestedActions"],
        "drafts": [
            {k: d[k] for k in ("id", "action", "field", "proposedValue", "confidence", "evidenceRefs", "applyEligible")}
            for d in run["drafts"]
        ],
        "artifacts": [{k: a[k] for k in ("id", "type", "title", "summary")} for a in run["artifacts"]],
        "allowedActions": run["allowedActions"],
        "appliedDraftIds": run["appliedDraftIds"],
    }


async def test_graphql_and_mcp_return_the_run_rest_returns(
    api_url: str, client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    key = await workspace.key("owner", admin=True)
    run = (await create_run(client, workspace, key, work_item["id"], ["requirements", "test_plan"])).json()["data"]
    response = await client.post(
        "/graphql", json={"query": RUN_QUERY, "variables": {"id": run["id"]}}, headers=workspace.headers(key)
    )
    graph = response.json()["data"]["workItemEnhancementRun"]
    operation = graph.pop("operation")
    assert graph == _rest_as_graphql(run)
    assert operation["status"] == "succeeded" and operation["temporal"]["workflowId"] == run["id"]
    async with mcp_session(api_url, key) as session:
        via_mcp = tool_json(await session.call_tool("get_enhancement_run", {"run_id": run["id"]}))
        assert via_mcp["data"] == run
        listed = tool_json(await session.call_tool("list_enhancement_runs", {"target_id": work_item["id"]}))
        assert [r["id"] for r in listed["data"]] == [run["id"]]


async def test_graphql_create_and_apply_with_replay(
    client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    key = await workspace.key("owner", admin=True)
    mutation = """
    mutation ($input: CreateWorkItemEnhancementRunInput!) {
      createWorkItemEnhancementRun(input: $input) {
        ok idempotencyReplayed errors { code message path }
        run { id state target { id key title version } requestedActions
              drafts { id action field proposedValue applyEligible } artifacts { id type title summary } }
      }
    }"""
    variables = {
        "input": {
            "target": {"type": "work_item", "id": work_item["id"]},
            "actions": ["description"],
            "confirm": True,
            "idempotencyKey": f"gql-{uuid.uuid4().hex}",
            "wait": 20,
        }
    }
    first = (
        await client.post("/graphql", json={"query": mutation, "variables": variables}, headers=workspace.headers(key))
    ).json()["data"]["createWorkItemEnhancementRun"]
    again = (
        await client.post("/graphql", json={"query": mutation, "variables": variables}, headers=workspace.headers(key))
    ).json()["data"]["createWorkItemEnhancementRun"]
    assert first["ok"] and not first["idempotencyReplayed"] and first["run"]["state"] == "ready_for_review"
    assert again["ok"] and again["idempotencyReplayed"] and again["run"]["id"] == first["run"]["id"]
    unconfirmed = dict(variables["input"], confirm=False, idempotencyKey=f"gql-{uuid.uuid4().hex}")
    refused = (
        await client.post(
            "/graphql", json={"query": mutation, "variables": {"input": unconfirmed}}, headers=workspace.headers(key)
        )
    ).json()["data"]["createWorkItemEnhancementRun"]
    assert refused["ok"] is False and refused["errors"][0]["code"] == "confirmation_required"

    apply = """
    mutation ($input: ApplyWorkItemEnhancementDraftsInput!) {
      applyWorkItemEnhancementDrafts(input: $input) {
        ok idempotencyReplayed errors { code message path }
        run { id state appliedDraftIds target { id key title version } }
      }
    }"""
    draft_id = first["run"]["drafts"][0]["id"]
    stale = {
        "runId": first["run"]["id"],
        "draftIds": [draft_id],
        "expectedTargetVersion": "2001-01-01T00:00:00Z",
        "confirm": True,
        "idempotencyKey": f"gql-{uuid.uuid4().hex}",
    }
    rejected = (
        await client.post(
            "/graphql", json={"query": apply, "variables": {"input": stale}}, headers=workspace.headers(key)
        )
    ).json()["data"]["applyWorkItemEnhancementDrafts"]
    assert rejected["ok"] is False and rejected["errors"][0]["code"] == "target_version_mismatch"
    good = dict(stale, expectedTargetVersion=work_item["version"], idempotencyKey=f"gql-{uuid.uuid4().hex}")
    applied = (
        await client.post(
            "/graphql", json={"query": apply, "variables": {"input": good}}, headers=workspace.headers(key)
        )
    ).json()["data"]["applyWorkItemEnhancementDrafts"]
    assert applied["ok"] and applied["run"]["state"] == "applied" and applied["run"]["appliedDraftIds"] == [draft_id]


async def test_mcp_prepare_then_apply_with_confirmation(
    api_url: str, client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    key = await workspace.key("owner", admin=True)
    async with mcp_session(api_url, key) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert {
            "list_enhancement_runs",
            "create_enhancement_run",
            "get_enhancement_run",
            "run_enhancement_action",
            "list_enhancement_drafts",
            "list_enhancement_artifacts",
            "get_operation_status",
            "prepare_apply",
            "apply_drafts",
        } <= tools.keys()
        assert tools["apply_drafts"].annotations.destructive_hint is True
        assert tools["prepare_apply"].annotations.read_only_hint is True
        assert "confirm" in tools["apply_drafts"].input_schema["required"]
        created = tool_json(
            await session.call_tool(
                "create_enhancement_run",
                {
                    "work_item_id": work_item["id"],
                    "actions": ["estimate"],
                    "confirm": True,
                    "idempotency_key": uuid.uuid4().hex,
                    "wait": 20,
                },
            )
        )
        run = created["data"]
        draft_id = run["drafts"][0]["id"]
        prepared = tool_json(await session.call_tool("prepare_apply", {"run_id": run["id"], "draft_ids": [draft_id]}))
        assert prepared["data"]["currentVersion"] == work_item["version"]
        assert prepared["data"]["diff"][0]["field"] == "estimate"
        unconfirmed = await session.call_tool(
            "apply_drafts",
            {
                "run_id": run["id"],
                "draft_ids": [draft_id],
                "expected_target_version": work_item["version"],
                "confirm": False,
                "idempotency_key": uuid.uuid4().hex,
            },
        )
        assert unconfirmed.is_error and "confirmation_required" in unconfirmed.content[0].text
        done = tool_json(
            await session.call_tool(
                "apply_drafts",
                {
                    "run_id": run["id"],
                    "draft_ids": [draft_id],
                    "expected_target_version": prepared["data"]["currentVersion"],
                    "confirm": True,
                    "idempotency_key": uuid.uuid4().hex,
                },
            )
        )
        assert done["data"]["state"] == "applied"
    item = (await client.get(f"/api/v1/work-items/{work_item['id']}", headers=workspace.headers(key))).json()["data"]
    assert item["fields"]["estimate"] == prepared["data"]["diff"][0]["proposedValue"]


async def test_mcp_tools_enforce_the_same_scopes(api_url: str, workspace: Workspace, work_item: dict[str, Any]) -> None:
    key = await workspace.key("reader", ["work-item-enhance:read"], admin=True)
    async with mcp_session(api_url, key) as session:
        refused = await session.call_tool(
            "create_enhancement_run",
            {"work_item_id": work_item["id"], "actions": ["estimate"], "confirm": True, "idempotency_key": "k"},
        )
        assert refused.is_error and "work-item-enhance:run" in refused.content[0].text
